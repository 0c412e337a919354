// Package playground serves the GraphiQL playground for the Shipgraph API.
//
// The gateway has to work on machines without internet access, so the
// playground's browser assets (React, ReactDOM, GraphiQL) are fetched from the
// npm registry at build time by scripts/fetch-playground-assets.sh (`make
// assets`) and embedded into the binary. When that step was skipped the
// build still succeeds (assets/README.md is committed so the embed pattern
// always matches) and the page loads the same pinned versions from a CDN
// instead, with a visible note saying so.
//
// # Routing
//
// The handler serves the page for every GET/HEAD request it receives, except
// paths containing an "/assets/" segment, which are answered from the asset
// set. The page always references its assets under AssetPath
// ("/playground/assets/<file>"), so mount the handler like this:
//
//	h := playground.Handler(playground.Options{Endpoint: "/graphql", ...})
//	mux.Handle("GET /playground", h)
//	mux.Handle("GET /playground/", h) // assets
//
// and, to show the playground to browsers doing GET /graphql, delegate those
// requests to the same handler (the page links to /playground/assets/...).
//
// # Browser hooks
//
// For automated browser checks: GraphiQL is mounted in #graphiql; the run
// button is ".graphiql-execute-button"; the result pane is
// ".graphiql-response .result-window", a CodeMirror 5 editor whose text is
// document.querySelector(".graphiql-response .result-window .CodeMirror").CodeMirror.getValue().
// The API key input is #sg-api-key. After GraphiQL has been rendered,
// <body> carries data-sg-ready="true"; data-sg-inflight and data-sg-fetches
// count the fetcher's requests in flight and completed, so a driver can let
// GraphiQL's start-up introspection settle before pressing run.
package playground

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"shipgraph/web/asset"
)

// Pinned versions; keep in sync with scripts/fetch-playground-assets.sh.
// The tests check that embedded files match the SRI hashes below, so a
// version bump in only one place fails `go test`.
const (
	GraphiQLVersion = "3.8.3"
	ReactVersion    = "18.3.1"
	ReactDOMVersion = "18.3.1"
)

// AssetPath is the absolute URL path under which the page references its
// assets. The handler must receive requests for it (see package doc).
const AssetPath = "/playground/assets/"

// cdnBase is used only by the fallback page. unpkg serves the npm tarballs'
// files verbatim, so the SRI hashes of the npm files apply to it as well.
const cdnBase = "https://unpkg.com/"

// appScript is our own bootstrap (fetcher, API key bar). It is committed
// source, so it is served locally in both modes.
const appScript = "playground.js"

//go:embed assets
var embeddedAssets embed.FS

//go:embed playground.js
var appJS []byte

// page.html is the page with {{name}} placeholders that render fills in.
// It is not an html/template: executing any text/template makes the linker
// keep every exported method of every reachable type (text/template calls
// methods by name through reflection), which made the server binary half
// again as large. The few values are escaped here by hand instead.
//
//go:embed page.html
var pageText string

// vendorAsset is one third-party browser file, in page load order.
type vendorAsset struct {
	name        string // file name in assets/ and under AssetPath
	cdnPath     string // path below cdnBase, version-pinned
	integrity   string // SRI of the pinned npm file (sha384)
	contentType string
	stylesheet  bool
}

