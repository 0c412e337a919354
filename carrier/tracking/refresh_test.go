package tracking_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"shipgraph/carrier/tracking"
	"shipgraph/graph/gqlhttp"
	"shipgraph/graph/graphtest"
	"shipgraph/load"
)

// PATCH /v2/containers/{id}/refresh through the server's chain: 200 with
// the message, a poll of the container's requests enqueued, 404 for a
// container of another account, 403 for a viewer, 429 with Retry-After
// past ten a minute.
func TestRefreshContainer(t *testing.T) {
	t.Parallel()
	env := graphtest.New(t, graphtest.Options{})
	c := tracking.Default
	c.Workers = 0 // enqueue only: the jobs stay for the test to see
	eng, err := tracking.New(c, env.Store, nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := graphtest.Config(gqlhttp.DefaultHandlerConfig, load.DefaultLoaderConfig)
	hc.Tracking = eng
	h := graphtest.Start(t, env.Store, hc)
	var box, other string
	// A container of acme and its shipment's request: the seed writes one
	// request per shipment (created, or tracking_stopped with its shipment);
	// a live one is taken.
	var req string
	env.SQL(t, &box, `SELECT c.id FROM containers c JOIN accounts a ON a.id = c.account_id
		JOIN tracking_requests r ON r.account_id = c.account_id AND r.shipment_id = c.shipment_id AND r.status = 'created'
		WHERE a.slug = 'acme' ORDER BY c.id LIMIT 1`)
	env.SQL(t, &req, `SELECT r.id FROM tracking_requests r JOIN containers c ON c.account_id = r.account_id AND c.shipment_id = r.shipment_id
		WHERE c.id = $1 AND r.status = 'created'`, box)
	env.SQL(t, &other, `SELECT c.id FROM containers c JOIN accounts a ON a.id = c.account_id WHERE a.slug = 'globex' ORDER BY c.id LIMIT 1`)
	patch := func(who, id string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPatch, "/v2/containers/"+id+"/refresh", nil)
		req.Header.Set("Authorization", "Token "+env.Key(t, who))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	if w := patch("acme/member", other); w.Code != http.StatusNotFound {
		t.Fatalf("another account's container: %d %s", w.Code, w.Body)
	}
	if w := patch("acme/viewer", box); w.Code != http.StatusForbidden {
		t.Fatalf("a viewer: %d %s", w.Code, w.Body)
	}
	for i := 0; i < 10; i++ {
		w := patch("acme/admin", box)
		var body struct{ Message string }
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &body) != nil || body.Message == "" {
			t.Fatalf("refresh %d: %d %s", i+1, w.Code, w.Body)
		}
	}
	w := patch("acme/admin", box)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("the 11th refresh in a minute: %d (Retry-After %q) %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	var jobs int
	env.SQL(t, &jobs, `SELECT count(*) FROM river_job WHERE kind = 'tracking_poll' AND priority = 1 AND state = 'available'
		AND args->>'request_id' = $1`, req)
	if jobs != 1 {
		t.Fatalf("%d poll jobs first in line, want the one of the container's request (unique while waiting)", jobs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = eng.Stop(ctx)
}
