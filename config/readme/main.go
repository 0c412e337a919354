// Command readme rewrites the settings table of the markdown file named by
// its argument (docs/settings.md) from the declaration (package config):
// make settings, or go generate ./config.
package main

import (
	"fmt"
	"os"

	"shipgraph/config"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: readme docs/settings.md")
		os.Exit(2)
	}
	path := os.Args[1]
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, ok := config.ReplaceTable(string(b))
	if !ok {
		fmt.Fprintf(os.Stderr, "%s: no settings markers (%q … %q)\n", path, config.BeginMarker, config.EndMarker)
		os.Exit(1)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
