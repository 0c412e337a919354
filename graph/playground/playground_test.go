package playground_test

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"shipgraph/graph/playground"
)

// Hostile on purpose: each would break out of a <script> element or an
// attribute if it were not escaped.
const (
	evilQuery = "query Evil { viewer { id } } # </script><script>alert('q')</script> & <!--"
	evilKey   = `k"><img src=x onerror=alert(1)></script>`
)

func get(t *testing.T, h http.Handler, target string, hdr map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var configRE = regexp.MustCompile(`(?s)<script type="application/json" id="sg-config">(.*?)</script>`)

// pageConfig extracts and decodes the JSON the page hands to playground.js.
func pageConfig(t *testing.T, page string) map[string]any {
	t.Helper()
	m := configRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no sg-config element in page:\n%s", page)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(m[1]), &cfg); err != nil {
		t.Fatalf("sg-config is not JSON: %v\n%s", err, m[1])
	}
	return cfg
}

var srcRE = regexp.MustCompile(`(?:src|href)="([^"]+)"`)

func TestPageEscapesQueryAndKey(t *testing.T) {
	h := playground.Handler(playground.Options{Endpoint: "/graphql", DefaultKey: evilKey, Query: evilQuery})
	for _, path := range []string{"/playground", "/playground/", "/graphql"} {
		res := get(t, h, path, nil)
		page := body(t, res)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", path, res.StatusCode)
		}
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Fatalf("%s: Content-Type %q", path, ct)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s: CSP %q does not restrict scripts", path, csp)
		}
		for _, raw := range []string{"</script><script>", "<img src=x", "<!--"} {
			if strings.Contains(page, raw) {
				t.Errorf("%s: page contains unescaped %q", path, raw)
			}
		}
		// The only </script> occurrences are the page's own closing tags:
		// the config element, three vendor scripts and playground.js.
		if n, want := strings.Count(page, "</script>"), 1+3+1; n != want {
			t.Errorf("%s: %d </script> tags, want %d", path, n, want)
		}
		cfg := pageConfig(t, page)
		if cfg["query"] != evilQuery || cfg["defaultKey"] != evilKey || cfg["endpoint"] != "/graphql" {
			t.Errorf("%s: config round-trip mismatch: %#v", path, cfg)
		}
		if !strings.Contains(page, `\u003c/script\u003e`) {
			t.Errorf("%s: expected JS-escaped query in page", path)
		}
	}
}

func TestEndpointDefault(t *testing.T) {
	h := playground.Handler(playground.Options{})
	cfg := pageConfig(t, body(t, get(t, h, "/playground", nil)))
	if cfg["endpoint"] != "/graphql" {
		t.Errorf("endpoint = %v, want /graphql", cfg["endpoint"])
	}
	if _, ok := cfg["query"]; ok {
		t.Errorf("empty Query should leave GraphiQL's default, got %v", cfg["query"])
	}
}

