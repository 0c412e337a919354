package httpapi

import (
	"log/slog"
	"net/http"
	"strings"
)

// capResponse bounds the bytes of one GraphQL response: past limit the
// connection is aborted (the status and the first bytes may be out
// already; a client sees a broken response, never a truncated one that
// parses) and the request logged. The cost budget refuses most such
// requests before they run; this is the last line. Subscriptions (streams)
// are left alone. 0 = no cap.
func capResponse(limit int64, log *slog.Logger, next http.Handler) http.Handler {
	if limit <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" || strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&cappedWriter{ResponseWriter: w, left: limit, log: log, r: r}, r)
	})
}

type cappedWriter struct {
	http.ResponseWriter
	left int64
	log  *slog.Logger
	r    *http.Request
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	w.left -= int64(len(p))
	if w.left < 0 {
		w.log.Warn("response too large: connection aborted", "id", w.r.Header.Get("X-Request-Id"), "path", w.r.URL.Path)
		panic(http.ErrAbortHandler)
	}
	return w.ResponseWriter.Write(p)
}

func (w *cappedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
