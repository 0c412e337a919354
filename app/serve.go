package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"shipgraph/carrier/tracking"
	"shipgraph/config"
	"shipgraph/db"
	"shipgraph/docproc"
	"shipgraph/httpapi"
	"shipgraph/resolve"
	"shipgraph/sharedlimit"
	"shipgraph/tracing"
)

// ErrInterrupted is the cause a context is cancelled with on Ctrl-C (SIGINT):
// serve stops at once after the requests in flight, without the
// SHUTDOWN_DELAY a load balancer needs on SIGTERM. Any other cause drains.
var ErrInterrupted = errors.New("interrupted")

// process is the serving process, built once by Serve.
type process struct {
	v       *config.Values
	log     *slog.Logger
	shared  *sharedlimit.Limits
	store   *db.DB
	tracing *tracing.Provider
	res     *resolve.Resolver
	// tracking polls carriers (carrier/tracking); it runs as a background
	// component.
	tracking *tracking.Engine
	listen   *db.Listener
	chain    *httpapi.Handler

	closers []func() // run in reverse order by close
}

// onClose registers f to run when the process is taken down, before what
// was registered earlier.
func (p *process) onClose(f func()) { p.closers = append(p.closers, f) }

func (p *process) close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
}

// Serve builds the serving process from v, serves until ctx ends, drains
// and takes it down: the composition root. The order matters: the socket
// listens first (a port in use is reported before the database starts) and
// answers 503 until the store is there and migrated; the chain is built
// over the one resolver layer and the one listening connection the
// background components share; at the end the server drains, the
// background components stop, then the chain, the listener, the files,
// tracing, the store and Redis close, in that order.
func Serve(ctx context.Context, v *config.Values, stdout io.Writer, log *slog.Logger) (err error) {
	p := &process{v: v, log: log}
	defer p.close()
	// A manifest that does not load stops the start before anything else.
	trusted, err := trustedDocuments(v, log)
	if err != nil {
		return err
	}
	if url := v.String(config.RedisURL); url != "" {
		if p.shared, err = sharedlimit.Open(url, log); err != nil {
			return err
		}
		p.onClose(p.shared.Close)
	}
	addr := v.String(config.Addr)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	p.onClose(func() { _ = ln.Close() })
	// Serve at once: until the database is there and migrated, /healthz
	// answers 200 and everything else 503 with Retry-After.
	var handler swapHandler
	handler.set(httpapi.Waiting("waiting for the database"))
	srv := &http.Server{Handler: &handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	store, closeStore, err := connectStore(ctx, v, log)
	if err != nil {
		_ = srv.Close()
		if ctx.Err() != nil {
			return nil // stopped while waiting
		}
		return err
	}
	p.store = store
	p.onClose(closeStore)
	store.SetReferenceTTL(v.Duration(config.ReferenceCacheTTL))
	// Traces only when the OTEL_* variables ask (docs/tracing.md).
	if p.tracing, err = tracing.FromEnv(ctx); err != nil {
		return err
	}
	p.onClose(func() { _ = p.tracing.Shutdown(context.Background()) })
	fileStore, err := OpenFileStore(ctx, v)
	if err != nil {
		return err
	}
	p.onClose(func() { _ = fileStore.Close() })

	hc := httpConfig(v, log)
	hc.Shared, hc.Tracing, hc.Files = p.shared, p.tracing.Provider(), fileStore
	hc.GraphQL.Trusted = trusted
	agents, err := mcpServer(log)
	if err != nil {
		return err
	}
	hc.MCP = agents.Handler
	if trusted != nil {
		trusted.Add(agents.Documents()...) // the tools' operations are trusted
	}
	docs := docproc.New(store, fileStore, log)
	if p.tracking, err = newTracking(v, store, p.shared, docs, log); err != nil {
		return err
	}
	p.res = resolve.New(store)
	p.res.Files, p.res.WebhookConfig, p.res.Tracking, p.res.DocumentJobs = fileStore, hc.Webhooks, p.tracking, docs
	p.res.Loaders = hc.Loader
	p.res.Shared = p.shared // per-key limits over every instance (test deliveries)
	hc.Resolver = p.res
	// One listening connection: the key cache, the live hub and the
	// webhook fan-out's wake-ups. It closes after the chain.
	p.listen = store.Listen(httpapi.ListenPing(hc))
	p.onClose(p.listen.Close)
	hc.Listener = p.listen
	p.chain = httpapi.New(store, hc)
	// Closes after the background components stopped and the server
	// drained: the key listener stops, the last key uses are recorded.
	p.onClose(p.chain.Close)
	// Subscriptions never drain by themselves: end them when the
	// shutdown begins. Nor do bodies a client trickles: cut them.
	srv.RegisterOnShutdown(p.chain.EndSubscriptions)
	srv.RegisterOnShutdown(p.chain.CutBodies)
	handler.set(p.chain)

	bg, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	for _, c := range p.background() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.run(bg)
			log.Debug("stopped", "component", c.name)
		}()
	}
	// Registered last, so it runs first: the background components stop
	// (the deliveries in flight finish) before the chain and the store close.
	p.onClose(func() { stopBackground(); wg.Wait() })

	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "shipgraph listening on %s\n  GraphQL:    %s/graphql\n  playground: %s/playground\n  operations: %s/ops\n  REST:       %s/v2/documents\n", base, base, base, base, base)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	return p.shutdown(srv, errc, errors.Is(context.Cause(ctx), ErrInterrupted))
}

