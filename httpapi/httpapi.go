// Package httpapi is Shipgraph's HTTP chain: recover → request id + access
// log → body-size limit → authentication (API key → principal, cached,
// revocations pushed by PostgreSQL NOTIFY) → per-key rate limit →
// per-request loaders → the GraphQL handler (or the playground) on
// /graphql and the JSON:API router on /v2, beside /healthz, /readyz,
// /metrics and /playground.
//
// The composition root (package app) builds it from the configuration; the tests of graph/, rest/
// and this package build the very same chain, so there is one of it.
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
	"shipgraph/load"
	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/respcache"
	"shipgraph/rest"
	"shipgraph/sharedlimit"
	"shipgraph/web/ops"
)

// Config is what the chain needs besides the store. Start from
// DefaultConfig: a zero BodyLimit refuses every body.
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
	// Loader configures the per-request loaders.
	Loader load.LoaderConfig
	// PlaygroundKey is the API key prefilled in the playground (demos).
	PlaygroundKey string
	// PublicBaseURL is the scheme and host of absolute links in /v2
	// documents; empty takes them from the request.
	PublicBaseURL string
	// Logger gets the access log and errors; nil discards them.
	Logger *slog.Logger
	// KeyCache is how many API keys (by hash) the chain keeps resolved in
	// memory, least recently used first out; 0 looks every key up in the
	// database. Unknown keys are never cached.
	KeyCache int
	// KeyCachePing is how often the connection that listens for changed
	// keys is pinged: cached keys are trusted only while a ping was
	// answered within the last four intervals, so a connection that dies
	// without a word turns the cache off within that time. 0 means
	// DefaultKeyCachePing.
	KeyCachePing time.Duration
	// Live configures subscriptions (limits, queue, keep-alive).
	Live live.Config
	// Shared, when set (REDIS_URL), counts the rate limit and the
	// subscription limit of each key over every instance; nil counts them
	// in this process. The caller closes it after the chain.
	Shared *sharedlimit.Limits
	// Tracing, when set, traces requests (tracing.go); nil is off.
	Tracing trace.TracerProvider
	// Files is the store of document files; nil serves no
	// files. Its signed URLs are served under files.Prefix, outside
	// authentication and the body limit (a PUT is limited to its signed size).
	Files *files.Store
	// Webhooks are the webhook API's settings (WEBHOOK_LIMIT,
	// WEBHOOK_ALLOW_PRIVATE_URLS).
	Webhooks resolve.WebhookConfig
	// Resolver, when set, is the process' resolver layer (the
	// composition root, package app, builds one for the chain and the
	// webhook engine alike); nil builds one over the store with Files and
	// Webhooks.
	Resolver *resolve.Resolver
	// Listener, when set, is the process' one listening connection,
	// opened with ListenPing (the composition root shares it with the
	// webhook engine and closes it after the chain); nil: the chain opens
	// its own and closes it.
	Listener *db.Listener
	// Wrap, when set, wraps the routes after authentication and the rate
	// limit (before the loaders): tests count a request's statements
	// after its key lookup, or inject faults, there.
	Wrap func(http.Handler) http.Handler
	// Tracking is the tracking engine (carrier/tracking.Engine): refreshes
	// and polls enqueued by the API; nil answers refreshes 503.
	Tracking resolve.Tracker
	// ResponseCacheBytes bounds the response cache (respcache.go,
	// RESPONSE_CACHE_BYTES); 0 keeps no answers (ETags and 304s still
	// work). DefaultConfig leaves it 0, so that tests which change rows
	// with SQL and read them at once see them: the cache's own tests turn
	// it on; the server's default is respcache.DefaultBytes.
	ResponseCacheBytes int64
	// ResponseCacheMaxAge is the longest an answer is kept (the
	// reference cache's TTL: reference rows are not in the change log);
	// 0 is no limit.
	ResponseCacheMaxAge time.Duration
	// MCP, when set, builds the handler of /mcp (package mcp, built by the
	// composition root) from the routes after authentication and the rate
	// limit: the handler that serves POST /graphql, through which the MCP
	// tools run their operations. nil: no /mcp.
	MCP func(graphql http.Handler) http.Handler
	// DocumentJobs is the document processing (docproc.Processor) of a
	// chain that builds its own resolver layer; nil: none.
	DocumentJobs resolve.DocumentJobs
}

