package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"
)

// The plugin's tests run it on testdata/fixture: a small schema and model
// with what the fast path must handle (Go fields, methods with arguments
// and context, resolvers, an interface, a union, enums, a custom scalar, a
// nested list, a value reached on several paths) and what it must leave to
// gqlgen (a field directive, a batch resolver, a map). The fixture is
// copied into a module of its own (this repository's go.mod under another
// name, so the same versions, offline), generated there with gqlgen and
// the plugin, beside a copy of the fast path's runtime
// (graph/executor/fastpath.go), and then
//
//   - the emitted file is read: each writer and object function once, the
//     refused fields absent from their switches;
//   - the module is built and vetted;
//   - the fixture's own test (testdata/fixture/executor/fixture_test.go)
//     runs queries through gqlgen's handler with and without the fast path
//     and wants the same bytes, written or handed over as it should.

// fixture generates the fixture into a fresh module, with schema files
// extra added, and returns the module's directory.
func fixture(t *testing.T, extra map[string]string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("generates and builds a module")
	}
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "fixture"), dir)
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod = regexp.MustCompile(`(?m)^module .*$`).ReplaceAll(mod, []byte("module fixture"))
	write(t, filepath.Join(dir, "go.mod"), mod)
	copyFile(t, filepath.Join("..", "..", "go.sum"), filepath.Join(dir, "go.sum"))
	copyFile(t, filepath.Join("..", "..", "graph", "executor", "fastpath.go"), filepath.Join(dir, "executor", "fastpath.go"))
	cfgFile := filepath.Join(dir, "gqlgen.yml")
	for name, src := range extra {
		write(t, filepath.Join(dir, name), []byte(src))
		cfg, _ := os.ReadFile(cfgFile)
		write(t, cfgFile, bytes.Replace(cfg, []byte("  - schema.graphqls\n"), []byte("  - schema.graphqls\n  - "+name+"\n"), 1))
	}

	// gqlgen loads packages with `go list` in the working directory.
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")
	t.Chdir(dir)
	cfg, err := config.LoadConfig("gqlgen.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := api.Generate(cfg, api.AddPlugin(fastPath{filename: "executor/fastpath.gen.go"})); err != nil {
		t.Fatalf("generate: %v", err)
	}
	return dir
}

// TestFastPathPlugin checks what the plugin emits for the fixture and
// that it builds and answers as gqlgen does.
func TestFastPathPlugin(t *testing.T) {
	dir := fixture(t, nil)
	funcs, cases := emitted(t, filepath.Join(dir, "executor", "fastpath.gen.go"))

	// Each function once, and every object, interface and union the query
	// root reaches has one.
	seen := map[string]int{}
	for _, f := range funcs {
		seen[f]++
	}
	for name, n := range seen {
		if n > 1 {
			t.Errorf("%s is written %d times", name, n)
		}
	}
	for _, want := range []string{"o_Thing", "o_Owner", "o_Node", "o_Pet", "rootField", "fastUnmarshalers",
		"root_Query_hello", "root_Query_things", "root_Query_node", "root_Query_pet", "root_Query_matrix", "root_Query_meta"} {
		if seen[want] == 0 {
			t.Errorf("no function %s; emitted %v", want, funcs)
		}
	}

	// What the fast path reads, and what it leaves to gqlgen: fields with
	// a directive (shout, loud) and the batch resolver (byBatch) have no
	// case, so the switch hands them over.
	want := map[string][]string{
		"rootField": {"__typename", "fail", "hello", "matrix", "meta", "node", "pet", "thing", "things"},
		"o_Thing":   {"__typename", "created", "id", "kind", "name", "owner", "score", "tags", "twin"},
		"o_Owner":   {"__typename", "email", "id", "things"},
	}
	for fn, names := range want {
		if got := cases[fn]; !slices.Equal(got, names) {
			t.Errorf("%s writes %v, want %v", fn, got, names)
		}
	}

	// The module builds, vets clean, and its test holds the fast path to
	// gqlgen's executor byte for byte.
	for _, args := range [][]string{{"vet", "./..."}, {"test", "-count=1", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go %s in the generated module: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestFastPathPluginFieldDirective: a directive that a query may put on a
// field (location FIELD) can change any field's value, so the emitted
// root hands every operation over.
func TestFastPathPluginFieldDirective(t *testing.T) {
	dir := fixture(t, map[string]string{"trace.graphqls": "directive @trace on FIELD\n"})
	src, err := os.ReadFile(filepath.Join(dir, "executor", "fastpath.gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	funcs, cases := emitted(t, filepath.Join(dir, "executor", "fastpath.gen.go"))
	if len(cases["rootField"]) != 0 || !bytes.Contains(src, []byte("func (f *fastWriter) rootField(field graphql.CollectedField) bool {\n\treturn false\n}")) {
		t.Errorf("with a FIELD directive in the schema rootField must hand every operation over; it writes %v", cases["rootField"])
	}
	for _, f := range funcs {
		if strings.HasPrefix(f, "o_") || strings.HasPrefix(f, "root_") {
			t.Errorf("with a FIELD directive nothing is written, but %s is", f)
		}
	}
}

// emitted parses a generated file and returns its function names and, for
// each, the string constants of its switch cases, sorted.
func emitted(t *testing.T, path string) (funcs []string, cases map[string][]string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatalf("the emitted file does not parse: %v", err)
	}
	cases = map[string][]string{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name := fd.Name.Name
		funcs = append(funcs, name)
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			cc, ok := n.(*ast.CaseClause)
			if !ok {
				return true
			}
			for _, e := range cc.List {
				if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					cases[name] = append(cases[name], s)
				}
			}
			return true
		})
		sort.Strings(cases[name])
	}
	return funcs, cases
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		copyFile(t, path, filepath.Join(to, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	write(t, to, b)
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
