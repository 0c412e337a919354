package rest_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"

	"shipgraph/db"
	"shipgraph/files"
	"shipgraph/graph/gqlhttp"
	"shipgraph/load"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

// The tests drive the server's handler chain (package httpapi: body limit →
// auth → loaders → /v2 and /graphql) over HTTP against a seeded database of
// their own:
// the seed is fixed (seed 1, fixed "now"), so ids, keys and values — and
// the golden files — are the same on every run.

//go:generate go run ./testdata/extract -in ../../shared/reference/terminal49-openapi.json -out testdata/openapi-schemas.json

var update = flag.Bool("update", false, "rewrite the golden files of rest/testdata/golden")

func TestMain(m *testing.M) { pg.Main(m) }

// publicBase is the PUBLIC_BASE_URL of the test server, so links in golden
// files do not depend on the listener's port.
const publicBase = "https://api.shipgraph.test"

// testBodyLimit is the server's body limit in tests.
const testBodyLimit = 4 << 10

// env is a seeded database behind a running test server.
type env struct {
	t     testing.TB
	store *db.DB
	srv   *httptest.Server
	keys  map[string]string // "acme/admin" → API key

	mu     sync.Mutex
	counts map[string]int64 // X-Test-Request → statements the handler sent
	seq    atomic.Int64
}

type envOptions struct {
	shipments int
	// requestBase leaves PUBLIC_BASE_URL empty: links come from the
	// request.
	requestBase bool
	// files is the store of document files (files_test.go).
	files *files.Store
	// jobs, with files, processes documents (document_processing_test.go).
	jobs *documentJobs
	// webhooks are the webhook settings (webhook_trigger_test.go lets
	// URLs point at a receiver on 127.0.0.1).
	webhooks *resolve.WebhookConfig
	// serial keeps the test from running in parallel with others (it
	// sets an environment variable or a package-wide switch).
	serial bool
}

// newEnv serves a seeded database of the test's own through the real
// chain. The test runs in parallel with the package's others unless
// o.serial.
func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	if tt, ok := t.(*testing.T); ok && !o.serial {
		tt.Parallel()
	}
	if o.shipments == 0 {
		o.shipments = 60
	}
	d := pg.New(t, o.shipments)
	store := d.Store
	e := &env{t: t, store: store, keys: d.Keys, counts: map[string]int64{}}
	c := testkit.Config(gqlhttp.DefaultHandlerConfig, load.DefaultLoaderConfig)
	c.BodyLimit = testBodyLimit
	c.PublicBaseURL = publicBase
	if o.requestBase {
		c.PublicBaseURL = ""
	}
	c.Wrap = e.counting
	c.Files = o.files
	if o.webhooks != nil {
		c.Resolver.Webhooks = *o.webhooks
	}
	if o.jobs != nil {
		c.Resolver.DocumentJobs = o.jobs.start(t, store, o.files)
	}
	e.srv = httptest.NewServer(testkit.Start(t, store, c))
	t.Cleanup(e.srv.Close)
	return e
}

// counting records how many statements each request cost after auth (the
// chain's hook after authentication).
func (e *env) counting(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n atomic.Int64
		next.ServeHTTP(w, r.WithContext(db.WithQueryCounter(r.Context(), &n)))
		if id := r.Header.Get("X-Test-Request"); id != "" {
			e.mu.Lock()
			e.counts[id] = n.Load()
			e.mu.Unlock()
		}
	})
}

// response is what a test request got.
type response struct {
	status  int
	header  http.Header
	body    []byte
	queries int64
}

// json decodes the body.
func (r *response) json(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.body)
	}
	return v
}

// do sends a request with the key of who ("acme/admin"; "" for none).
func (e *env) do(who, method, path string, body any, header ...string) *response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/vnd.api+json")
	}
	if who != "" {
		key, ok := e.keys[who]
		if !ok {
			e.t.Fatalf("no key for %s", who)
		}
		req.Header.Set("Authorization", "Token "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	id := fmt.Sprint(e.seq.Add(1))
	req.Header.Set("X-Test-Request", id)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	e.mu.Lock()
	n := e.counts[id]
	e.mu.Unlock()
	return &response{status: resp.StatusCode, header: resp.Header, body: b, queries: n}
}

// get is do for a GET as acme's admin that must answer 200.
func (e *env) get(path string) map[string]any {
	e.t.Helper()
	return e.getAs("acme/admin", path)
}

// getAs is get with the key of who.
func (e *env) getAs(who, path string) map[string]any {
	e.t.Helper()
	r := e.do(who, "GET", path, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("GET %s: %d\n%s", path, r.status, r.body)
	}
	return r.json(e.t)
}

// firstID returns the id of the first resource of a list.
func (e *env) firstID(path string) string {
	e.t.Helper()
	data := e.get(path)["data"].([]any)
	if len(data) == 0 {
		e.t.Fatalf("GET %s: empty list", path)
	}
	return data[0].(map[string]any)["id"].(string)
}

// ---------------------------------------------------------------- golden files

// golden compares a response with testdata/golden/<name>.json (status line
// and indented body), rewriting it under -update.
// Pairs of replace (old, new) stand in for values that differ between runs
// (ids the database generates on insert).
func golden(t *testing.T, name string, r *response, replace ...string) {
	t.Helper()
	var body bytes.Buffer
	if err := json.Indent(&body, r.body, "", "  "); err != nil {
		t.Fatalf("%s: body is not JSON: %v\n%s", name, err, r.body)
	}
	text := strings.TrimSpace(body.String())
	if len(replace) > 0 {
		text = strings.NewReplacer(replace...).Replace(text)
	}
	got := fmt.Sprintf("%d %s\n%s\n", r.status, r.header.Get("Content-Type"), text)
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./rest -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (run with -update to accept):\n%s", name, path, diff(string(want), got))
	}
}

