package gqlhttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"shipgraph/graph/executor"
	"shipgraph/graph/gqlhttp"
	"shipgraph/testkit"
)

// fieldLog is a field middleware that records the path of every field it
// runs around, as a tracer would.
type fieldLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *fieldLog) around(ctx context.Context, next graphql.Resolver) (any, error) {
	l.mu.Lock()
	l.paths = append(l.paths, graphql.GetFieldContext(ctx).Path().String())
	l.mu.Unlock()
	return next(ctx)
}

func (l *fieldLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.paths
	l.paths = nil
	return p
}

// TestFieldMiddleware: a field middleware that is not errors-only turns the
// fast path off, so it sees every field of every query; an errors-only one
// keeps it on; the server's own configuration keeps it on. Not parallel: it
// reads process-wide counters.
func TestFieldMiddleware(t *testing.T) {
	e := testkit.New(t, testkit.Options{Shipments: 3})
	k := e.Key(t, acmeAdmin)
	const query = `{ viewer { role account { id } } shipments(first: 2) { nodes { id } } }`
	body, _ := json.Marshal(map[string]any{"query": query})
	send := func(t *testing.T, env *testkit.Env) (out []byte, written, handed float64) {
		t.Helper()
		w0 := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("written"))
		h0 := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("handed_over"))
		res := env.HTTP(t, env.NewRequest(t, http.MethodPost, k, "", body))
		if res.Status != http.StatusOK || bytes.Contains(res.Body, []byte(`"errors"`)) {
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
		return res.Body, testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("written")) - w0,
			testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("handed_over")) - h0
	}
	env := func(hc gqlhttp.HandlerConfig) *testkit.Env {
		return e.WithGraphQL(t, hc)
	}
	off := gqlhttp.DefaultHandlerConfig
	off.NoFastPath = true
	want, _, _ := send(t, env(off))

	t.Run("server default", func(t *testing.T) {
		got, written, handed := send(t, env(gqlhttp.DefaultHandlerConfig))
		if written != 1 || handed != 0 {
			t.Errorf("written %v, handed over %v: the default configuration must keep the fast path on", written, handed)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("got %s\nwant %s", got, want)
		}
	})

	t.Run("tracing middleware", func(t *testing.T) {
		var log fieldLog
		hc := gqlhttp.DefaultHandlerConfig
		hc.FieldMiddleware = []gqlhttp.FieldMiddleware{{Func: log.around}}
		got, written, handed := send(t, env(hc))
		if written != 0 || handed != 0 {
			t.Errorf("written %v, handed over %v: a field middleware that is not errors-only must turn the fast path off", written, handed)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("got %s\nwant %s", got, want)
		}
		paths := strings.Join(log.take(), " ")
		for _, p := range []string{"viewer", "viewer.role", "viewer.account", "viewer.account.id", "shipments", "shipments.nodes", "shipments.nodes[1].id"} {
			if !strings.Contains(" "+paths+" ", " "+p+" ") {
				t.Errorf("the middleware did not run around %s; it saw %s", p, paths)
			}
		}
	})

	t.Run("errors-only middleware", func(t *testing.T) {
		var log fieldLog
		hc := gqlhttp.DefaultHandlerConfig
		hc.FieldMiddleware = []gqlhttp.FieldMiddleware{{Func: log.around, ErrorsOnly: true}}
		got, written, handed := send(t, env(hc))
		if written != 1 || handed != 0 {
			t.Errorf("written %v, handed over %v: an errors-only middleware must keep the fast path on", written, handed)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("got %s\nwant %s", got, want)
		}
		if n := len(log.take()); n != 0 {
			t.Errorf("the middleware ran around %d fields of a query written on the fast path", n)
		}
	})
}

// TestFieldMiddlewareRegisteredHere keeps the fence of fieldmiddleware.go
// whole: gqlgen's server does not say what field middleware it runs, so no
// code but graph/gqlhttp/fieldmiddleware.go may register any.
func TestFieldMiddlewareRegisteredHere(t *testing.T) {
	register := regexp.MustCompile(`\.AroundFields\(|graphql\.FieldInterceptor|InterceptField\(`)
	allowed := filepath.Join("..", "..", "graph", "gqlhttp", "fieldmiddleware.go")
	err := filepath.WalkDir(filepath.Join("..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".." || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == allowed {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if loc := register.FindIndex(src); loc != nil {
			line := 1 + bytes.Count(src[:loc[0]], []byte("\n"))
			t.Errorf("%s:%d registers field middleware outside graph/gqlhttp/fieldmiddleware.go (the fast path would not know of it)", path, line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
