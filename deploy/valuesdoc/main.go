// Command valuesdoc rewrites the chart's values table in the markdown file
// named by its argument (docs/deploy.md) from
// deploy/helm/shipgraph/values.yaml: make chart-docs.
package main

import (
	"fmt"
	"os"

	"shipgraph/deploy"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: valuesdoc docs/deploy.md")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "valuesdoc:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	values, err := os.ReadFile("deploy/helm/shipgraph/values.yaml")
	if err != nil {
		return err
	}
	table, err := deploy.ValuesTable(values)
	if err != nil {
		return err
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, ok := deploy.ReplaceTable(doc, table)
	if !ok {
		return fmt.Errorf("%s: no values markers (%q … %q)", path, deploy.BeginMarker, deploy.EndMarker)
	}
	return os.WriteFile(path, out, 0o644)
}
