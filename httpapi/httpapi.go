// Package httpapi is Shipgraph's HTTP chain: recover → request id + access
// log → body-size limit → authentication (API key → principal, cached,
// revocations pushed by PostgreSQL NOTIFY) → per-key rate limit →
// per-request loaders → the GraphQL handler (or the playground) on
// /graphql and the JSON:API router on /v2, beside /healthz, /readyz,
// /metrics and /playground.
//
// The composition root (package app) builds its parts (the resolver layer,
// the live hub, the key cache, the response cache and its feed, over the
// process' one listening connection) and hands them to New, which only
// puts the chain together; the tests build it through app as well, so
// there is one of it.
package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"shipgraph/db"
	"shipgraph/files"
	"shipgraph/graph"
	"shipgraph/graph/gqlhttp"
	"shipgraph/graph/playground"
	"shipgraph/live"
	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest"
	"shipgraph/sharedlimit"
	"shipgraph/web/ops"
)

// Config is the chain's own settings; the composition root (package app)
// fills it from the declared settings (config/settings.go), which hold
// every default. A zero BodyLimit refuses every body.
type Config struct {
	// BodyLimit is the largest request body in bytes (413 beyond; at
	// once when the Content-Length announces more).
	BodyLimit int64
	// BodyTimeout is how long a request body may take to arrive, from
	// the end of its headers; a client still sending after it is cut.
	// 0 = no limit.
	BodyTimeout time.Duration
	// ResponseLimit caps the bytes of one GraphQL response (the
	// connection is aborted past it); 0 = no cap.
	ResponseLimit int64
	// RequestTimeout bounds each API request (subscriptions excepted):
	// its context ends then, cancelling its statements (503). 0 = none.
	RequestTimeout time.Duration
	// RateLimit is requests per minute per API key (bursts of a tenth);
	// 0 turns the limit off.
	RateLimit int
	// CostBudget is the GraphQL complexity a key may spend a minute
	// (budget.go; every operation is charged its complexity); 0 turns it
	// off. Counted per process, or over every instance with Shared.
	CostBudget int
	// GraphQL holds the GraphQL limits and switches (introspection,
	// complexity, depth, aliases, parser tokens, caches). Its Logger
	// defaults to Logger; RequestID is set by New.
	GraphQL gqlhttp.HandlerConfig
	// PlaygroundKey is the API key prefilled in the playground (demos).
	PlaygroundKey string
	// PublicBaseURL is the scheme and host of absolute links in /v2
	// documents; empty takes them from the request.
	PublicBaseURL string
	// Logger gets the access log and errors; nil discards them.
	Logger *slog.Logger
	// Shared, when set (REDIS_URL), counts the rate limit and the cost
	// budget of each key over every instance; nil counts them in this
	// process. The caller closes it after the chain.
	Shared *sharedlimit.Limits
	// Tracing, when set, traces requests (tracing.go); nil is off.
	Tracing trace.TracerProvider
	// Files is the store of document files; nil serves no files. Its
	// signed URLs are served under files.Prefix, outside authentication
	// and the body limit (a PUT is limited to its signed size).
	Files *files.Store
	// Wrap, when set, wraps the routes after authentication and the rate
	// limit (before the loaders): tests count a request's statements
	// after its key lookup, or inject faults, there.
	Wrap func(http.Handler) http.Handler
	// MCP, when set, builds the handler of /mcp (package mcp, built by the
	// composition root) from the routes after authentication and the rate
	// limit: the handler that serves POST /graphql, through which the MCP
	// tools run their operations. nil: no /mcp.
	MCP func(graphql http.Handler) http.Handler
}

// Parts are what the chain serves, built by the composition root (package
// app) and closed by it after the chain: New builds none of them.
type Parts struct {
	// Resolver is the process' resolver layer, behind both APIs.
	Resolver *resolve.Resolver
	// Live is the subscriptions' hub.
	Live *live.Hub
	// Keys resolves API keys (cached or not).
	Keys *KeyCache
	// Cache keeps answers until what they read changes; nil keeps none
	// (ETags and 304s still work).
	Cache *ResponseCache
}

// Handler is the chain.
type Handler struct {
	h      http.Handler
	keys   *keyCache
	live   *live.Hub
	bodies *bodies
	ready  *readiness
	cache  *responseCache
}

