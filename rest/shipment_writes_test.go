package rest_test

import (
	"net/http"
	"slices"
	"testing"
)

// TestShipmentWrites: PATCH /v2/shipments/{id} (ref_numbers, tags) and
// stop_tracking / resume_tracking.
func TestShipmentWrites(t *testing.T) {
	e := newEnv(t, envOptions{})
	var id string
	for _, s := range e.get("/v2/shipments?filter[tracking_stopped]=false&page[size]=1")["data"].([]any) {
		id = s.(map[string]any)["id"].(string)
	}
	self := "/v2/shipments/" + id

	r := e.do("acme/member", "PATCH", self, resource("shipment", map[string]any{"ref_numbers": []string{"REF-1", " REF-2 ", "REF-1"}, "tags": []string{"hot", "", "hot", "vip"}}))
	if r.status != http.StatusOK {
		t.Fatalf("PATCH: %d\n%s", r.status, r.body)
	}
	validate(t, "patch-shipment-200", r.body)
	checkDocument(t, r)
	a := obj(r.json(t), "data", "attributes")
	if !equalList(a["ref_numbers"], "REF-1", "REF-2") || !equalList(a["tags"], "hot", "vip") {
		t.Errorf("PATCH: ref_numbers %v tags %v", a["ref_numbers"], a["tags"])
	}
	// Read back; an omitted attribute keeps its value; null clears.
	if a := obj(e.get(self), "data", "attributes"); !equalList(a["tags"], "hot", "vip") {
		t.Errorf("read back: %v", a["tags"])
	}
	r = e.do("acme/member", "PATCH", self, resource("shipment", map[string]any{"ref_numbers": nil}))
	if a := obj(r.json(t), "data", "attributes"); r.status != http.StatusOK || a["ref_numbers"] != nil || !equalList(a["tags"], "hot", "vip") {
		t.Errorf("clear ref_numbers: %d %v", r.status, a)
	}
	r = e.do("acme/member", "PATCH", self, resource("shipment", map[string]any{"tags": nil}))
	if a := obj(r.json(t), "data", "attributes"); r.status != http.StatusOK || !equalList(a["tags"]) {
		t.Errorf("clear tags: %d %v", r.status, a)
	}
	for _, c := range []struct {
		attrs   map[string]any
		pointer string
	}{
		{map[string]any{"tags": "hot"}, "/data/attributes/tags"},
		{map[string]any{"ref_numbers": []any{1}}, "/data/attributes/ref_numbers"},
		{map[string]any{"bill_of_lading_number": "X"}, "/data/attributes/bill_of_lading_number"},
	} {
		wantError(t, e.do("acme/member", "PATCH", self, resource("shipment", c.attrs)), http.StatusUnprocessableEntity, "pointer", c.pointer)
	}
	wantError(t, e.do("acme/member", "PATCH", "/v2/shipments/00000000-0000-4000-8000-000000000000", resource("shipment", map[string]any{"tags": 5})), http.StatusNotFound, "", "")

	// The member's user id, for line_tracking_stopped_by_user.
	g := e.do("acme/member", "POST", "/graphql", map[string]any{"query": "{ viewer { user { id } } }"}, "Content-Type", "application/json")
	user := obj(g.json(t), "data", "viewer", "user")["id"]

	// Stop: now, cancelled_by_user, by the key's user; listed as stopped.
	r = e.do("acme/member", "PATCH", self+"/stop_tracking?include=line_tracking_stopped_by_user", nil)
	if r.status != http.StatusOK {
		t.Fatalf("stop: %d\n%s", r.status, r.body)
	}
	validate(t, "patch-shipment-stop-tracking-200", r.body)
	checkDocument(t, r)
	doc := r.json(t)
	a = obj(doc, "data", "attributes")
	stoppedAt := a["line_tracking_stopped_at"]
	if stoppedAt == nil || a["line_tracking_stopped_reason"] != "cancelled_by_user" ||
		obj(doc, "data", "relationships", "line_tracking_stopped_by_user", "data")["id"] != user || len(doc["included"].([]any)) != 1 {
		t.Errorf("stop: %s", r.body)
	}
	found := false
	for _, s := range e.get("/v2/shipments?filter[tracking_stopped]=true&page[size]=100")["data"].([]any) {
		found = found || s.(map[string]any)["id"] == id
	}
	if !found {
		t.Errorf("a stopped shipment is not listed by filter[tracking_stopped]=true")
	}
	// Stopping again keeps when and who.
	r = e.do("acme/admin", "PATCH", self+"/stop_tracking", nil)
	if a := obj(r.json(t), "data", "attributes"); r.status != http.StatusOK || a["line_tracking_stopped_at"] != stoppedAt {
		t.Errorf("stop again: %d %v", r.status, a)
	}
	if u := obj(r.json(t), "data", "relationships", "line_tracking_stopped_by_user", "data")["id"]; u != user {
		t.Errorf("stop again changed the user to %v", u)
	}

	// Resume clears all three.
	r = e.do("acme/member", "PATCH", self+"/resume_tracking", nil)
	if r.status != http.StatusOK {
		t.Fatalf("resume: %d\n%s", r.status, r.body)
	}
	validate(t, "patch-shipment-resume-tracking-200", r.body)
	doc = r.json(t)
	if a := obj(doc, "data", "attributes"); a["line_tracking_stopped_at"] != nil || a["line_tracking_stopped_reason"] != nil ||
		obj(doc, "data", "relationships", "line_tracking_stopped_by_user")["data"] != nil {
		t.Errorf("resume: %s", r.body)
	}
	for _, p := range []string{"/stop_tracking", "/resume_tracking"} {
		wantError(t, e.do("acme/member", "PATCH", "/v2/shipments/not-a-uuid"+p, nil), http.StatusNotFound, "", "")
		wantError(t, e.do("acme/member", "GET", self+p, nil), http.StatusMethodNotAllowed, "", "")
	}
}

// equalList reports whether a JSON list holds exactly want, in order.
func equalList(v any, want ...string) bool {
	l, ok := v.([]any)
	if !ok {
		return false
	}
	got := make([]string, len(l))
	for i, x := range l {
		got[i], _ = x.(string)
	}
	return slices.Equal(got, want)
}
