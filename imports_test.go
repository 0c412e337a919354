package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportRules holds the house's package rules (the design notes kept
// beside the repository, ../shared/DESIGN.md: "rest/ never imports db/. The
// model imports nothing of ours"; "one composition root") against the
// imports of the code as it builds (go list; test files aside): the model
// is a leaf, rest/ imports neither db/ nor graph/, graph/ does not import
// db/ (only the resolver layer and the wiring touch the store), and the
// layers below the adapters know neither adapter.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "shipgraph/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		imports[f[0]] = f[1:]
	}
	// under reports whether pkg is root or below it.
	under := func(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }
	rules := []struct {
		pkg    string   // the package and those below it
		except []string // packages below pkg the rule spares (test harnesses)
		never  []string // what none of them may import (and what is below it)
	}{
		{pkg: "shipgraph/model", never: []string{"shipgraph"}},
		// The test kit (server harness, clients, waits) is imported by tests
		// only: no package that builds the binary reaches it.
		{pkg: "shipgraph", except: []string{"shipgraph/testkit"}, never: []string{"shipgraph/testkit"}},
		// The declaration of settings is read by every layer: it reads none.
		{pkg: "shipgraph/config", except: []string{"shipgraph/config/readme"}, never: []string{"shipgraph"}},
		// The composition root builds the process; the verbs call it; only
		// main picks a verb. Nothing they build knows them (no arrow back up).
		{pkg: "shipgraph/app", never: []string{"shipgraph/verb"}},
		{pkg: "shipgraph/httpapi", never: []string{"shipgraph/app", "shipgraph/verb"}},
		{pkg: "shipgraph/webhook", never: []string{"shipgraph/app", "shipgraph/verb", "shipgraph/httpapi"}},
		{pkg: "shipgraph/db", never: []string{"shipgraph/app", "shipgraph/verb", "shipgraph/httpapi", "shipgraph/config", "shipgraph/docproc", "shipgraph/carrier/tracking"}},
		{pkg: "shipgraph/rest", never: []string{"shipgraph/db", "shipgraph/graph"}},
		{pkg: "shipgraph/graph", never: []string{"shipgraph/db", "shipgraph/rest"}},
		// One way through (issue 25): /v2 hands the resolver layer its load
		// plan as GraphQL does; it never runs loaders or plans itself.
		{pkg: "shipgraph/rest", never: []string{"shipgraph/load"}},
		// The JSON:API protocol knows the model's errors, not the resources.
		{pkg: "shipgraph/rest/jsonapi", never: []string{"shipgraph/resolve", "shipgraph/catalog", "shipgraph/rest"}},
		{pkg: "shipgraph/resolve", never: []string{"shipgraph/graph", "shipgraph/rest", "shipgraph/httpapi"}},
		// The MCP server reaches data only through its GraphQL operations,
		// served by the chain it is handed: no resolver, loader or store.
		{pkg: "shipgraph/mcp", never: []string{"shipgraph/db", "shipgraph/resolve", "shipgraph/load", "shipgraph/rest", "shipgraph/graph", "shipgraph/httpapi"}},
		{pkg: "shipgraph/load", never: []string{"shipgraph/resolve", "shipgraph/graph", "shipgraph/rest"}},
		{pkg: "shipgraph/live", never: []string{"shipgraph/graph", "shipgraph/rest", "shipgraph/resolve"}},
		{pkg: "shipgraph/webhook", never: []string{"shipgraph/graph", "shipgraph/rest", "shipgraph/resolve"}},
		// The connector and the carrier simulator share only the standard (and carrier/numbers).
		{pkg: "shipgraph/carrier/dcsa", never: []string{"shipgraph/carrier/sim", "shipgraph/db", "shipgraph/model", "shipgraph/resolve"}},
		{pkg: "shipgraph/carrier/sim", never: []string{"shipgraph/carrier/dcsa", "shipgraph/resolve", "shipgraph/model"}},
	}
	for _, r := range rules {
		seen := false
	pkgs:
		for pkg, imps := range imports {
			if !under(pkg, r.pkg) {
				continue
			}
			for _, e := range r.except {
				if under(pkg, e) {
					continue pkgs
				}
			}
			seen = true
			for _, imp := range imps {
				for _, n := range r.never {
					if imp == n || strings.HasPrefix(imp, n+"/") {
						t.Errorf("%s imports %s: %s never may", pkg, imp, r.pkg)
					}
				}
			}
		}
		if !seen {
			t.Errorf("no package %s: the rule checks nothing", r.pkg)
		}
	}
}

// TestGraphReachesNoStore: graph does not import db (TestImportRules), nor
// reach the store through the resolver layer's handle (r.Res.DB): it goes
// through resolve's methods, which take the principal (issue 25).
func TestGraphReachesNoStore(t *testing.T) {
	files, err := filepath.Glob("graph/*.go")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("graph/gqlhttp/*.go")
	checked := 0
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(src, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "DB" {
				if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "Res" {
					t.Errorf("%s: %s.DB reaches the store past the resolver layer", f, inner.Sel.Name)
				}
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no graph sources: the rule checks nothing")
	}
}
