package db

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Only reads may go to a replica: the store methods that send their
// statements through a read scope (DB.read) contain no data-modifying
// statement, row lock or sequence, and those with a write scope
// (DB.write) have something to write. The SQL text decides nothing at run
// time; this checks, once, that each method says what it does.
func TestScopesSayWhatMethodsDo(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	// pg_logical_emit_message (transactional) writes WAL and commits:
	// the standby barrier (standby.go), which must reach the primary.
	writes := regexp.MustCompile(`\b(INSERT|UPDATE|DELETE)\b|FOR (UPDATE|NO KEY UPDATE|SHARE|KEY SHARE)|nextval|pg_logical_emit_message`)
	fset := token.NewFileSet()
	var reads, writers int
	// A method may hand its scope to a function of the package that
	// sends the statements (UpsertVessels to upsertVessels): what a
	// function's body does includes what the package functions it calls
	// do, one call deep.
	type does struct {
		sql  string
		exec bool
	}
	funcs := map[string]does{}
	var parsed []*ast.File
	var names []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed, names = append(parsed, f), append(names, name)
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil && fn.Recv == nil {
				var d does
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.SelectorExpr:
						d.exec = d.exec || n.Sel.Name == "ExecContext"
					case *ast.BasicLit:
						if n.Kind == token.STRING {
							d.sql += n.Value
						}
					}
					return true
				})
				funcs[fn.Name.Name] = d
			}
		}
	}
	for i, name := range names {
		f := parsed[i]
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			var scopes []string
			var sql strings.Builder
			exec := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == "db" && (n.Sel.Name == "read" || n.Sel.Name == "write" || n.Sel.Name == "readPrimary") {
						// readPrimary is a read that must see the primary:
						// held to the read rules.
						scopes = append(scopes, strings.TrimSuffix(n.Sel.Name, "Primary"))
					}
					if x, ok := n.X.(*ast.Ident); ok && x.Name == "db" && n.Sel.Name == "q" && name != "db.go" && name != "columns.go" {
						t.Errorf("%s: %s sends through db.q: say what it does with db.read(account) or db.write(account)", name, fn.Name.Name)
					}
					if n.Sel.Name == "ExecContext" {
						exec = true
					}
				case *ast.BasicLit:
					if n.Kind == token.STRING {
						sql.WriteString(n.Value)
					}
				case *ast.CallExpr:
					if id, ok := n.Fun.(*ast.Ident); ok {
						if d, ok := funcs[id.Name]; ok {
							sql.WriteString(d.sql)
							exec = exec || d.exec
						}
					}
				}
				return true
			})
			for _, sc := range scopes {
				switch {
				case sc == "read" && (exec || writes.MatchString(sql.String())):
					t.Errorf("%s: %s reads through DB.read but writes or locks: use DB.write", name, fn.Name.Name)
				case sc == "write" && !exec && !writes.MatchString(sql.String()):
					t.Errorf("%s: %s writes through DB.write but only reads: use DB.read", name, fn.Name.Name)
				case sc == "read":
					reads++
				default:
					writers++
				}
			}
		}
	}
	if reads < 50 || writers < 10 {
		t.Errorf("found %d read and %d write scopes: the check did not see the store's methods", reads, writers)
	}
}

// A replica has a write when it replayed past it; a position just past a
// WAL page (or segment) header is reached at the page's start.
func TestCaughtUp(t *testing.T) {
	for _, c := range []struct {
		replay, need uint64
		want         bool
	}{
		{100, 100, true},
		{101, 100, true},
		{99, 100, false},
		{0, 0, true},
		{3 * walPageSize, 3*walPageSize + walShortHeader, true},
		{3*walPageSize - 8, 3*walPageSize + walShortHeader, false},
		{2 * walSegmentSize, 2*walSegmentSize + walLongHeader, true},
		{2*walSegmentSize + 16, 2*walSegmentSize + walLongHeader, true},
		{2*walSegmentSize - 8, 2*walSegmentSize + walLongHeader, false},
	} {
		if got := caughtUp(c.replay, c.need); got != c.want {
			t.Errorf("caughtUp(%d, %d) = %v, want %v", c.replay, c.need, got, c.want)
		}
	}
}

// Lag is the age of the oldest primary position the replica has not
// replayed.
func TestLagOf(t *testing.T) {
	now := time.Now()
	r := &router{samples: []walSample{{now.Add(-3 * time.Second), 100}, {now.Add(-2 * time.Second), 200}, {now.Add(-time.Second), 300}}}
	for replay, want := range map[uint64]time.Duration{50: 3 * time.Second, 100: 2 * time.Second, 250: time.Second, 300: 0, 400: 0} {
		if got := r.lagOf(replay, now); got != want {
			t.Errorf("lagOf(%d) = %v, want %v", replay, got, want)
		}
	}
}

// A replica on another timeline than the primary's is not usable, however
// far it replayed; an unknown timeline (either side) is not compared.
func TestUsableTimeline(t *testing.T) {
	now := time.Now()
	rep := &replica{}
	rep.up.Store(true)
	rep.okAt.Store(now.UnixNano())
	for _, c := range []struct {
		replica, primary uint32
		want             bool
	}{{1, 1, true}, {1, 2, false}, {2, 2, true}, {3, 2, false}, {0, 2, true}, {1, 0, true}} {
		rep.tli.Store(c.replica)
		if got := rep.usable(time.Second, now, c.primary); got != c.want {
			t.Errorf("replica on timeline %d, primary on %d: usable %v, want %v", c.replica, c.primary, got, c.want)
		}
	}
}

// A replica's name in /readyz and logs has no password.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://app:secret@replica1:5432/shipgraph?sslmode=require": "replica1:5432/shipgraph",
		"postgres://postgres@/shipgraph?host=%2Ftmp%2Fsock&port=5432":   "/tmp/sock:5432/shipgraph",
		"host=replica2 dbname=shipgraph password=secret":                "replica2/shipgraph",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}
