// Command budgetsdoc rewrites the statement-budget table of each markdown
// file named by its arguments from package budgets: make budgets.
package main

import (
	"fmt"
	"os"

	"shipgraph/testkit/budgets"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: budgetsdoc docs/scale.md …")
		os.Exit(2)
	}
	for _, path := range os.Args[1:] {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		out, ok := budgets.Replace(string(b))
		if !ok {
			fmt.Fprintf(os.Stderr, "%s: no budget markers (%q … %q)\n", path, budgets.BeginMarker, budgets.EndMarker)
			os.Exit(1)
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
