// Package testkit is the one kit every test imports, outside any production
// package: the server harness (a migrated, seeded database of the test's own
// behind the server's own HTTP chain — httpapi: body limit → auth with the key
// cache → loaders → gqlgen — with every request's SQL statements counted),
// and the clients and waits tests share.
package testkit

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shipgraph/app"
	"shipgraph/config"
	"shipgraph/db"
	"shipgraph/files"
	"shipgraph/graph/gqlhttp"
	"shipgraph/httpapi"
	"shipgraph/jobs"
	"shipgraph/load"
	"shipgraph/testkit/pg"
)

// SeedNow is "today" of the seeded data, so ids, keys and values are the
// same on every run.
var SeedNow = pg.SeedNow

// BodyLimit is the server's default request body limit (BODY_LIMIT).
var BodyLimit = int(Defaults().BodyLimit)

// Defaults is the chain's configuration from the declared defaults
// (config/settings.go), as the server builds it, but with the response
// cache off: tests that change rows with SQL and read them at once must
// see them (the cache's own tests turn it on, with
// config.ResponseCacheBytes' default).
func Defaults() app.ChainConfig {
	c := app.HTTPConfig(config.Defaults(config.Serve), nil)
	c.ResponseCacheBytes = 0
	return c
}

// Options say what database and handler a test gets. Zero values are the
// server's defaults.
type Options struct {
	// Shipments to seed; 0 seeds 150. Negative leaves the database empty
	// (migrated, no accounts).
	Shipments int
	Handler   *gqlhttp.HandlerConfig
	Loader    *load.LoaderConfig
	// Files, when set, serves document files from a store of its own
	// (OpenFiles: a temporary directory and a random secret unless set).
	Files *files.Config
	// Configure changes the chain's configuration (Config) before it is
	// built: body limit, public base URL, webhook settings, document jobs.
	Configure func(*pg.DB, *app.ChainConfig)
}

// Env is a seeded database behind the server's handler chain; its
// methods SQL, Rows, One, Count, Exec, Key and Account are those of
// pg.DB on it.
type Env struct {
	Store *db.DB
	// Keys are the demo API keys by "account/role", e.g. "acme/admin".
	Keys    map[string]string
	Handler http.Handler
	// Files is the store of document files (Options.Files), or nil.
	Files *files.Store

	url     string // the database's
	srvOnce sync.Once
	srv     *httptest.Server
}

// New gives the test a database of its own, cloned from the migrated
// template and seeded as Options say, and the handler chain over it.
func New(tb testing.TB, o Options) *Env {
	tb.Helper()
	n := o.Shipments
	switch {
	case n == 0:
		n = 150
	case n < 0:
		n = 0
	}
	hc, lc := gqlhttp.DefaultHandlerConfig, load.DefaultLoaderConfig
	if o.Handler != nil {
		hc = *o.Handler
	}
	if o.Loader != nil {
		lc = *o.Loader
	}
	d := pg.New(tb, n)
	c := Config(hc, lc)
	var fs *files.Store
	if o.Files != nil {
		fs = OpenFiles(tb, *o.Files)
		c.Files = fs
	}
	if o.Configure != nil {
		o.Configure(d, &c)
	}
	e := On(tb, d, Start(tb, d.Store, c))
	e.Files = fs
	return e
}

// OpenFiles opens a store of document files with c, in a temporary
// directory of tb and with a random secret unless c sets them, closed when
// tb ends.
func OpenFiles(tb testing.TB, c files.Config) *files.Store {
	tb.Helper()
	if c.Dir == "" && c.URL == "" {
		c.Dir = tb.TempDir()
	}
	if c.Secret == nil {
		c.Secret = make([]byte, 32)
		_, _ = rand.Read(c.Secret)
	}
	fs, err := files.Open(context.Background(), c)
	if err != nil {
		tb.Fatalf("files: %v", err)
	}
	tb.Cleanup(func() { _ = fs.Close() })
	return fs
}

// StartJobs starts the job engine e (opened, its queues registered) and
// stops it when tb ends.
func StartJobs(tb testing.TB, e *jobs.Engine) {
	tb.Helper()
	if err := e.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	})
}

// On is an Env of handler over the database d (another chain over the
// database of an Env: e.On(tb, h) is On(tb, e.DB, h)).
func On(tb testing.TB, d *pg.DB, handler http.Handler) *Env {
	e := &Env{Store: d.Store, Keys: d.Keys, Handler: handler, url: d.URL}
	tb.Cleanup(func() {
		if e.srv != nil {
			e.srv.Close()
		}
	})
	return e
}

