// Package testkit is the one kit every test imports, outside any production
// package: the server harness (a migrated, seeded database of the test's own
// behind the server's own HTTP chain — httpapi: body limit → auth with the key
// cache → loaders → gqlgen — with every request's SQL statements counted),
// and the clients and waits tests share.
package testkit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"shipgraph/app"
	"shipgraph/config"
	"shipgraph/db"
	"shipgraph/files"
	"shipgraph/graph/gqlhttp"
	"shipgraph/httpapi"
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

// WaitFor polls cond every few milliseconds until it holds, failing tb
// after timeout, and returns how long it took.
func WaitFor(tb testing.TB, timeout time.Duration, what string, cond func() bool) time.Duration {
	tb.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			tb.Fatalf("waited %v for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
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

// Error is one GraphQL error of a response.
type Error struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// Code is extensions.code.
func (e Error) Code() string {
	s, _ := e.Extensions["code"].(string)
	return s
}

// Result is the response to one GraphQL request.
type Result struct {
	Data       json.RawMessage
	Errors     []Error
	Extensions map[string]any
	// Statements is the number of SQL statements the request sent,
	// the API key lookup included (when the key was not cached).
	Statements int64
	// AfterAuth is the number of those sent after authentication: what
	// the request itself cost. Counted through Chain only.
	AfterAuth int64
}

// Decode unmarshals data into v.
func (r *Result) Decode(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(r.Data, v); err != nil {
		tb.Fatalf("decoding data: %v\n%s", err, r.Data)
	}
}

// Codes lists the extensions.code of every error, in order.
func (r *Result) Codes() []string {
	out := make([]string, len(r.Errors))
	for i, e := range r.Errors {
		out[i] = e.Code()
	}
	return out
}

// String renders the result for failure messages.
func (r *Result) String() string {
	b, _ := json.Marshal(map[string]any{"data": r.Data, "errors": r.Errors})
	if len(b) > 4000 {
		b = append(b[:4000], "…"...)
	}
	return string(b)
}

// Client is gqlgen's test client on the handler with key (none if "").
func (e *Env) Client(key string) *client.Client {
	var opts []client.Option
	if key != "" {
		opts = append(opts, client.AddHeader("Authorization", "Token "+key))
	}
	opts = append(opts, client.Path("/graphql"))
	return client.New(e.Handler, opts...)
}

// Do sends one operation with key (an API key, or "" for none) through the
// whole chain, counting its statements. vars may be nil.
func (e *Env) Do(tb testing.TB, key, query string, vars map[string]any, opts ...client.Option) *Result {
	tb.Helper()
	var n, after atomic.Int64
	all := []client.Option{func(r *client.Request) {
		ctx := db.WithQueryCounter(r.HTTP.Context(), &n)
		r.HTTP = r.HTTP.WithContext(context.WithValue(ctx, afterAuthKey{}, &after))
	}}
	for k, v := range vars {
		all = append(all, client.Var(k, v))
	}
	all = append(all, opts...)
	raw, err := e.Client(key).RawPost(query, all...)
	if err != nil {
		tb.Fatalf("graphql request: %v", err)
	}
	res := &Result{Extensions: raw.Extensions, Statements: n.Load(), AfterAuth: after.Load()}
	if res.Data, err = json.Marshal(raw.Data); err != nil {
		tb.Fatal(err)
	}
	if len(raw.Errors) > 0 {
		if err := json.Unmarshal(raw.Errors, &res.Errors); err != nil {
			tb.Fatalf("decoding errors: %v\n%s", err, raw.Errors)
		}
	}
	return res
}

// Must is Do that fails the test on any GraphQL error and decodes the data
// into v (unless v is nil).
func (e *Env) Must(tb testing.TB, key, query string, vars map[string]any, v any) *Result {
	tb.Helper()
	res := e.Do(tb, key, query, vars)
	if len(res.Errors) > 0 {
		tb.Fatalf("unexpected errors: %s", res)
	}
	if v != nil {
		res.Decode(tb, v)
	}
	return res
}

// HTTPResponse is a raw HTTP answer of the test server.
type HTTPResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body as a GraphQL response.
func (r *HTTPResponse) JSON(tb testing.TB) *Result {
	tb.Helper()
	var v struct {
		Data       json.RawMessage `json:"data"`
		Errors     []Error         `json:"errors"`
		Extensions map[string]any  `json:"extensions"`
	}
	if err := json.Unmarshal(r.Body, &v); err != nil {
		tb.Fatalf("body is not JSON (%v): %q", err, r.Body)
	}
	return &Result{Data: v.Data, Errors: v.Errors, Extensions: v.Extensions}
}

// HTTP sends a request to the test server over the network.
func (e *Env) HTTP(tb testing.TB, req *http.Request) *HTTPResponse {
	tb.Helper()
	return Do(tb, req)
}

// Send sends method to url (any server's: a serve process', an httptest
// one's) with key as the API key ("" for none) and body as JSON (nil for
// none), and reads the whole answer.
func Send(tb testing.TB, method, url, key string, body []byte) *HTTPResponse {
	tb.Helper()
	return Do(tb, Request(tb, method, url, key, body))
}

// Do sends req over the network and reads the whole answer.
func Do(tb testing.TB, req *http.Request) *HTTPResponse {
	tb.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return &HTTPResponse{Status: res.StatusCode, Header: res.Header, Body: body}
}

// NewRequest builds a request to the test server's /graphql with key as
// the API key ("" for none); rawQuery is appended as the query string.
func (e *Env) NewRequest(tb testing.TB, method, key, rawQuery string, body []byte) *http.Request {
	tb.Helper()
	u := e.URL()
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	return Request(tb, method, u, key, body)
}

// Request builds a request to url with key as the API key ("" for none)
// and body as JSON (nil for none).
func Request(tb testing.TB, method, u, key string, body []byte) *http.Request {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Token "+key)
	}
	return req
}

// QueriesTotal scrapes shipgraph_db_queries_total the way Prometheus
// does, from the /metrics handler of the server: the statements sent to
// every target (primary and replicas).
func QueriesTotal(tb testing.TB) float64 {
	tb.Helper()
	return QueriesOn(tb, "")
}

// QueriesOn scrapes shipgraph_db_queries_total{target=target} ("primary"
// or "replica"; "" sums every target).
func QueriesOn(tb testing.TB, target string) float64 {
	tb.Helper()
	rec := httptest.NewRecorder()
	promhttp.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	sc := bufio.NewScanner(rec.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sum, found := 0.0, false
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "shipgraph_db_queries_total{")
		if !ok {
			continue
		}
		labels, v, ok := strings.Cut(rest, "} ")
		if !ok || (target != "" && !strings.Contains(labels, `target="`+target+`"`)) {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			tb.Fatalf("shipgraph_db_queries_total %q: %v", v, err)
		}
		sum, found = sum+f, true
	}
	if !found {
		tb.Fatalf("shipgraph_db_queries_total{target=%q} is not exported on /metrics", target)
	}
	return sum
}

// Vars is shorthand for a variables map.
type Vars = map[string]any

// CodesEqual reports whether the errors' extensions.code are want, in order.
func CodesEqual(got []string, want ...string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// Refused checks that a request was answered with exactly one error of
// the code, no data, and no statement after authentication: a limit or a
// role check refused it before any resolver ran.
func Refused(tb testing.TB, what string, res *Result, code string) {
	tb.Helper()
	if !CodesEqual(res.Codes(), code) {
		tb.Errorf("%s: %s; want one %s error", what, res, code)
		return
	}
	if d := string(res.Data); d != "null" && d != "" {
		tb.Errorf("%s: data %s; want none", what, d)
	}
	if res.AfterAuth != 0 {
		tb.Errorf("%s: %d statements after the key lookup; want none: the limit must refuse before resolvers run", what, res.AfterAuth)
	}
	if strings.TrimSpace(res.Errors[0].Message) == "" {
		tb.Errorf("%s: empty message", what)
	}
}

// JSON marshals v, failing tb on error: a request body.
func JSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
