package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// requestDeadline runs every API request under a deadline: its context
// ends after d (or when the client goes away, which net/http already
// signals), so the store's statements are cancelled and the request
// answers 503 rather than holding a connection. Subscriptions (WebSocket
// upgrades, SSE streams) live as long as their client and are left alone.
func requestDeadline(d time.Duration, next http.Handler) http.Handler {
	if d <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" || strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
