//go:build browser

// Run with: scripts/fetch-playground-assets.sh && go test -tags browser ./testkit/browsertest
// Needs Chromium (apt-get install -y chromium, or $CHROMIUM). Set
// BROWSERTEST_SCREENSHOT=/path/file.png to keep a screenshot of the run.
package browsertest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"shipgraph/graph/playground"
	"shipgraph/testkit/browsertest"
)

const (
	demoKey      = "demo-key-0123"
	exampleQuery = "query Example {\n  viewer {\n    account {\n      companyName\n    }\n  }\n}\n"
	answer       = `{"data":{"viewer":{"account":{"companyName":"Acme"}}}}`
)

// seen records what the fake GraphQL endpoint received.
type seen struct {
	mu       sync.Mutex
	requests []http.Header
}

func (s *seen) add(h http.Header) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, h.Clone())
}

func (s *seen) all() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.requests...)
}

// newServer serves the real playground plus a stand-in GraphQL endpoint
// that insists on the API key, as the gateway does.
func newServer(t *testing.T, wrap func(http.Handler) http.Handler) (*httptest.Server, *seen) {
	return newServerIntrospection(t, wrap, introspection)
}

// newServerIntrospection is newServer answering introspection with schema.
func newServerIntrospection(t *testing.T, wrap func(http.Handler) http.Handler, schema []byte) (*httptest.Server, *seen) {
	t.Helper()
	rec := &seen{}
	var pg http.Handler = playground.Handler(playground.Options{Endpoint: "/graphql", DefaultKey: demoKey, Query: exampleQuery})
	if wrap != nil {
		pg = wrap(pg)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /playground", pg)
	mux.Handle("GET /playground/", pg)
	mux.HandleFunc("POST /graphql", func(w http.ResponseWriter, r *http.Request) {
		rec.add(r.Header)
		w.Header().Set("Content-Type", "application/graphql-response+json")
		if r.Header.Get("Authorization") != "Token "+demoKey {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"errors":[{"message":"missing or wrong API key"}]}`)
			return
		}
		var req struct {
			Query string `json:"query"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"errors":[{"message":"bad JSON"}]}`)
			return
		}
		// GraphiQL introspects on load; a real schema keeps it from
		// writing a schema error into the result pane.
		if strings.Contains(req.Query, "__schema") {
			_, _ = w.Write(schema)
			return
		}
		_, _ = io.WriteString(w, answer)
	})
	// Listens on 127.0.0.1, the only place the browser may go.
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, rec
}

func TestBrowserRunExampleQuery(t *testing.T) {
	if !playground.Embedded() {
		t.Fatal("playground assets are not embedded; run scripts/fetch-playground-assets.sh first (the CDN fallback cannot work offline)")
	}
	srv, rec := newServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	shot := os.Getenv("BROWSERTEST_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "playground.png")
	}
	start := time.Now()
	res, err := browsertest.Run(ctx, srv.URL+"/playground", "Acme", browsertest.Options{ScreenshotPath: shot})
	t.Logf("browser run took %s; screenshot %s", time.Since(start).Round(time.Millisecond), shot)
	for _, u := range res.Requests {
		t.Logf("request: %s", u)
	}
	if err != nil {
		t.Fatalf("Run: %v\nconsole errors: %q", err, res.ConsoleErrors)
	}

	var got, want any
	if err := json.Unmarshal([]byte(res.Text), &got); err != nil {
		t.Fatalf("result pane is not JSON: %v\n%s", err, res.Text)
	}
	_ = json.Unmarshal([]byte(answer), &want)
	if !jsonEqual(got, want) {
		t.Errorf("result pane = %s, want %s", res.Text, answer)
	}

	// Offline proof: nothing but loopback was even attempted.
	if len(res.Blocked) > 0 {
		t.Errorf("page tried to reach non-loopback hosts: %q", res.Blocked)
	}
	for _, raw := range res.Requests {
		if u, err := url.Parse(raw); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != mustHost(t, srv.URL) {
			t.Errorf("request to a host other than the test server: %s", raw)
		}
	}
	// CSP violations and script errors show up here.
	if len(res.ConsoleErrors) > 0 {
		t.Errorf("console errors: %q", res.ConsoleErrors)
	}

	// The custom fetcher: key from the prefilled bar, JSON, the
	// GraphQL-over-HTTP Accept header, on every request (introspection too).
	reqs := rec.all()
	if len(reqs) < 2 {
		t.Fatalf("endpoint saw %d requests, want introspection + query", len(reqs))
	}
	for i, h := range reqs {
		if h.Get("Authorization") != "Token "+demoKey {
			t.Errorf("request %d: Authorization %q", i, h.Get("Authorization"))
		}
		if h.Get("Content-Type") != "application/json" {
			t.Errorf("request %d: Content-Type %q", i, h.Get("Content-Type"))
		}
		if h.Get("Accept") != "application/graphql-response+json, application/json" {
			t.Errorf("request %d: Accept %q", i, h.Get("Accept"))
		}
	}
}

// TestBrowserIntrospectionDisabled: like the gateway with introspection
// off, GraphiQL's schema fetch fails and it writes that error into the
// result pane; running the query must still end with the result there.
func TestBrowserIntrospectionDisabled(t *testing.T) {
	if !playground.Embedded() {
		t.Fatal("playground assets are not embedded; run scripts/fetch-playground-assets.sh first")
	}
	srv, _ := newServerIntrospection(t, nil, []byte(`{"errors":[{"message":"introspection disabled"}]}`))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	text, err := browsertest.RunExampleQuery(ctx, srv.URL+"/playground", "Acme")
	if err != nil {
		t.Fatalf("RunExampleQuery: %v", err)
	}
	if strings.Contains(text, "introspection disabled") {
		t.Errorf("result pane still shows the schema error: %s", text)
	}
}

// TestBrowserNonLoopbackIsBlocked is the negative control: a page that does pull
// in an outside resource must make RunExampleQuery fail, or the offline
// proof above would prove nothing.
func TestBrowserNonLoopbackIsBlocked(t *testing.T) {
	if !playground.Embedded() {
		t.Fatal("playground assets are not embedded; run scripts/fetch-playground-assets.sh first")
	}
	const outside = "http://example.com/tracker.css"
	srv, _ := newServer(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/assets/") {
				next.ServeHTTP(w, r)
				return
			}
			rr := httptest.NewRecorder()
			next.ServeHTTP(rr, r)
			page := bytes.Replace(rr.Body.Bytes(), []byte("</head>"),
				[]byte(`<link rel="stylesheet" href="`+outside+`"></head>`), 1)
			// Drop the CSP, which would otherwise stop the request before
			// it reaches the browser's network layer.
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(page)
		})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	_, err := browsertest.RunExampleQuery(ctx, srv.URL+"/playground", "Acme")
	if err == nil || !strings.Contains(err.Error(), outside) {
		t.Fatalf("RunExampleQuery error = %v, want it to report the blocked %s", err, outside)
	}
}

func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// introspection describes `type Query { viewer: Viewer } type Viewer {
// account: Account } type Account { companyName: String }`, enough for
// GraphiQL's buildClientSchema.
var introspection = func() []byte {
	named := func(kind, name string) map[string]any {
		return map[string]any{"kind": kind, "name": name, "ofType": nil}
	}
	object := func(name, field string, typ map[string]any) map[string]any {
		return map[string]any{
			"kind": "OBJECT", "name": name, "description": nil, "specifiedByURL": nil,
			"fields": []any{map[string]any{
				"name": field, "description": nil, "args": []any{}, "type": typ,
				"isDeprecated": false, "deprecationReason": nil,
			}},
			"inputFields": nil, "interfaces": []any{}, "enumValues": nil, "possibleTypes": nil,
		}
	}
	scalar := func(name string) map[string]any {
		return map[string]any{
			"kind": "SCALAR", "name": name, "description": nil, "specifiedByURL": nil,
			"fields": nil, "inputFields": nil, "interfaces": nil, "enumValues": nil, "possibleTypes": nil,
		}
	}
	b, err := json.Marshal(map[string]any{"data": map[string]any{"__schema": map[string]any{
		"description":      nil,
		"queryType":        map[string]any{"name": "Query"},
		"mutationType":     nil,
		"subscriptionType": nil,
		"types": []any{
			object("Query", "viewer", named("OBJECT", "Viewer")),
			object("Viewer", "account", named("OBJECT", "Account")),
			object("Account", "companyName", named("SCALAR", "String")),
			scalar("String"),
			scalar("Boolean"),
		},
		"directives": []any{},
	}}})
	if err != nil {
		panic(err)
	}
	return b
}()
