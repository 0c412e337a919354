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

	"shipgraph/config"
	"shipgraph/db"
	"shipgraph/httpapi"
	"shipgraph/jobs"
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
	// jobs is the one job engine (tracking polls, document processing);
	// it runs as a background component.
	jobs   *jobs.Engine
	listen *db.Listener
	chain  *Chain

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

	cc := HTTPConfig(v, log)
	cc.Shared, cc.Tracing, cc.Files = p.shared, p.tracing.Provider(), fileStore
	cc.GraphQL.Trusted = trusted
	agents, err := mcpServer(log)
	if err != nil {
		return err
	}
	cc.MCP = agents.Handler
	if trusted != nil {
		trusted.Add(agents.Documents()...) // the tools' operations are trusted
	}
	jobs, docs, trk, syncer, err := newJobs(v, store, p.shared, fileStore, log)
	if err != nil {
		return err
	}
	p.jobs = jobs
	cc.Resolver.Tracking, cc.Resolver.DocumentJobs, cc.Resolver.DataSync = trk, docs, syncer
	// The chain's parts: the one resolver layer and the one listening
	// connection (the key cache, the live hub, the response cache and the
	// webhook fan-out's wake-ups), which the background components share.
	p.chain = NewChain(store, cc)
	p.res, p.listen = p.chain.Resolver, p.chain.Listener
	// Closes after the background components stopped and the server
	// drained: the key listener stops, the last key uses are recorded,
	// the listening connection closes.
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

// swapHandler serves the handler set last: the waiting answers, then the
// chain.
type swapHandler struct{ h atomic.Pointer[http.Handler] }

func (s *swapHandler) set(h http.Handler) { s.h.Store(&h) }

func (s *swapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}