// New puts the chain together over store from c and the parts it serves.
func New(store *db.DB, c Config, parts Parts) *Handler {
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hc := c.GraphQL
	if hc.Logger == nil {
		hc.Logger = log
	}
	hc.RequestID = requestIDFrom
	if hc.KnownDocuments == nil {
		hc.KnownDocuments = ops.Documents() // the operations page's, known in advance
	}
	hc.Tracing = c.Tracing != nil
	if c.Files != nil {
		hc.MaxUploadSize = c.Files.MaxSize() + c.BodyLimit
	}
	keys := parts.Keys.c
	hc.Authenticate = keys.authenticate
	limits := newLimiter(c.RateLimit, c.Shared)
	hc.RateLimit = limits.allowOperation
	rc := &responseCache{}
	if budget := newCostBudget(c.CostBudget, c.Shared); budget != nil {
		hc.CostBudget = budget.charge
		rc.budget = budget.charge
	}
	res := parts.Resolver
	resolver := &graph.Resolver{Res: res, Live: parts.Live}
	gql := gqlhttp.NewHandler(resolver, hc)
	pg := playground.Handler(playground.Options{Endpoint: "/graphql", DefaultKey: c.PlaygroundKey, Query: graph.DashboardQuery})

	api := http.NewServeMux()
	api.Handle("/graphql", capResponse(c.ResponseLimit, log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A browser navigating to /graphql gets the playground.
		if r.Method == http.MethodGet && r.URL.RawQuery == "" && strings.Contains(r.Header.Get("Accept"), "text/html") {
			pg.ServeHTTP(w, r)
			return
		}
		gql.ServeHTTP(w, r)
	})))
	v2 := rest.NewHandler(res, rest.Config{PublicBaseURL: c.PublicBaseURL})
	api.Handle("/v2/", v2)
	api.Handle("/rails/active_storage/direct_uploads", v2)

	var routed http.Handler = api
	if c.Files != nil {
		routed = withFileBase(api)
	}
	if parts.Cache != nil {
		rc.cache, rc.feed = parts.Cache.cache, parts.Cache.feed
		if c.Shared != nil {
			rc.positions, rc.store = c.Shared, store
		}
	}
	var need func(string) (uint64, time.Time)
	if rc.feed != nil {
		need = rc.feed.lastChange
	}
	routes := rc.wrap(sessions(store, need, loaders(res, routed)))
	if c.MCP != nil {
		api.Handle("/mcp", c.MCP(routes))
	}
	if c.Wrap != nil {
		routes = c.Wrap(routes)
	}
	authed := authenticate(keys, log, rateLimit(limits, routes))

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	ready := &readiness{store: store, log: log}
	mux.Handle("GET /readyz", ready)
	mux.Handle("GET /metrics", promhttp.Handler())
	mux.Handle("/playground/", pg)
	mux.Handle("/playground", pg)
	// The live operations page (web/ops): static files; its key is typed in
	// the page and sent with each API request.
	opsPage := ops.Handler()
	mux.Handle("/ops", opsPage)
	mux.Handle("/ops/", opsPage)
	bodies := newBodies(c.BodyLimit, c.BodyTimeout)
	if c.Files != nil {
		bodies.upload = c.Files.MaxSize() + c.BodyLimit
		mux.Handle(files.Prefix, http.MaxBytesHandler(c.Files.Handler(), c.Files.MaxSize()))
	}
	mux.Handle("/", validText(bodies.wrap(requestDeadline(c.RequestTimeout, authed))))
	h := recoverer(log, accessLog(log, mux))
	if c.Tracing != nil {
		h = traced(c.Tracing, h)
	}
	return &Handler{h: h, keys: keys, live: parts.Live, bodies: bodies, ready: ready, cache: rc}
}

// withFileBase gives the resolver layer the request's scheme and host for
// the absolute URLs of files Shipgraph serves itself.
func withFileBase(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(files.WithBaseURL(r.Context(), files.RequestBaseURL(r))))
	})
}

// loaders is the per-request identity step: the principal authenticate
// found, and loaders of its account, put together by the resolver layer
// (resolve.Session, the one place every transport uses).
func loaders(res *resolve.Resolver, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := model.PrincipalFrom(r.Context()); p != nil {
			r = r.WithContext(res.Session(r.Context(), p))
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP serves one request through the chain.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.ready.draining.Load() {
		// Draining: every answer closes its connection, so clients
		// leave the keep-alive connections the shutdown would close
		// under a request they just sent.
		w.Header().Set("Connection", "close")
	}
	h.h.ServeHTTP(w, r)
}

// Drain begins a shutdown: /readyz answers 503 (load balancers stop
// sending), while requests are still served, each closing its connection.
// Call it, wait SHUTDOWN_DELAY, then shut the server down.
func (h *Handler) Drain() { h.ready.draining.Store(true) }

// EndSubscriptions ends every subscription (WebSockets close with 1001
// "server shutting down", SSE streams complete) and refuses new ones: call
// it when a shutdown begins, or the server would wait for them to drain.
func (h *Handler) EndSubscriptions() { h.live.EndAll() }

// CutBodies ends the reads of request bodies still arriving (and refuses
// time to those to come): call it when a shutdown begins, or the server
// would wait for slow clients up to their body timeout.
func (h *Handler) CutBodies() { h.bodies.cut() }

// Subscriptions is the number of subscriptions open.
func (h *Handler) Subscriptions() int { return h.live.Count() }

// KeyCacheLive reports whether keys are served from the cache now: the
// cache is on, its listener is listening and was heard from lately.
func (h *Handler) KeyCacheLive() bool { return h.keys.isLive() }

// ResponseCacheLive reports whether the response cache serves answers: it
// is on and follows the change log.
func (h *Handler) ResponseCacheLive() bool { return h.cache.cache != nil && h.cache.cache.Live() }

// WaitResponseCache returns once the response cache read account's change
// log up to position pos (what changes up to it touched is dropped) and
// serves, or ctx ends; with account "", once it serves; at once when the
// cache is off.
func (h *Handler) WaitResponseCache(ctx context.Context, account string, pos int64) error {
	if h.cache.feed == nil {
		return nil
	}
	return h.cache.feed.wait(ctx, account, pos)
}