// diff shows the first differing lines of two texts.
func diff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, w, g)
		}
	}
	return "(no line differs)"
}

// ---------------------------------------------------------------- schemas

// openAPI holds the OpenAPI document's response schemas
// (testdata/openapi-schemas.json, see testdata/extract).
var openAPI = testkit.SchemaFile(filepath.Join("testdata", "openapi-schemas.json"))

// validate checks a body against a response schema of the OpenAPI
// document.
func validate(t testing.TB, schema string, body []byte) {
	t.Helper()
	openAPI.Validate(t, "/$defs/"+schema, body)
}

// errorSchema is the schema of every error document.
const errorSchema = "get-documents-400"

// ---------------------------------------------------------------- helpers

// deleteCustomField deletes the custom field value at self (its record
// id) as acme's member: 204 with no body, then gone: GET and a second
// DELETE of self, and GET of the record, are 404.
func deleteCustomField(t *testing.T, e *env, self, id string) {
	t.Helper()
	r := e.do("acme/member", "DELETE", self, nil)
	if r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Fatalf("DELETE: %d\n%s", r.status, r.body)
	}
	wantError(t, e.do("acme/member", "GET", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "DELETE", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "GET", "/v2/custom_fields/"+id, nil), http.StatusNotFound, "", "")
}

// wantJSON checks that r answered status with a body the OpenAPI schema
// accepts, and returns it decoded.
func wantJSON(t *testing.T, r *response, status int, schema string) map[string]any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d\n%s", r.status, status, r.body)
	}
	validate(t, schema, r.body)
	return r.json(t)
}

// wantDocument is wantJSON for a JSON:API document (checkDocument).
func wantDocument(t *testing.T, r *response, status int, schema string) map[string]any {
	t.Helper()
	doc := wantJSON(t, r, status, schema)
	checkDocument(t, r)
	return doc
}

// errorOf returns the single error object of an error document.
func errorOf(t testing.TB, r *response) map[string]any {
	t.Helper()
	errs, ok := r.json(t)["errors"].([]any)
	if !ok || len(errs) != 1 {
		t.Fatalf("want one error object, got %s", r.body)
	}
	return errs[0].(map[string]any)
}

// wantError checks status, media type, the error object's status member and
// its source (pointer or parameter, "" for none), and the body's schema.
func wantError(t testing.TB, r *response, status int, sourceKey, sourceValue string) map[string]any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d\n%s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != jsonapi.MediaType {
		t.Errorf("Content-Type %q", ct)
	}
	validate(t, errorSchema, r.body)
	e := errorOf(t, r)
	if e["status"] != fmt.Sprint(status) {
		t.Errorf("error status member %v, want %q", e["status"], fmt.Sprint(status))
	}
	if e["title"] != http.StatusText(status) {
		t.Errorf("error title %v, want %q", e["title"], http.StatusText(status))
	}
	src, _ := e["source"].(map[string]any)
	if sourceKey == "" {
		if src != nil {
			t.Errorf("unexpected source %v", src)
		}
	} else if src == nil || src[sourceKey] != sourceValue {
		t.Errorf("source %v, want %s %q", src, sourceKey, sourceValue)
	}
	return e
}

// resource is a write's JSON:API body: one resource of type typ with
// attrs as its attributes.
func resource(typ string, attrs map[string]any) map[string]any {
	return map[string]any{"data": map[string]any{"type": typ, "attributes": attrs}}
}

// path helpers for nested JSON.
func obj(v any, keys ...string) map[string]any {
	for _, k := range keys {
		v = v.(map[string]any)[k]
	}
	m, _ := v.(map[string]any)
	return m
}
