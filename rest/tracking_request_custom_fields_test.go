package rest_test

import (
	"net/http"
	"strings"
	"testing"
)

// newRequestDefinition creates a TrackingRequest definition of acme
// (short_text) through /v2 and returns its id.
func newRequestDefinition(t *testing.T, e *env, slug string) string {
	t.Helper()
	r := e.do("acme/admin", "POST", "/v2/custom_field_definitions", newDefinition("TrackingRequest", slug, "short_text"))
	if r.status != http.StatusCreated {
		t.Fatalf("POST definition: %d\n%s", r.status, r.body)
	}
	validate(t, "post-custom-field-definition-201", r.body)
	if a := obj(r.json(t), "data", "attributes"); a["entity_type"] != "TrackingRequest" || a["api_slug"] != slug {
		t.Fatalf("definition: %v", a)
	}
	return obj(r.json(t), "data")["id"].(string)
}

// TestTrackingRequestCustomFields: POST, GET (the self link), PATCH and
// DELETE of a value by slug under /v2/tracking_requests/{id}, as
// TestEntityCustomFields does for shipments and containers, and its
// tenancy and roles.
func TestTrackingRequestCustomFields(t *testing.T) {
	e := newEnv(t, envOptions{})
	const slug = "internal_ref"
	def := newRequestDefinition(t, e, slug)
	id := e.firstID("/v2/tracking_requests?page[size]=1")
	base := "/v2/tracking_requests/" + id + "/custom_fields"
	self := base + "/" + slug

	// Nothing set yet: an empty list, valid.
	list := e.do("acme/viewer", "GET", base, nil)
	if list.status != http.StatusOK || len(list.json(t)["data"].([]any)) != 0 {
		t.Fatalf("GET before: %d\n%s", list.status, list.body)
	}
	validate(t, "get-tracking-request-custom-fields-200", list.body)

	// Create: 201, Location is the self link, which answers GET.
	r := e.do("acme/member", "POST", base, newCF(slug, "REF-1"))
	if r.status != http.StatusCreated {
		t.Fatalf("POST: %d\n%s", r.status, r.body)
	}
	validate(t, "post-tracking-request-custom-field-201", r.body)
	checkDocument(t, r)
	data := obj(r.json(t), "data")
	created := data["id"].(string)
	if loc := r.header.Get("Location"); loc != publicBase+self || obj(data, "links")["self"] != loc {
		t.Errorf("Location %q, self %v, want %s", loc, obj(data, "links")["self"], publicBase+self)
	}
	if ent := obj(data, "relationships", "entity", "data"); ent["type"] != "tracking_request" || ent["id"] != id {
		t.Errorf("entity %v, want tracking_request %s", ent, id)
	}
	golden(t, "custom_field_create_tracking_requests", r, created, "<created-id>", id, "<entity-id>", def, "<definition-id>")
	g := e.do("acme/viewer", "GET", self, nil)
	if g.status != http.StatusOK || obj(g.json(t), "data")["id"] != created {
		t.Fatalf("GET self: %d\n%s", g.status, g.body)
	}
	validate(t, "get-custom-field-200", g.body)
	if up := e.do("acme/viewer", "GET", strings.Replace(self, id, strings.ToUpper(id), 1), nil); up.status != http.StatusOK || !sameData(t, up, g) {
		t.Errorf("GET with an upper-case id: %d\n%s", up.status, up.body)
	}

	// A second POST updates the value it has: 201, the same record.
	r = e.do("acme/member", "POST", base, newCF(slug, "REF-2"))
	if r.status != http.StatusCreated {
		t.Fatalf("second POST: %d\n%s", r.status, r.body)
	}
	validate(t, "post-tracking-request-custom-field-201", r.body)
	if d := obj(r.json(t), "data"); d["id"] != created || obj(d, "attributes")["value"] != "REF-2" {
		t.Errorf("second POST: %v, want id %s and value REF-2", d, created)
	}
	if n := countSlug(t, e, base, slug); n != 1 {
		t.Errorf("after the second POST %s is listed %d times", slug, n)
	}

	// Update.
	r = e.do("acme/member", "PATCH", self, cfBody("REF-3"))
	if r.status != http.StatusOK {
		t.Fatalf("PATCH: %d\n%s", r.status, r.body)
	}
	validate(t, "patch-tracking-request-custom-field-200", r.body)
	if a := obj(r.json(t), "data", "attributes"); a["value"] != "REF-3" {
		t.Errorf("PATCH: %v", a)
	}
	list = e.do("acme/viewer", "GET", base, nil)
	validate(t, "get-tracking-request-custom-fields-200", list.body)
	golden(t, "tracking_request_custom_fields", list, created, "<created-id>", id, "<entity-id>", def, "<definition-id>")

	// Another account's request is not found, to read and to write; a
	// viewer may read but not write.
	globex := "globex/admin"
	wantError(t, e.do(globex, "GET", base, nil), http.StatusNotFound, "", "")
	wantError(t, e.do(globex, "GET", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do(globex, "POST", base, newCF(slug, "x")), http.StatusNotFound, "", "")
	wantError(t, e.do(globex, "PATCH", self, cfBody("x")), http.StatusNotFound, "", "")
	wantError(t, e.do(globex, "DELETE", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/viewer", "POST", base, newCF(slug, "x")), http.StatusForbidden, "", "")
	wantError(t, e.do("acme/viewer", "PATCH", self, cfBody("x")), http.StatusForbidden, "", "")
	wantError(t, e.do("acme/viewer", "DELETE", self, nil), http.StatusForbidden, "", "")
	if got := obj(e.get(self), "data", "attributes")["value"]; got != "REF-3" {
		t.Errorf("after refused writes the value is %v", got)
	}

	// Clear with null: 204, gone.
	if r := e.do("acme/member", "PATCH", self, cfBody(nil)); r.status != http.StatusNoContent {
		t.Fatalf("clear: %d\n%s", r.status, r.body)
	}
	wantError(t, e.do("acme/member", "GET", self, nil), http.StatusNotFound, "", "")
	// PATCH of an unset value sets it (as for shipments).
	if r := e.do("acme/member", "PATCH", self, cfBody("REF-4")); r.status != http.StatusOK {
		t.Fatalf("PATCH unset: %d\n%s", r.status, r.body)
	}

	// Delete: 204, then gone (GET and a second DELETE are 404).
	r = e.do("acme/member", "DELETE", self, nil)
	if r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Fatalf("DELETE: %d\n%s", r.status, r.body)
	}
	wantError(t, e.do("acme/member", "GET", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "DELETE", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "GET", "/v2/custom_fields/"+created, nil), http.StatusNotFound, "", "")
	if n := countSlug(t, e, base, slug); n != 0 {
		t.Errorf("deleted value still listed %d times", n)
	}

	// Bad input: 404 before 422, 422 for the attributes.
	wantError(t, e.do("acme/member", "POST", base, newCF("no_such_field", "x")), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "POST", base, newCF(slug, nil)), http.StatusUnprocessableEntity, "pointer", "/data/attributes/value")
	wantError(t, e.do("acme/member", "POST", base, newCF(slug, 12)), http.StatusUnprocessableEntity, "pointer", "/data/attributes/value")
	wantError(t, e.do("acme/member", "POST", base, cfBody("x")), http.StatusUnprocessableEntity, "pointer", "/data/attributes/api_slug")
	unknown := strings.Replace(base, id, "00000000-0000-4000-8000-000000000000", 1)
	wantError(t, e.do("acme/member", "POST", unknown, newCF(slug, "x")), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "GET", unknown, nil), http.StatusNotFound, "", "")

	// A shipment's id under /v2/tracking_requests, and a request's under
	// /v2/shipments, are not found; a shipment definition's slug on a
	// request (and the reverse) is not found.
	s := shipmentWithout(t, e, "customer_po")
	wantError(t, e.do("acme/member", "POST", "/v2/tracking_requests/"+s+"/custom_fields", newCF(slug, "x")), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "GET", "/v2/tracking_requests/"+s+"/custom_fields", nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "POST", "/v2/shipments/"+id+"/custom_fields", newCF("customer_po", "x")), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "POST", base, newCF("customer_po", "x")), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "POST", "/v2/shipments/"+s+"/custom_fields", newCF(slug, "x")), http.StatusNotFound, "", "")
}