// With is an Env of handler over e's database.
func (e *Env) With(tb testing.TB, handler http.Handler) *Env { return On(tb, e.DB(), handler) }

// DB is e's database as pg.DB (its URL is empty for an Env built by hand).
func (e *Env) DB() *pg.DB { return &pg.DB{URL: e.url, Store: e.Store, Keys: e.Keys} }

// SQL is pg.DB.SQL on e's database.
func (e *Env) SQL(tb testing.TB, dest any, query string, args ...any) {
	tb.Helper()
	e.DB().SQL(tb, dest, query, args...)
}

// Rows is pg.DB.Rows on e's database.
func (e *Env) Rows(tb testing.TB, query string, args ...any) [][]string {
	tb.Helper()
	return e.DB().Rows(tb, query, args...)
}

// One is pg.DB.One on e's database.
func (e *Env) One(tb testing.TB, dest []any, query string, args ...any) {
	tb.Helper()
	e.DB().One(tb, dest, query, args...)
}

// Count is pg.DB.Count on e's database.
func (e *Env) Count(tb testing.TB, query string, args ...any) int {
	tb.Helper()
	return e.DB().Count(tb, query, args...)
}

// Text is pg.DB.Text on e's database.
func (e *Env) Text(tb testing.TB, query string, args ...any) string {
	tb.Helper()
	return e.DB().Text(tb, query, args...)
}

// Exec is pg.DB.Exec on e's database.
func (e *Env) Exec(tb testing.TB, query string, args ...any) {
	tb.Helper()
	e.DB().Exec(tb, query, args...)
}

// Key returns the demo key of "account/role" (acme/admin …).
func (e *Env) Key(tb testing.TB, who string) string {
	tb.Helper()
	return e.DB().Key(tb, who)
}

// Account is the id of the account with this slug.
func (e *Env) Account(tb testing.TB, slug string) string {
	tb.Helper()
	return e.DB().Account(tb, slug)
}

// WithGraphQL is an Env of a chain with these GraphQL settings (the
// loaders' defaults) over e's database.
func (e *Env) WithGraphQL(tb testing.TB, hc gqlhttp.HandlerConfig) *Env {
	tb.Helper()
	return e.With(tb, Chain(tb, e.Store, hc, load.DefaultLoaderConfig))
}

// Config is the chain configuration of Chain: the server's defaults with
// these GraphQL and loader settings, no rate limit (it sends no SQL and
// changes no response below its limit), the key cache on with its
// listener pinged every second rather than every 250 ms, so that a slow
// moment of a busy test machine does not switch the cache off in the middle
// of a statement count; and the count of statements after authentication
// (Result.AfterAuth).
func Config(hc gqlhttp.HandlerConfig, lc load.LoaderConfig) app.ChainConfig {
	c := Defaults()
	c.GraphQL, c.Resolver.Loaders = hc, lc
	c.RateLimit = 0
	c.KeyCachePing = time.Second
	c.Wrap = countAfterAuth
	return c
}

// Chain is the server's HTTP chain (app.NewChain) over store, configured
// by Config, closed when tb ends. It returns once the key cache is live,
// so that statement counts do not depend on when its listener connected.
func Chain(tb testing.TB, store *db.DB, hc gqlhttp.HandlerConfig, lc load.LoaderConfig) http.Handler {
	tb.Helper()
	return Start(tb, store, Config(hc, lc))
}

// Start builds the chain and its parts with c over store through the
// composition root (app.NewChain, as the server does), closes them when tb
// ends and waits until the key cache is live (when it is on).
func Start(tb testing.TB, store *db.DB, c app.ChainConfig) *httpapi.Handler {
	tb.Helper()
	ch := app.NewChain(store, c)
	tb.Cleanup(ch.Close)
	if c.KeyCache > 0 {
		WaitFor(tb, 10*time.Second, "the key cache to listen", ch.KeyCacheLive)
	}
	return ch.Handler
}

type afterAuthKey struct{}

// countAfterAuth counts, for a request sent by Do, the statements sent
// after authentication (the key lookup, when the key was not cached, is
// before).
func countAfterAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, ok := r.Context().Value(afterAuthKey{}).(*atomic.Int64); ok {
			r = r.WithContext(db.WithQueryCounter(r.Context(), n))
		}
		next.ServeHTTP(w, r)
	})
}

// URL starts (once) a real HTTP server on 127.0.0.1:0 in front of the
// handler and returns the URL of its /graphql endpoint.
func (e *Env) URL() string {
	e.srvOnce.Do(func() { e.srv = httptest.NewServer(e.Handler) })
	return e.srv.URL + "/graphql"
}
