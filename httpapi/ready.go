package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"shipgraph/db"
	"shipgraph/model"
)

// ReadyTimeout is how long /readyz waits for the database.
const ReadyTimeout = 2 * time.Second

// pingTimeout bounds one ping behind /readyz: a frozen database holds one
// goroutine at most that long, whatever the probes do.
const pingTimeout = 30 * time.Second

var errDraining = errors.New("shutting down")

// readiness answers /readyz within ReadyTimeout whatever the database
// does (read replicas are listed after the answer's first line, and never
// fail it): one ping runs at a time, in the background, and a probe waits for
// it no longer than its timeout (lib/pq does not give up a statement the
// server never answers when its context ends). A draining server is not
// ready, whatever the database says.
type readiness struct {
	store    *db.DB
	log      *slog.Logger
	draining atomic.Bool

	mu     sync.Mutex
	flight *pingFlight
}

type pingFlight struct {
	done chan struct{}
	err  error
}

func (rd *readiness) check(ctx context.Context) error {
	if rd.draining.Load() {
		return errDraining
	}
	rd.mu.Lock()
	f := rd.flight
	if f == nil {
		f = &pingFlight{done: make(chan struct{})}
		rd.flight = f
		go func() {
			pctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
			f.err = rd.store.Ping(pctx)
			cancel()
			rd.mu.Lock()
			rd.flight = nil
			rd.mu.Unlock()
			close(f.done)
		}()
	}
	rd.mu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (rd *readiness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	err := rd.check(ctx)
	switch {
	case err == nil:
		_, _ = io.WriteString(w, "ok\n"+replicaLines(rd.store))
		return
	case errors.Is(err, errDraining):
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "shutting down\n")
		return
	}
	rd.log.Warn("readiness check failed", "err", err)
	w.Header().Set("Retry-After", "2")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = io.WriteString(w, "database unreachable\n"+replicaLines(rd.store))
}

// replicaLines reports each read replica, one line each ("replica
// host/db: up, lag 12ms"; "down: why"; "lagging"). Replicas never make the
// server unready: reads fall back to the primary.
func replicaLines(store *db.DB) string {
	var b strings.Builder
	for _, r := range store.Replicas() {
		fmt.Fprintf(&b, "replica %s: %s, lag %v", r.Name, r.State, r.Lag.Round(time.Millisecond))
		if r.Err != "" {
			fmt.Fprintf(&b, " (%s)", r.Err)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Waiting is the server's answer while it has no store yet (the database
// is not reachable at start): /healthz 200 (the process is alive),
// /readyz 503, every other request 503 with Retry-After in the shape of
// its API. app/serve.go serves it from the start and swaps the chain in once
// the database is there and migrated.
func Waiting(what string) http.Handler {
	err := &model.Error{Code: model.EUNAVAILABLE, Message: "the server is starting: " + what + "; try again shortly"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" && r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "ok\n")
			return
		}
		w.Header().Set("Retry-After", "2")
		if r.URL.Path == "/readyz" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, what+"\n")
			return
		}
		writeError(w, r, http.StatusServiceUnavailable, err)
	})
}