// TestTrackingRequestCustomFieldsResource: /v2/custom_fields and
// /v2/custom_field_definitions take the tracking request entity: create
// on relationships.entity of type tracking_request, the entity_type
// filters, read, update and delete by id.
func TestTrackingRequestCustomFieldsResource(t *testing.T) {
	e := newEnv(t, envOptions{})
	const slug = "desk"
	def := newRequestDefinition(t, e, slug)
	id := e.firstID("/v2/tracking_requests?page[size]=1")

	// Definitions: the filter names the new type, in either spelling.
	for _, q := range []string{"TrackingRequest", "tracking_request", "trackingrequest"} {
		r := e.do("acme/viewer", "GET", "/v2/custom_field_definitions?filter[entity_type]="+q, nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET definitions %s: %d\n%s", q, r.status, r.body)
		}
		validate(t, "get-custom-field-definitions-200", r.body)
		data := r.json(t)["data"].([]any)
		if len(data) != 1 || data[0].(map[string]any)["id"] != def {
			t.Errorf("definitions of %s: %v, want only %s", q, data, def)
		}
	}

	// Create on the entity of the relationship.
	r := e.do("acme/member", "POST", "/v2/custom_fields", newEntityCF("tracking_request", strings.ToUpper(id), slug, "D-1"))
	if r.status != http.StatusCreated {
		t.Fatalf("POST: %d\n%s", r.status, r.body)
	}
	validate(t, "post-custom-field-201", r.body)
	created := obj(r.json(t), "data")["id"].(string)
	golden(t, "custom_field_create_tracking_request", r, created, "<created-id>", id, "<entity-id>", def, "<definition-id>")
	if loc := r.header.Get("Location"); loc != publicBase+"/v2/tracking_requests/"+id+"/custom_fields/"+slug {
		t.Errorf("Location %q", loc)
	}
	for _, c := range []struct {
		body    any
		status  int
		pointer string
	}{
		{newEntityCF("tracking_request", id, slug, "x"), http.StatusUnprocessableEntity, "/data/attributes/api_slug"},
		{newEntityCF("tracking_request", id, "customer_po", "x"), http.StatusNotFound, ""},
		{newEntityCF("shipment", id, slug, "x"), http.StatusNotFound, ""},
		{newEntityCF("tracking_request", "00000000-0000-4000-8000-000000000000", slug, "x"), http.StatusNotFound, ""},
		{newEntityCF("trackingrequest", id, slug, "x"), http.StatusBadRequest, "/data/relationships/entity/data/type"},
	} {
		r := e.do("acme/member", "POST", "/v2/custom_fields", c.body)
		if c.pointer != "" {
			wantError(t, r, c.status, "pointer", c.pointer)
		} else {
			wantError(t, r, c.status, "", "")
		}
	}
	wantError(t, e.do("globex/admin", "POST", "/v2/custom_fields", newEntityCF("tracking_request", id, slug, "x")), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/viewer", "POST", "/v2/custom_fields", newEntityCF("tracking_request", id, slug, "x")), http.StatusForbidden, "", "")

	// The list's entity_type filter, in either spelling, and entity_id.
	for _, q := range []string{"filter[entity_type]=tracking_request", "filter[entity_type]=TrackingRequest", "filter[entity_id]=" + id} {
		r := e.do("acme/viewer", "GET", "/v2/custom_fields?"+q, nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", q, r.status, r.body)
		}
		validate(t, "get-custom-fields-200", r.body)
		data := r.json(t)["data"].([]any)
		if len(data) != 1 || data[0].(map[string]any)["id"] != created {
			t.Errorf("GET %s: %s, want only %s", q, r.body, created)
		}
	}
	for _, d := range e.get("/v2/custom_fields?filter[entity_type]=shipment&page[size]=100")["data"].([]any) {
		if obj(d, "relationships", "entity", "data")["type"] != "shipment" {
			t.Errorf("filter[entity_type]=shipment lists %v", d)
		}
	}
	wantError(t, e.do("acme/viewer", "GET", "/v2/custom_fields?filter[entity_type]=vessel", nil), http.StatusBadRequest, "parameter", "filter[entity_type]")
	meta := obj(e.get("/v2/custom_fields?page[size]=1"), "meta")
	total := 0.0
	for _, typ := range []string{"Shipment", "Container", "TrackingRequest"} {
		total += obj(e.get("/v2/custom_fields?page[size]=1&filter[entity_type]="+typ), "meta")["total"].(float64)
	}
	if meta["total"] != total {
		t.Errorf("total %v, the three types %v", meta["total"], total)
	}

	// By id: read (the self link answers the same), update, clear, delete.
	one := "/v2/custom_fields/" + created
	g := e.do("acme/viewer", "GET", one, nil)
	if g.status != http.StatusOK {
		t.Fatalf("GET: %d\n%s", g.status, g.body)
	}
	validate(t, "get-custom-field-200", g.body)
	selfLink := strings.TrimPrefix(obj(g.json(t), "data", "links")["self"].(string), publicBase)
	if s := e.do("acme/viewer", "GET", selfLink, nil); s.status != http.StatusOK || !sameData(t, s, g) {
		t.Errorf("GET %s: %d\n%s", selfLink, s.status, s.body)
	}
	wantError(t, e.do("globex/admin", "GET", one, nil), http.StatusNotFound, "", "")
	r = e.do("acme/member", "PATCH", one, cfBody("D-2"))
	if r.status != http.StatusOK || obj(r.json(t), "data", "attributes")["value"] != "D-2" {
		t.Fatalf("PATCH: %d\n%s", r.status, r.body)
	}
	validate(t, "patch-custom-field-200", r.body)
	if got := obj(e.get(selfLink), "data", "attributes")["value"]; got != "D-2" {
		t.Errorf("after PATCH by id the request's value is %v", got)
	}
	if r := e.do("acme/member", "PATCH", one, cfBody(nil)); r.status != http.StatusNoContent {
		t.Fatalf("clear: %d\n%s", r.status, r.body)
	}
	wantError(t, e.do("acme/member", "GET", one, nil), http.StatusNotFound, "", "")

	r = e.do("acme/member", "POST", "/v2/custom_fields", newEntityCF("tracking_request", id, slug, "D-3"))
	if r.status != http.StatusCreated {
		t.Fatalf("POST again: %d\n%s", r.status, r.body)
	}
	again := "/v2/custom_fields/" + obj(r.json(t), "data")["id"].(string)
	r = e.do("acme/member", "DELETE", again, nil)
	if r.status != http.StatusOK || obj(r.json(t), "data", "attributes")["value"] != "D-3" {
		t.Fatalf("DELETE: %d\n%s", r.status, r.body)
	}
	validate(t, "get-custom-field-200", r.body)
	wantError(t, e.do("acme/member", "GET", again, nil), http.StatusNotFound, "", "")
}
