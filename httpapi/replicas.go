package httpapi

import (
	"net/http"
	"strings"
	"time"

	"shipgraph/db"
	"shipgraph/model"
)

// sessions gives each authenticated request a routing session of the
// store (db/replica.go) when it has read replicas: GETs and GraphQL
// requests may read from a replica (a mutation goes to the primary from
// its first write on), other requests (/v2 writes) read from the primary,
// and subscriptions (WebSocket, SSE) read from the primary (the re-read
// of a change's record has a session of its own, db.WithReadAt) and record
// each write at once. A request that wrote has its account's WAL position
// recorded before the first byte of its answer (Acknowledge), so that its
// client's next read, on any instance, sees the write.
//
// need, when set (the response cache's), is the WAL position of the last
// change of the account the process heard of: a read that may use a replica
// uses one that replayed it (or the primary), so that an answer the
// response cache keeps is never older than a change it already dropped for.
func sessions(store *db.DB, need func(account string) (uint64, time.Time), next http.Handler) http.Handler {
	if len(store.Replicas()) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := db.PrimaryOnly
		switch {
		case r.Header.Get("Upgrade") != "" || strings.Contains(r.Header.Get("Accept"), "text/event-stream"):
			kind = db.Streaming
		case r.Method == http.MethodGet || r.Method == http.MethodHead || (r.Method == http.MethodPost && r.URL.Path == "/graphql"):
			kind = db.ReadsMayUseReplica
		}
		ctx := store.WithSession(r.Context(), kind)
		if kind == db.ReadsMayUseReplica && need != nil {
			if p := model.PrincipalFrom(r.Context()); p != nil {
				if lsn, at := need(p.AccountID); lsn > 0 {
					ctx = store.WithReadAt(ctx, lsn, at)
				}
			}
		}
		r = r.WithContext(ctx)
		if kind == db.Streaming {
			next.ServeHTTP(w, r)
			return
		}
		aw := &ackWriter{ResponseWriter: w, ack: func() { store.Acknowledge(ctx) }}
		next.ServeHTTP(aw, r)
		aw.acknowledge() // an answer with no body
	})
}

// ackWriter acknowledges the session's writes before the first byte of the
// answer leaves.
type ackWriter struct {
	http.ResponseWriter
	ack   func()
	acked bool
}

func (w *ackWriter) acknowledge() {
	if !w.acked {
		w.acked = true
		w.ack()
	}
}

func (w *ackWriter) WriteHeader(code int) {
	w.acknowledge()
	w.ResponseWriter.WriteHeader(code)
}

func (w *ackWriter) Write(p []byte) (int, error) {
	w.acknowledge()
	return w.ResponseWriter.Write(p)
}

func (w *ackWriter) Flush() {
	w.acknowledge()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *ackWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