// DefaultKeyCachePing pings the listening connection four times a second: a
// silently dead listener stops the cache within a second.
const DefaultKeyCachePing = 250 * time.Millisecond

// DefaultConfig is the server's defaults.
var DefaultConfig = Config{
	BodyLimit:      1 << 20,
	BodyTimeout:    30 * time.Second,
	RequestTimeout: 30 * time.Second,
	ResponseLimit:  32 << 20,
	RateLimit:      6000,
	GraphQL:        gqlhttp.DefaultHandlerConfig,
	Loader:         load.DefaultLoaderConfig,
	KeyCache:       10000,
	Live:           live.DefaultConfig,
	Webhooks:       resolve.WebhookConfig{Limit: resolve.DefaultWebhookLimit},
}

// Handler is the chain. Close it after the HTTP server has drained: it
// closes the listening connection.
type Handler struct {
	h      http.Handler
	keys   *keyCache
	live   *live.Hub
	listen *db.Listener
	owned  bool // listen was opened by New: Close closes it
	bodies *bodies
	ready  *readiness
	cache  *responseCache
}

// New builds the chain over store. With a key cache it starts listening
// for changed keys at once; until the listener is up, keys are looked up
// in the database.
func New(store *db.DB, c Config) *Handler {
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if c.KeyCachePing <= 0 {
		c.KeyCachePing = DefaultKeyCachePing
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
	// One listening connection feeds both the key cache and the live hub.
	listen, owned := c.Listener, false
	if listen == nil {
		listen, owned = store.Listen(ListenPing(c)), true
	}
	keys := newKeyCache(store, listen, log, c.KeyCache, c.KeyCachePing)
	hc.Authenticate = keys.authenticate
	limits := newLimiter(c.RateLimit, c.Shared)
	if c.Shared != nil && c.Live.Shared == nil {
		c.Live.Shared = c.Shared
	}
	hc.RateLimit = limits.allowOperation
	rc := &responseCache{}
	if budget := newCostBudget(c.CostBudget, c.Shared); budget != nil {
		hc.CostBudget = budget.charge
		rc.budget = budget.charge
	}
	if c.Shared != nil {
		store.ShareLSNs(c.Shared) // read-your-writes over every instance
	}
	live := live.New(store, listen, c.Live, log)
	res := c.Resolver
	if res == nil {
		res = resolve.New(store)
		res.Files = c.Files
		res.WebhookConfig = c.Webhooks
		res.Tracking = c.Tracking
		res.Loaders = c.Loader
		res.DocumentJobs = c.DocumentJobs
		res.Shared = c.Shared
	}
	resolver := &graph.Resolver{Res: res, Live: live}
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
	if c.ResponseCacheBytes > 0 {
		rc.cache = respcache.New(c.ResponseCacheBytes, c.ResponseCacheMaxAge)
		rc.feed = newCacheFeed(store, listen, rc.cache, log)
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
	return &Handler{h: h, keys: keys, live: live, listen: listen, owned: owned, bodies: bodies, ready: ready, cache: rc}
}

// withFileBase gives the resolver layer the request's scheme and host for
// the absolute URLs of files Shipgraph serves itself.
func withFileBase(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(files.WithBaseURL(r.Context(), files.RequestBaseURL(r))))
	})
}

// ListenPing is how often the listening connection is pinged: as the
// key cache asks when it is on, as the live hub asks otherwise.
func ListenPing(c Config) time.Duration {
	ping := c.Live.Ping
	if ping <= 0 {
		ping = live.DefaultConfig.Ping
	}
	if c.KeyCache > 0 {
		keyPing := c.KeyCachePing
		if keyPing <= 0 {
			keyPing = DefaultKeyCachePing
		}
		ping = min(ping, keyPing)
	}
	return ping
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

// Close ends the live hub and the key cache (recording the last uses of
// cached keys), then closes the listening connection if New opened it.
// Requests still served after it look their keys up in the database.
func (h *Handler) Close() {
	h.live.Close()
	h.keys.close()
	if h.cache.feed != nil {
		h.cache.feed.close()
	}
	if h.owned {
		h.listen.Close()
	}
}

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

// Listener is the chain's one listening connection (the webhook fan-out's
// wake-ups share it).
func (h *Handler) Listener() *db.Listener { return h.listen }

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
