package ops

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

func get(t *testing.T, h http.Handler, method, target string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// Without the build step the binary still builds, and /ops says why the
// page is missing instead of serving a page that cannot work.
func TestNotBuilt(t *testing.T) {
	h := load(fstest.MapFS{"dist/README.md": {Data: []byte("x")}})
	w := get(t, h, http.MethodGet, "/ops")
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "make ops") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if w := get(t, h, http.MethodGet, "/ops/assets/ops.js"); w.Code != http.StatusNotFound {
		t.Errorf("bundle of an unbuilt page: %d", w.Code)
	}
	if w := get(t, h, http.MethodGet, "/ops/assets/ops.css"); w.Code != http.StatusOK {
		t.Errorf("the notice's stylesheet: %d", w.Code)
	}
}

func TestBuilt(t *testing.T) {
	h := load(fstest.MapFS{
		"dist/ops.js":                        {Data: []byte("console.log(1)")},
		"dist/persisted-query-manifest.json": {Data: []byte(`{"format":"apollo-persisted-query-manifest","version":1,"operations":[]}`)},
	})
	w := get(t, h, http.MethodGet, "/ops")
	if w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	page := w.Body.String()
	js := AssetPath + "ops.js?v=" + h.files["ops.js"].Version()
	if !strings.Contains(page, `src="`+js+`"`) || !strings.Contains(page, `id="api-key"`) || strings.Contains(page, "{{") {
		t.Errorf("page: %s", page)
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	a := get(t, h, http.MethodGet, js)
	if a.Code != http.StatusOK || a.Body.String() != "console.log(1)" || !strings.Contains(a.Header().Get("Cache-Control"), "immutable") {
		t.Errorf("bundle: %d %q %q", a.Code, a.Body, a.Header().Get("Cache-Control"))
	}
	if w := get(t, h, http.MethodGet, js, "If-None-Match", a.Header().Get("ETag")); w.Code != http.StatusNotModified {
		t.Errorf("bundle revalidated: %d", w.Code)
	}
	if w := get(t, h, http.MethodGet, AssetPath+"persisted-query-manifest.json"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "apollo-persisted-query-manifest") {
		t.Errorf("manifest: %d", w.Code)
	}
	for _, p := range []string{"/ops/other", AssetPath + "../ops.go", AssetPath + "nothing.js"} {
		if w := get(t, h, http.MethodGet, p); w.Code != http.StatusNotFound {
			t.Errorf("%s: %d", p, w.Code)
		}
	}
	if w := get(t, h, http.MethodPost, "/ops"); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", w.Code)
	}
}

// With npm at hand (make test sets SHIPGRAPH_REQUIRE_ASSETS=1), the
// embedded page must have been built.
func TestEmbeddedBundle(t *testing.T) {
	if !Built() {
		if os.Getenv("SHIPGRAPH_REQUIRE_ASSETS") == "1" {
			t.Fatal("web/ops/dist holds no bundle: run `make ops`")
		}
		t.Skip("the operations page was not built (make ops): skipped")
	}
	if _, ok := loaded().files[manifestName]; !ok {
		t.Error("the bundle was embedded without its trusted documents manifest")
	}
}
