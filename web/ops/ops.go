package ops

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"
	"sync"

	"shipgraph/web/asset"
)

// AssetPath is where the page's files are served; mount the handler there
// too (see the package doc).
const AssetPath = "/ops/assets/"

// Built files of dist/ (scripts/build-ops.sh).
const (
	bundleName   = "ops.js"
	manifestName = "persisted-query-manifest.json"
)

//go:embed dist
var dist embed.FS

//go:embed page.html
var pageHTML string

//go:embed ops.css
var css []byte

//go:embed missing.html
var missingHTML []byte

// Built reports whether the bundle was built and embedded.
func Built() bool { return loaded().built }

type handler struct {
	built bool
	page  []byte
	files asset.Set
	docs  map[string]string
}

// Documents are the page's operations by persisted-query id (the SHA-256
// of the body, from the built manifest); nil when the page was not built.
// The server knows them in advance, so the page's first round of
// automatic persisted queries (the hash alone) is answered rather than
// refused as unknown.
func Documents() map[string]string { return loaded().docs }

var loaded = sync.OnceValue(func() *handler { return load(dist) })

// load reads the built files of fsys (holding dist/) and renders the page,
// whose asset URLs carry their content hash (?v=) so they cache forever.
func load(fsys fs.FS) *handler {
	h := &handler{files: asset.Set{"ops.css": asset.New(css, "text/css; charset=utf-8")}}
	js, err := fs.ReadFile(fsys, "dist/"+bundleName)
	if err != nil || len(js) == 0 {
		return h
	}
	h.built = true
	h.files[bundleName] = asset.New(js, "text/javascript; charset=utf-8")
	if m, err := fs.ReadFile(fsys, "dist/"+manifestName); err == nil {
		h.files[manifestName] = asset.New(m, "application/json")
		var man struct {
			Operations []struct{ ID, Body string }
		}
		if json.Unmarshal(m, &man) == nil {
			h.docs = map[string]string{}
			for _, op := range man.Operations {
				h.docs[op.ID] = op.Body
			}
		}
	}
	page := strings.NewReplacer(
		"{{css}}", AssetPath+"ops.css?v="+h.files["ops.css"].Version(),
		"{{js}}", AssetPath+bundleName+"?v="+h.files[bundleName].Version(),
	).Replace(pageHTML)
	h.page = []byte(page)
	return h
}

// Handler serves the page at /ops and its files under AssetPath.
func Handler() http.Handler { return loaded() }

// csp: everything from this origin, nothing inline; the WebSocket to the
// same host ('self' covers ws/wss of the origin in CSP 3).
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !asset.Readable(w, r) {
		return
	}
	if name, ok := strings.CutPrefix(r.URL.Path, AssetPath); ok {
		h.files.Serve(w, r, name)
		return
	}
	if r.URL.Path != "/ops" && r.URL.Path != "/ops/" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("Referrer-Policy", "no-referrer")
	if !h.built {
		// Say so rather than serve a page that cannot work.
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write(missingHTML)
		return
	}
	_, _ = w.Write(h.page)
}
