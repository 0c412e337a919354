package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"shipgraph/db"
	"shipgraph/graph/gqlhttp"
	"shipgraph/model"
	"shipgraph/rest/jsonapi"
	"shipgraph/sharedlimit"
)

type requestIDKey struct{}

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// writeError answers a request the chain refuses before routing in the
// shape of the API it was meant for: a JSON:API error document on /v2, a
// GraphQL response with extensions.code on /graphql, plain text elsewhere.
func writeError(w http.ResponseWriter, r *http.Request, status int, err error) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/v2/"):
		jsonapi.WriteError(w, r, err)
	case r.URL.Path == "/graphql":
		gqlhttp.WriteRequestError(w, r, status, err)
	default:
		http.Error(w, model.ErrorMessage(err), status)
	}
}

// accessLog gives every request an id (kept from X-Request-Id when sane),
// counts the SQL statements it cost and logs one line when it ends.
func accessLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if len(id) == 0 || len(id) > 64 || strings.ContainsFunc(id, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			id = hex.EncodeToString(b)
		}
		r.Header.Set("X-Request-Id", id)
		w.Header().Set("X-Request-Id", id)
		spanRequestID(r, id)
		var queries atomic.Int64
		ctx := context.WithValue(r.Context(), requestIDKey{}, id)
		ctx = db.WithQueryCounter(ctx, &queries)
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		start := time.Now()
		returned := false
		defer func() {
			// A request that panicked is logged too, as the 500 the
			// recoverer answers.
			status := sw.status
			if !returned {
				status = http.StatusInternalServerError
			}
			log.Info("request", "id", id, "method", r.Method, "path", r.URL.Path, "status", status,
				"bytes", sw.bytes, "ms", float64(time.Since(start).Microseconds())/1000, "queries", queries.Load())
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
		returned = true
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush lets streaming responses (GraphQL over SSE) through: gqlgen's SSE
// transport asks for an http.Flusher directly.
func (w *statusWriter) Flush() {
	w.wrote = true
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// recoverer turns a panic into a logged 500 in the shape of the API
// (rather than a dropped connection). When the response had already begun,
// a second one cannot follow: the connection is aborted instead, so the
// client sees a broken response, not a truncated one that parses.
func recoverer(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			log.Error("panic", "id", r.Header.Get("X-Request-Id"), "method", r.Method, "path", r.URL.Path, "panic", p)
			if sw.wrote {
				panic(http.ErrAbortHandler)
			}
			writeError(w, r, http.StatusInternalServerError, fmt.Errorf("panic: %v", p))
		}()
		next.ServeHTTP(sw, r)
	})
}

// authenticate resolves `Authorization: Token <key>` (or Bearer) to a
// principal, through the key cache. A missing or rejected key leaves the
// request anonymous: /v2 answers 401 and GraphQL an UNAUTHENTICATED error.
// A store failure is a 503.
func authenticate(keys *keyCache, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, key, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		if ok && (strings.EqualFold(scheme, "Token") || strings.EqualFold(scheme, "Bearer")) {
			p, err := keys.authenticate(r.Context(), strings.TrimSpace(key))
			switch {
			case err == nil:
				r = r.WithContext(model.WithPrincipal(r.Context(), p))
			case model.ErrorCode(err) != model.EUNAUTHENTICATED:
				log.Warn("authentication failed: the database is unavailable", "id", r.Header.Get("X-Request-Id"), "err", err)
				w.Header().Set("Retry-After", "5")
				writeError(w, r, http.StatusServiceUnavailable,
					model.Errorf(model.EUNAVAILABLE, "the database is unavailable; try again shortly"))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// rateLimit allows each API key perMinute requests a minute (token bucket,
// bursts up to a tenth of that), answering 429 with Retry-After beyond it.
func rateLimit(l *limiter, next http.Handler) http.Handler {
	if l == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := model.PrincipalFrom(r.Context())
		if p == nil {
			next.ServeHTTP(w, r)
			return
		}
		if err := l.allow(r.Context(), p.TokenID); err != nil {
			w.Header().Set("Retry-After", strconv.Itoa(err.retryAfter))
			writeError(w, r, http.StatusTooManyRequests, err.err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// limiter is the per-key token buckets of the rate limit, shared by HTTP
// requests and the operations sent on a WebSocket. With shared set (Redis)
// the buckets are Redis' (GCRA, one per key over every instance), and the
// per-process ones decide only while Redis does not answer.
type limiter struct {
	shared    *sharedlimit.Limits
	perMinute int
	every     rate.Limit
	burst     int
	mu        sync.Mutex
	limiters  map[string]*rate.Limiter
}

// newLimiter returns the limiter of perMinute requests a minute per key;
// nil (no limit) when perMinute is not positive.
func newLimiter(perMinute int, shared *sharedlimit.Limits) *limiter {
	if perMinute <= 0 {
		return nil
	}
	return &limiter{
		shared:    shared,
		perMinute: perMinute,
		every:     rate.Every(time.Minute / time.Duration(perMinute)),
		burst:     max(perMinute/10, 1),
		limiters:  map[string]*rate.Limiter{},
	}
}

type limited struct {
	err        *model.Error
	retryAfter int // seconds
}

// allow takes one request of tokenID from its bucket, or says how long to
// wait.
func (l *limiter) allow(ctx context.Context, tokenID string) *limited {
	if l.shared != nil {
		if delay, ok := l.shared.Allow(ctx, tokenID, l.perMinute, l.burst); ok {
			return l.refusal(delay)
		}
	}
	l.mu.Lock()
	b, ok := l.limiters[tokenID]
	if !ok {
		b = rate.NewLimiter(l.every, l.burst)
		l.limiters[tokenID] = b
	}
	res := b.Reserve()
	delay := res.Delay()
	if delay > 0 {
		res.Cancel()
	}
	l.mu.Unlock()
	return l.refusal(delay)
}

// refusal is the 429 of a request that must wait delay (nil when it need
// not).
func (l *limiter) refusal(delay time.Duration) *limited {
	if delay <= 0 {
		return nil
	}
	secs := int(delay/time.Second) + 1
	return &limited{model.Errorf(model.ERATELIMITED, "rate limit of %d requests per minute exceeded; retry in %d s", l.perMinute, secs), secs}
}

// allowOperation is the limit of an operation on a WebSocket.
func (l *limiter) allowOperation(ctx context.Context, p *model.Principal) error {
	if l == nil || p == nil {
		return nil
	}
	if lim := l.allow(ctx, p.TokenID); lim != nil {
		return lim.err
	}
	return nil
}
