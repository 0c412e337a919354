package tracking_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"shipgraph/carrier/tracking"
	"shipgraph/graph/gqlhttp"
	"shipgraph/load"
	"shipgraph/testkit"
)

// PATCH /v2/containers/{id}/refresh through the server's chain: 200 with
// the message, a poll of the container's requests enqueued, 404 for a
// container of another account, 403 for a viewer, 429 with Retry-After
// past ten a minute.
func TestRefreshContainer(t *testing.T) {
	t.Parallel()
	env := testkit.New(t, testkit.Options{})
	c := tracking.Default
	c.Workers = 0 // enqueue only: the jobs stay for the test to see
	eng, _ := newEngine(t, c, env.Store)
	hc := testkit.Config(gqlhttp.DefaultHandlerConfig, load.DefaultLoaderConfig)
	hc.Resolver.Tracking = eng
	h := testkit.Start(t, env.Store, hc)
	var box, other string
	// A container whose shipment's request (the seed writes one per
	// shipment) is live: refresh polls live requests.
	env.SQL(t, &box, `SELECT c.id FROM containers c JOIN accounts a ON a.id = c.account_id
		JOIN tracking_requests r ON r.account_id = c.account_id AND r.shipment_id = c.shipment_id
		WHERE a.slug = 'acme' AND r.status = 'created' ORDER BY c.id LIMIT 1`)
	var req string
	env.SQL(t, &req, `SELECT r.id FROM tracking_requests r JOIN containers c ON c.account_id = r.account_id AND c.shipment_id = r.shipment_id
		WHERE c.id = $1`, box)
	env.SQL(t, &other, `SELECT c.id FROM containers c JOIN accounts a ON a.id = c.account_id WHERE a.slug = 'globex' ORDER BY c.id LIMIT 1`)
	patch := func(who, id string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPatch, "/v2/containers/"+id+"/refresh", nil)
		req.Header.Set("Authorization", "Token "+env.Key(t, who))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	// GraphQL's refreshContainer goes the same way: the container back,
	// FORBIDDEN for a viewer, NOT_FOUND for another account's.
	mutate := func(who, id string) string {
		body := `{"query":"mutation($id: ID!) { refreshContainer(id: $id) { id } }","variables":{"id":"` + id + `"}}`
		req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
		req.Header.Set("Authorization", "Token "+env.Key(t, who))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Body.String()
	}
	if got := mutate("acme/member", box); !strings.Contains(got, `"refreshContainer":{"id":"`+box+`"}`) {
		t.Fatalf("refreshContainer: %s", got)
	}
	if got := mutate("acme/viewer", box); !strings.Contains(got, `"FORBIDDEN"`) {
		t.Fatalf("refreshContainer as a viewer: %s", got)
	}
	if got := mutate("acme/member", other); !strings.Contains(got, `"NOT_FOUND"`) {
		t.Fatalf("refreshContainer of another account's container: %s", got)
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
}