var vendorAssets = []vendorAsset{
	{
		name:        "graphiql.min.css",
		cdnPath:     "graphiql@" + GraphiQLVersion + "/graphiql.min.css",
		integrity:   "sha384-Mq3vbRBY71jfjQAt/DcjxUIYY33ksal4cgdRt9U/hNPvHBCaT2JfJ/PTRiPKf0aM",
		contentType: "text/css; charset=utf-8",
		stylesheet:  true,
	},
	{
		name:        "react.production.min.js",
		cdnPath:     "react@" + ReactVersion + "/umd/react.production.min.js",
		integrity:   "sha384-DGyLxAyjq0f9SPpVevD6IgztCFlnMF6oW/XQGmfe+IsZ8TqEiDrcHkMLKI6fiB/Z",
		contentType: "text/javascript; charset=utf-8",
	},
	{
		name:        "react-dom.production.min.js",
		cdnPath:     "react-dom@" + ReactDOMVersion + "/umd/react-dom.production.min.js",
		integrity:   "sha384-gTGxhz21lVGYNMcdJOyq01Edg0jhn/c22nsx0kyqP0TxaV5WVdsSH1fSDUf5YJj1",
		contentType: "text/javascript; charset=utf-8",
	},
	{
		name:        "graphiql.min.js",
		cdnPath:     "graphiql@" + GraphiQLVersion + "/graphiql.min.js",
		integrity:   "sha384-HbRVEFG0JGJZeAHCJ9Xm2+tpknBQ7QZmNlO/DgZtkZ0aJSypT96YYGRNod99l9Ie",
		contentType: "text/javascript; charset=utf-8",
	},
}

// Options configures the playground page.
type Options struct {
	Endpoint   string // GraphQL endpoint path, e.g. "/graphql"; "/graphql" when empty
	DefaultKey string // prefilled API key (demo key under `make run`); may be empty
	Query      string // the example query the editor opens with; GraphiQL's default when empty
}

// Handler returns the playground handler; see the package doc for routing.
// Options are fixed at construction, so the page is rendered once here.
func Handler(o Options) http.Handler {
	return newHandler(o, embeddedSub())
}

// Embedded reports whether the fetched assets were embedded at build time.
// When false the page loads them from a CDN and says so.
func Embedded() bool { return embeddedOK() }

// embeddedOK caches Embedded: loading hashes ~4 MB, and the answer is fixed
// at build time.
var embeddedOK = sync.OnceValue(func() bool {
	_, ok := loadVendor(embeddedSub())
	return ok
})

var embeddedSub = sync.OnceValue(func() fs.FS {
	sub, err := fs.Sub(embeddedAssets, "assets")
	if err != nil { // cannot happen: "assets" is a valid path
		panic(err)
	}
	return sub
})

// loadVendor reads all vendor assets from fsys. It is all-or-nothing: a
// partial set (interrupted fetch) would give a page that half works, while
// the CDN fallback is known to work when online.
func loadVendor(fsys fs.FS) (asset.Set, bool) {
	files := make(asset.Set, len(vendorAssets))
	for _, a := range vendorAssets {
		data, err := readAsset(fsys, a.name)
		if err != nil || len(data) == 0 {
			return nil, false
		}
		files[a.name] = asset.New(data, a.contentType)
	}
	return files, true
}

