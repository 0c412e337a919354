package tracking_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"shipgraph/carrier/dcsa"
	"shipgraph/carrier/tracking"
	"shipgraph/graph/gqlhttp"
	"shipgraph/load"
	"shipgraph/testkit"
)

// notFound is a carrier that knows no number (the test polls nothing).
type notFound struct{}

func (notFound) Events(context.Context, tracking.Query) ([]dcsa.Event, error) {
	return nil, tracking.ErrNotFound
}

// TestCreateRefusesUnservedScac: with tracking running, a real shipping
// line's SCAC that no configured carrier (CARRIERS) serves is a 422 at scac
// naming the setting, on /v2 and in GraphQL, and nothing is stored; a
// served SCAC is created.
func TestCreateRefusesUnservedScac(t *testing.T) {
	t.Parallel()
	env := testkit.New(t, testkit.Options{})
	c := tracking.Default
	c.Workers = 0 // enqueue only
	eng, _ := newEngine(t, c, env.Store, tracking.WithConnector("MSCU", notFound{}))
	hc := testkit.Config(gqlhttp.DefaultHandlerConfig, load.DefaultLoaderConfig)
	hc.Resolver.Tracking = eng
	h := testkit.Start(t, env.Store, hc)
	post := func(scac string) *httptest.ResponseRecorder {
		body := `{"data":{"type":"tracking_request","attributes":{"request_type":"bill_of_lading","request_number":"SUDUN4BA012345","scac":"` + scac + `"}}}`
		req := httptest.NewRequest(http.MethodPost, "/v2/tracking_requests", strings.NewReader(body))
		req.Header.Set("Authorization", "Token "+env.Key(t, "acme/member"))
		req.Header.Set("Content-Type", "application/vnd.api+json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	w := post("SUDU")
	if b := w.Body.String(); w.Code != http.StatusUnprocessableEntity || !strings.Contains(b, `"pointer":"/data/attributes/scac"`) || !strings.Contains(b, "CARRIERS") {
		t.Fatalf("SUDU without a carrier: %d %s", w.Code, b)
	}
	body := `{"query":"mutation { createTrackingRequest(input: {requestType: \"bill_of_lading\", requestNumber: \"SUDUN4BA012345\", scac: \"SUDU\"}) { id } }"}`
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
	req.Header.Set("Authorization", "Token "+env.Key(t, "acme/member"))
	req.Header.Set("Content-Type", "application/json")
	g := httptest.NewRecorder()
	h.ServeHTTP(g, req)
	if b := g.Body.String(); !strings.Contains(b, `"BAD_USER_INPUT"`) || !strings.Contains(b, `"field":"scac"`) || !strings.Contains(b, "CARRIERS") {
		t.Fatalf("GraphQL, SUDU without a carrier: %s", b)
	}
	var n int
	env.SQL(t, &n, `SELECT count(*) FROM tracking_requests WHERE request_number = 'SUDUN4BA012345'`)
	if n != 0 {
		t.Fatalf("refused creates stored %d requests", n)
	}
	if w := post("MSCU"); w.Code != http.StatusCreated {
		t.Fatalf("MSCU, served: %d %s", w.Code, w.Body)
	}
}
