package ops

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
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

type file struct {
	data        []byte
	contentType string
	etag        string
	version     string
}

func newFile(data []byte, contentType string) *file {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	return &file{data: data, contentType: contentType, etag: `"` + h[:32] + `"`, version: h[:16]}
}

// Built reports whether the bundle was built and embedded.
func Built() bool { return loaded().built }

type handler struct {
	built bool
	page  []byte
	files map[string]*file
}

var loaded = sync.OnceValue(func() *handler { return load(dist) })

// load reads the built files of fsys (holding dist/) and renders the page,
// whose asset URLs carry their content hash (?v=) so they cache forever.
func load(fsys fs.FS) *handler {
	h := &handler{files: map[string]*file{"ops.css": newFile(css, "text/css; charset=utf-8")}}
	js, err := fs.ReadFile(fsys, "dist/"+bundleName)
	if err != nil || len(js) == 0 {
		return h
	}
	h.built = true
	h.files[bundleName] = newFile(js, "text/javascript; charset=utf-8")
	if m, err := fs.ReadFile(fsys, "dist/"+manifestName); err == nil {
		h.files[manifestName] = newFile(m, "application/json")
	}
	page := strings.NewReplacer(
		"{{css}}", AssetPath+"ops.css?v="+h.files["ops.css"].version,
		"{{js}}", AssetPath+bundleName+"?v="+h.files[bundleName].version,
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
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if name, ok := strings.CutPrefix(r.URL.Path, AssetPath); ok {
		h.serveAsset(w, r, name)
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

func (h *handler) serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	f, ok := h.files[name]
	if !ok || name != path.Base(name) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.contentType)
	w.Header().Set("ETag", f.etag)
	if r.URL.Query().Get("v") == f.version {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.data))
}