// readAsset reads name.gz (as the fetch script stores the assets, to keep
// the binary small) and gunzips it, or else name as it is.
func readAsset(fsys fs.FS, name string) ([]byte, error) {
	gz, err := fs.ReadFile(fsys, name+".gz")
	if errors.Is(err, fs.ErrNotExist) {
		return fs.ReadFile(fsys, name)
	}
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

type handler struct {
	page  []byte
	csp   string
	files asset.Set // by name under AssetPath
}

// pageConfig is handed to playground.js as JSON. encoding/json escapes <, >
// and & (as \u003c etc.) and U+2028/U+2029, so neither the query nor the
// key can break out of the <script type="application/json"> element.
type pageConfig struct {
	Endpoint   string `json:"endpoint"`
	DefaultKey string `json:"defaultKey"`
	Query      string `json:"query,omitempty"`
	Embedded   bool   `json:"embedded"`
}

type pageAsset struct {
	URL        string
	Integrity  string // only for CDN URLs
	Stylesheet bool
}

type pageData struct {
	Embedded bool
	CDNHost  string
	Assets   []pageAsset
	AppURL   string
	Config   pageConfig
}

// newHandler builds the handler from an asset file system; tests use it to
// exercise the CDN fallback with an empty fs.
func newHandler(o Options, assets fs.FS) http.Handler {
	if o.Endpoint == "" {
		o.Endpoint = "/graphql"
	}
	vendor, embedded := loadVendor(assets)
	h := &handler{files: asset.Set{}}
	if embedded {
		h.files = vendor
	}
	app := asset.New(appJS, "text/javascript; charset=utf-8")
	h.files[appScript] = app

	d := pageData{
		Embedded: embedded,
		CDNHost:  strings.TrimSuffix(strings.TrimPrefix(cdnBase, "https://"), "/"),
		AppURL:   AssetPath + appScript + "?v=" + app.Version(),
		Config: pageConfig{
			Endpoint:   o.Endpoint,
			DefaultKey: o.DefaultKey,
			Query:      o.Query,
			Embedded:   embedded,
		},
	}
	for _, a := range vendorAssets {
		pa := pageAsset{Stylesheet: a.stylesheet}
		if embedded {
			pa.URL = AssetPath + a.name + "?v=" + vendor[a.name].Version()
		} else {
			pa.URL = cdnBase + a.cdnPath
			pa.Integrity = a.integrity
		}
		d.Assets = append(d.Assets, pa)
	}
	h.page = render(d)
	h.csp = contentSecurityPolicy(o.Endpoint, embedded)
	return h
}

// render fills page.html's placeholders. Attribute values and text are
// HTML-escaped; the config is JSON, which escapes what could end the
// script element.
func render(d pageData) []byte {
	config, err := json.Marshal(d.Config)
	if err != nil {
		// The config holds only strings and a bool; failing here is a
		// programming error, caught by the tests.
		panic(fmt.Sprintf("playground: render page: %v", err))
	}
	var styles, scripts []string
	for _, a := range d.Assets {
		attrs := `="` + html.EscapeString(a.URL) + `"`
		if a.Integrity != "" {
			attrs += ` integrity="` + html.EscapeString(a.Integrity) + `" crossorigin="anonymous"`
		}
		if a.Stylesheet {
			styles = append(styles, `<link rel="stylesheet" href`+attrs+`>`)
		} else {
			scripts = append(scripts, `<script src`+attrs+`></script>`)
		}
	}
	note := ""
	if !d.Embedded {
		note = `  <span id="sg-offline-note" role="note">Offline assets were not built: GraphiQL is loaded from ` +
			html.EscapeString(d.CDNHost) + `. Run <code>make assets</code> to embed them.</span>` + "\n"
	}
	return []byte(strings.NewReplacer(
		"{{stylesheets}}", strings.Join(styles, "\n"),
		"{{offline-note}}\n", note,
		"{{config}}", string(config),
		"{{scripts}}", strings.Join(scripts, "\n"),
		"{{app}}", html.EscapeString(d.AppURL),
	).Replace(pageText))
}

// contentSecurityPolicy limits the page to its own scripts (no inline
// script at all: the config travels as inert JSON), so even a bug in
// escaping could not execute injected code. GraphiQL injects <style>
// elements and uses data: fonts, hence those allowances.
func contentSecurityPolicy(endpoint string, embedded bool) string {
	scripts, styles := "'self'", "'self' 'unsafe-inline'"
	if !embedded {
		scripts += " " + cdnBase
		styles += " " + cdnBase
	}
	connect := "'self'"
	if u, err := url.Parse(endpoint); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		connect += " " + u.Scheme + "://" + u.Host
	}
	return strings.Join([]string{
		"default-src 'self'",
		"script-src " + scripts,
		"style-src " + styles,
		"font-src 'self' data:",
		"img-src 'self' data:",
		"connect-src " + connect,
		"object-src 'none'",
		"base-uri 'none'",
		"form-action 'none'",
	}, "; ")
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !asset.Readable(w, r) {
		return
	}
	if i := strings.LastIndex(r.URL.Path, "/assets/"); i >= 0 {
		h.files.Serve(w, r, r.URL.Path[i+len("/assets/"):])
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// The page embeds the (possibly demo) key and changes with the binary:
	// always revalidate, never store in shared caches.
	w.Header().Set("Cache-Control", "no-cache, private")
	w.Header().Set("Content-Security-Policy", h.csp)
	w.Header().Set("Referrer-Policy", "no-referrer")
	_, _ = w.Write(h.page)
}