// shutdown drains and shuts the server down. On SIGTERM (any cause but
// ErrInterrupted) /readyz says 503 so load balancers stop sending, while
// requests are still served for SHUTDOWN_DELAY, each closing its
// connection; then the shutdown, which closes only connections left idle
// all that time, ends subscriptions and waits up to SHUTDOWN_TIMEOUT for
// the requests in flight. On Ctrl-C the delay is skipped: a terminal has
// no load balancer to wait for.
func (p *process) shutdown(srv *http.Server, errc chan error, interrupted bool) error {
	p.chain.Drain()
	if delay := p.v.Duration(config.ShutdownDelay); delay > 0 && !interrupted {
		p.log.Info("draining: not ready, serving on", "for", delay)
		select {
		case err := <-errc:
			return err
		case <-time.After(delay):
		}
	}
	p.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), p.v.Duration(config.ShutdownTimeout))
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		p.log.Warn("shutdown", "err", err)
	}
	return nil
}

// httpConfig is the HTTP chain's share of the configuration.
func httpConfig(v *config.Values, log *slog.Logger) httpapi.Config {
	hc := httpapi.DefaultConfig
	hc.BodyLimit, hc.BodyTimeout, hc.RateLimit = v.Int64(config.BodyLimit), v.Duration(config.BodyTimeout), v.Int(config.RateLimit)
	hc.RequestTimeout, hc.ResponseLimit = v.Duration(config.RequestTimeout), v.Int64(config.GraphQLResponseLimit)
	g := &hc.GraphQL
	g.Introspection = v.Bool(config.GraphQLIntrospection)
	g.NoFastPath = !v.Bool(config.GraphQLFastPath)
	g.ComplexityLimit, g.DepthLimit = v.Int(config.GraphQLComplexityLimit), v.Int(config.GraphQLDepthLimit)
	g.AliasLimit, g.TokenLimit = v.Int(config.GraphQLAliasLimit), v.Int(config.GraphQLTokenLimit)
	g.FieldLimit = v.Int(config.GraphQLFieldLimit)
	hc.CostBudget = v.Int(config.GraphQLCostBudget)
	g.Logger = log
	if d := v.Duration(config.LoaderWait); d > 0 {
		hc.Loader.Wait = d
	}
	hc.PlaygroundKey = v.String(config.PlaygroundAPIKey)
	hc.PublicBaseURL = v.String(config.PublicBaseURL)
	hc.Logger = log
	hc.KeyCache = v.Int(config.KeyCache)
	hc.ResponseCacheBytes = v.Int64(config.ResponseCacheBytes)
	hc.ResponseCacheMaxAge = v.Duration(config.ReferenceCacheTTL)
	hc.Webhooks = resolve.WebhookConfig{Limit: v.Int(config.WebhookLimit), AllowPrivate: v.Bool(config.WebhookAllowPrivateURLs)}
	hc.Live.MaxPerKey, hc.Live.Queue = v.Int(config.SubscriptionLimit), v.Int(config.SubscriptionQueue)
	if d := v.Duration(config.SubscriptionKeepalive); d > 0 {
		hc.Live.KeepAlive = d
	}
	return hc
}

// swapHandler serves the handler set last: the waiting answers, then the
// chain.
type swapHandler struct{ h atomic.Pointer[http.Handler] }

func (s *swapHandler) set(h http.Handler) { s.h.Store(&h) }

func (s *swapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}