func TestMethodNotAllowed(t *testing.T) {
	h := playground.Handler(playground.Options{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/playground", strings.NewReader("{}")))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: status %d Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}

func TestAppScriptAlwaysServed(t *testing.T) {
	for name, h := range map[string]http.Handler{
		"embedded-build": playground.Handler(playground.Options{}),
		"fallback":       playground.NewHandlerFS(playground.Options{}, fstest.MapFS{}),
	} {
		page := body(t, get(t, h, "/playground", nil))
		var app string
		for _, m := range srcRE.FindAllStringSubmatch(page, -1) {
			if strings.Contains(m[1], "/playground.js") {
				app = m[1]
			}
		}
		if !strings.HasPrefix(app, playground.AssetPath+"playground.js?v=") {
			t.Fatalf("%s: app script URL %q", name, app)
		}
		res := get(t, h, app, nil)
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") {
			t.Fatalf("%s: %s: status %d type %q", name, app, res.StatusCode, res.Header.Get("Content-Type"))
		}
		if !strings.Contains(body(t, res), "Authorization") {
			t.Errorf("%s: app script lacks the fetcher", name)
		}
	}
}

func TestEmbeddedAssets(t *testing.T) {
	if !playground.Embedded() {
		// make test fetches the assets and sets SHIPGRAPH_REQUIRE_ASSETS
		// when npm is there (CI installs it): a skip there would be a
		// green check that checked nothing.
		if os.Getenv("SHIPGRAPH_REQUIRE_ASSETS") == "1" {
			t.Fatal("assets not embedded although SHIPGRAPH_REQUIRE_ASSETS=1 (make test fetched them): the build did not pick them up")
		}
		t.Skip("assets not fetched (run scripts/fetch-playground-assets.sh); CDN fallback covered by TestCDNFallback")
	}
	h := playground.Handler(playground.Options{})
	page := body(t, get(t, h, "/playground", nil))
	if strings.Contains(page, "unpkg") || strings.Contains(page, `id="sg-offline-note"`) {
		t.Fatalf("embedded page still references the CDN:\n%s", page)
	}
	integrity := playground.AssetIntegrity()
	wantType := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	seen := 0
	for _, m := range srcRE.FindAllStringSubmatch(page, -1) {
		u := html.UnescapeString(m[1])
		parsed, err := url.Parse(u)
		if err != nil || !strings.HasPrefix(parsed.Path, playground.AssetPath) {
			continue // e.g. the data: favicon
		}
		name := strings.TrimPrefix(parsed.Path, playground.AssetPath)
		sri, vendor := integrity[name]
		if !vendor {
			continue
		}
		seen++
		res := get(t, h, u, nil)
		data := body(t, res)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", u, res.StatusCode)
		}
		if got, want := res.Header.Get("Content-Type"), wantType[name[strings.LastIndex(name, "."):]]; got != want {
			t.Errorf("%s: Content-Type %q, want %q", u, got, want)
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("%s: Cache-Control %q, want long-lived for versioned URL", u, cc)
		}
		// The CDN fallback's SRI hashes must describe the same files the
		// fetch script embeds; this catches a version bump done in one place.
		sum := sha512.Sum384([]byte(data))
		if got := "sha384-" + base64.StdEncoding.EncodeToString(sum[:]); got != sri {
			t.Errorf("%s: embedded file hash %s, pinned %s: update versions/hashes together", name, got, sri)
		}
		etag := res.Header.Get("ETag")
		if etag == "" {
			t.Fatalf("%s: no ETag", u)
		}
		if res := get(t, h, u, map[string]string{"If-None-Match": etag}); res.StatusCode != http.StatusNotModified {
			t.Errorf("%s: conditional GET status %d, want 304", u, res.StatusCode)
		}
		// Unversioned URLs must revalidate rather than be cached for a year.
		if res := get(t, h, playground.AssetPath+name, nil); res.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("%s unversioned: Cache-Control %q", name, res.Header.Get("Cache-Control"))
		}
	}
	if seen != len(integrity) {
		t.Errorf("page references %d vendor assets, want %d", seen, len(integrity))
	}
}

func TestCDNFallback(t *testing.T) {
	h := playground.NewHandlerFS(playground.Options{Query: "{ viewer { id } }"}, fstest.MapFS{
		// A partial fetch must not be used: all-or-nothing.
		"graphiql.min.js": {Data: []byte("partial")},
	})
	res := get(t, h, "/playground", nil)
	page := body(t, res)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	if !strings.Contains(page, `id="sg-offline-note"`) || !strings.Contains(page, "make assets") {
		t.Errorf("fallback page lacks the offline note:\n%s", page)
	}
	// Attribute values are HTML-escaped; compare what the
	// browser sees.
	decoded := html.UnescapeString(page)
	for name, sri := range playground.AssetIntegrity() {
		if !strings.Contains(decoded, name+`" integrity="`+sri+`" crossorigin="anonymous"`) {
			t.Errorf("fallback page lacks pinned, SRI-protected CDN URL for %s", name)
		}
	}
	for _, want := range []string{
		"https://unpkg.com/graphiql@" + playground.GraphiQLVersion + "/graphiql.min.js",
		"https://unpkg.com/react@" + playground.ReactVersion + "/umd/react.production.min.js",
		"https://unpkg.com/react-dom@" + playground.ReactDOMVersion + "/umd/react-dom.production.min.js",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("fallback page lacks %s", want)
		}
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self' https://unpkg.com/") {
		t.Errorf("fallback CSP %q does not allow the CDN", csp)
	}
	if cfg := pageConfig(t, page); cfg["embedded"] != false {
		t.Errorf("embedded = %v in fallback config", cfg["embedded"])
	}
	if res := get(t, h, playground.AssetPath+"graphiql.min.js", nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("fallback serves a partial local asset: status %d", res.StatusCode)
	}
}

func TestUnknownAsset404(t *testing.T) {
	h := playground.Handler(playground.Options{})
	for _, p := range []string{playground.AssetPath + "nope.js", playground.AssetPath + "README.md", playground.AssetPath + "../playground.go"} {
		if res := get(t, h, p, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, res.StatusCode)
		}
	}
}
