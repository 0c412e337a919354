package gqlhttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"shipgraph/testkit"
)

// TestCanceledRequest: a query whose request ends before the operation
// answers (its client left, its deadline passed) is answered 503
// UNAVAILABLE, not with a recovered panic of the transport (500 and an
// internal error in the log for each such request).
func TestCanceledRequest(t *testing.T) {
	e := testkit.New(t, testkit.Options{Shipments: 3})
	k := e.Key(t, acmeAdmin)
	e.Do(t, k, `{ viewer { role } }`, nil) // the key cached: the request reaches the operation
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := e.NewRequest(t, http.MethodPost, k, "", body(t, map[string]any{"query": `{ shipments(first: 2) { nodes { id } } }`}))
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(rec, req.WithContext(ctx))
	res := (&testkit.HTTPResponse{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}).JSON(t)
	if rec.Code != http.StatusServiceUnavailable || !testkit.CodesEqual(res.Codes(), "UNAVAILABLE") {
		t.Errorf("canceled request: %d %s; want 503 UNAVAILABLE", rec.Code, rec.Body)
	}
}
