package rest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"shipgraph/testkit"
)

// containerWithout returns a container of acme with no value for slug.
func containerWithout(t *testing.T, e *env, slug string) string {
	t.Helper()
	for _, c := range e.get("/v2/containers?page[size]=100")["data"].([]any) {
		id := c.(map[string]any)["id"].(string)
		found := false
		for _, cf := range e.get("/v2/containers/" + id + "/custom_fields")["data"].([]any) {
			found = found || obj(cf, "attributes")["api_slug"] == slug
		}
		if !found {
			return id
		}
	}
	t.Fatalf("every container has a %s value", slug)
	return ""
}

// TestEntityCustomFields: POST, GET (the self link), PATCH and DELETE of a
// value by slug under /v2/shipments/{id} and /v2/containers/{id}.
func TestEntityCustomFields(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, c := range []struct {
		entity, slug, postSchema, patchSchema, listSchema string
		value, changed                                    any
	}{
		{"shipments", "customer_po", "post-shipment-custom-field-201", "patch-shipment-custom-field-200", "get-shipment-custom-fields-200", "ABC124", "ABC125"},
		{"containers", "yard_slot", "post-container-custom-field-201", "patch-container-custom-field-200", "get-container-custom-fields-200", "B-12", "B-13"},
	} {
		t.Run(c.entity, func(t *testing.T) {
			var id string
			if c.entity == "shipments" {
				id = shipmentWithout(t, e, c.slug)
			} else {
				id = containerWithout(t, e, c.slug)
			}
			base := "/v2/" + c.entity + "/" + id + "/custom_fields"
			self := base + "/" + c.slug

			// Create: 201, Location is the self link, which answers GET.
			r := e.do("acme/member", "POST", base, newCF(c.slug, c.value))
			if r.status != http.StatusCreated {
				t.Fatalf("POST: %d\n%s", r.status, r.body)
			}
			validate(t, c.postSchema, r.body)
			checkDocument(t, r)
			data := obj(r.json(t), "data")
			created := data["id"].(string)
			if loc := r.header.Get("Location"); loc != publicBase+self || obj(data, "links")["self"] != loc {
				t.Errorf("Location %q, self %v, want %s", loc, obj(data, "links")["self"], publicBase+self)
			}
			golden(t, "custom_field_create_"+c.entity, r, created, "<created-id>", id, "<entity-id>")
			g := e.do("acme/viewer", "GET", self, nil)
			if g.status != http.StatusOK || obj(g.json(t), "data")["id"] != created {
				t.Fatalf("GET self: %d\n%s", g.status, g.body)
			}
			validate(t, "get-custom-field-200", g.body)

			// A second POST updates the value it has (the public service's
			// documented create-or-update; the SDK's setCustomField relies
			// on it to change a value): 201, the same record, the new value.
			r = e.do("acme/member", "POST", base, newCF(c.slug, c.changed))
			if r.status != http.StatusCreated {
				t.Fatalf("second POST: %d\n%s", r.status, r.body)
			}
			validate(t, c.postSchema, r.body)
			if d := obj(r.json(t), "data"); d["id"] != created || obj(d, "attributes")["value"] != c.changed {
				t.Errorf("second POST: %v, want id %s and value %v", d, created, c.changed)
			}
			if n := countSlug(t, e, base, c.slug); n != 1 {
				t.Errorf("after the second POST %s is listed %d times", c.slug, n)
			}

			// Update.
			r = e.do("acme/member", "PATCH", self, cfBody(c.value))
			if r.status != http.StatusOK {
				t.Fatalf("PATCH: %d\n%s", r.status, r.body)
			}
			validate(t, c.patchSchema, r.body)
			if a := obj(r.json(t), "data", "attributes"); a["value"] != c.value {
				t.Errorf("PATCH: %v", a)
			}
			list := e.do("acme/viewer", "GET", base, nil)
			validate(t, c.listSchema, list.body)

			deleteCustomField(t, e, self, created)
			for _, cf := range e.get(base)["data"].([]any) {
				if obj(cf, "attributes")["api_slug"] == c.slug {
					t.Errorf("deleted value still listed")
				}
			}

			// Bad input: 404 before 422, 422 for the attributes.
			wantError(t, e.do("acme/member", "POST", base, newCF("no_such_field", "x")), http.StatusNotFound, "", "")
			wantError(t, e.do("acme/member", "POST", base, newCF(c.slug, nil)), http.StatusUnprocessableEntity, "pointer", "/data/attributes/value")
			wantError(t, e.do("acme/member", "POST", base, newCF(c.slug, 12)), http.StatusUnprocessableEntity, "pointer", "/data/attributes/value")
			wantError(t, e.do("acme/member", "POST", base, cfBody("x")), http.StatusUnprocessableEntity, "pointer", "/data/attributes/api_slug")
			unknown := strings.Replace(base, id, "00000000-0000-4000-8000-000000000000", 1)
			wantError(t, e.do("acme/member", "POST", unknown, cfBody("x")), http.StatusNotFound, "", "")
		})
	}

	// A shipment's id under /v2/containers (and the reverse) is not found.
	s := shipmentWithout(t, e, "customer_po")
	wantError(t, e.do("acme/member", "POST", "/v2/containers/"+s+"/custom_fields", newCF("yard_slot", "x")), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "GET", "/v2/containers/"+s+"/custom_fields", nil), http.StatusNotFound, "", "")
	// A container definition's slug on a shipment is not found.
	wantError(t, e.do("acme/member", "POST", "/v2/shipments/"+s+"/custom_fields", newCF("yard_slot", "x")), http.StatusNotFound, "", "")
}

// TestCustomFieldsResource: /v2/custom_fields and /v2/custom_fields/{id}.
func TestCustomFieldsResource(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)

	// The list: newest first, filters, golden and schema.
	for name, path := range map[string]string{
		"custom_fields":                   "/v2/custom_fields?page[size]=3",
		"custom_fields_filter_container":  "/v2/custom_fields?filter[entity_type]=container&page[size]=2",
		"custom_fields_filter_entity":     "/v2/custom_fields?filter[entity_id]=" + strings.ToUpper(f.fieldEntity),
		"custom_fields_filter_definition": "/v2/custom_fields?filter[definition_id]=" + f.enumDefinition + "&page[size]=2",
	} {
		r := e.do("acme/viewer", "GET", path, nil)
		wantDocument(t, r, http.StatusOK, "get-custom-fields-200")
		golden(t, name, r)
		if len(r.json(t)["data"].([]any)) == 0 {
			t.Errorf("GET %s: empty", path)
		}
	}
	for _, d := range e.get("/v2/custom_fields?filter[entity_id]=" + f.fieldEntity)["data"].([]any) {
		if obj(d, "relationships", "entity", "data")["id"] != f.fieldEntity {
			t.Errorf("filter[entity_id] lists %v", d)
		}
	}
	for _, d := range e.get("/v2/custom_fields?filter[entity_type]=Container")["data"].([]any) {
		if obj(d, "relationships", "entity", "data")["type"] != "container" {
			t.Errorf("filter[entity_type]=Container lists %v", d)
		}
	}
	for _, d := range e.get("/v2/custom_fields?filter[definition_id]=" + f.enumDefinition)["data"].([]any) {
		if obj(d, "relationships", "definition", "data")["id"] != f.enumDefinition {
			t.Errorf("filter[definition_id] lists %v", d)
		}
	}
	for _, q := range []string{"filter[entity_id]=x", "filter[definition_id]=1234", "filter[entity_type]=vessel", "filter[entity]=x"} {
		param := q[:strings.Index(q, "=")]
		wantError(t, e.do("acme/viewer", "GET", "/v2/custom_fields?"+q, nil), http.StatusBadRequest, "parameter", param)
	}
	meta := obj(e.get("/v2/custom_fields?page[size]=1"), "meta")
	total := e.get("/v2/custom_fields?page[size]=100&filter[entity_type]=Shipment")["meta"].(map[string]any)["total"].(float64) +
		e.get("/v2/custom_fields?page[size]=100&filter[entity_type]=Container")["meta"].(map[string]any)["total"].(float64)
	if meta["total"] != total {
		t.Errorf("total %v, shipments + containers %v", meta["total"], total)
	}

	// One value.
	r := e.do("acme/viewer", "GET", "/v2/custom_fields/"+f.customField, nil)
	wantDocument(t, r, http.StatusOK, "get-custom-field-200")
	golden(t, "custom_field", r)

	// Create on the entity of the relationship.
	ship := shipmentWithout(t, e, "customer_po")
	r = e.do("acme/member", "POST", "/v2/custom_fields", newEntityCF("shipment", ship, "customer_po", "ABC124"))
	created := obj(wantDocument(t, r, http.StatusCreated, "post-custom-field-201"), "data")["id"].(string)
	golden(t, "custom_field_create", r, created, "<created-id>", ship, "<entity-id>")
	for _, c := range []struct {
		body            any
		status          int
		pointer         string
		pointerExpected bool
	}{
		{newCF("customer_po", "x"), http.StatusBadRequest, "/data/relationships/entity", true},
		{newEntityCF("vessel", ship, "customer_po", "x"), http.StatusBadRequest, "/data/relationships/entity/data/type", true},
		{`{"data": {"type": "custom_field", "attributes": {"api_slug": "customer_po", "value": "x"}, "relationships": {"entity": {"data": null}}}}`, http.StatusBadRequest, "/data/relationships/entity/data", true},
		{`{"data": {"type": "custom_field", "attributes": {}, "relationships": 5}}`, http.StatusBadRequest, "/data/relationships", true},
		{newEntityCF("container", ship, "customer_po", "x"), http.StatusNotFound, "", false},
		{newEntityCF("shipment", ship, "customer_po", "x"), http.StatusUnprocessableEntity, "/data/attributes/api_slug", true},
		{newEntityCF("shipment", ship, "customer_po", nil), http.StatusUnprocessableEntity, "/data/attributes/value", true},
		{newEntityCF("shipment", "00000000-0000-4000-8000-000000000000", "customer_po", nil), http.StatusNotFound, "", false},
	} {
		r := e.do("acme/member", "POST", "/v2/custom_fields", c.body)
		if c.pointerExpected {
			wantError(t, r, c.status, "pointer", c.pointer)
		} else {
			wantError(t, r, c.status, "", "")
		}
	}

	// Update by id, then clear (204, the value is gone), then delete.
	self := "/v2/custom_fields/" + created
	r = e.do("acme/member", "PATCH", self, cfBody("ABC999"))
	if r.status != http.StatusOK || obj(r.json(t), "data", "attributes")["value"] != "ABC999" {
		t.Fatalf("PATCH: %d\n%s", r.status, r.body)
	}
	validate(t, "patch-custom-field-200", r.body)
	wantError(t, e.do("acme/member", "PATCH", self, map[string]any{"nothing": 1}), http.StatusUnprocessableEntity, "pointer", "/data/attributes/value")
	wantError(t, e.do("acme/member", "PATCH", self, cfBody(5)), http.StatusUnprocessableEntity, "pointer", "/data/attributes/value")
	if r := e.do("acme/member", "PATCH", self, cfBody(nil)); r.status != http.StatusNoContent {
		t.Fatalf("clear: %d\n%s", r.status, r.body)
	}
	wantError(t, e.do("acme/member", "GET", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "PATCH", self, cfBody("x")), http.StatusNotFound, "", "")

	r = e.do("acme/member", "DELETE", "/v2/custom_fields/"+f.customField, nil)
	wantDocument(t, r, http.StatusOK, "get-custom-field-200")
	golden(t, "custom_field_delete", r)
	wantError(t, e.do("acme/member", "GET", "/v2/custom_fields/"+f.customField, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "DELETE", "/v2/custom_fields/"+f.customField, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "DELETE", "/v2/custom_fields/not-a-uuid", nil), http.StatusNotFound, "", "")
}

// TestCustomFieldSelfLinks: every value's links.self answers GET with the
// same resource (clients follow self links).
func TestCustomFieldSelfLinks(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, list := range []string{"/v2/custom_fields?page[size]=50&filter[entity_type]=Shipment", "/v2/custom_fields?page[size]=20&filter[entity_type]=Container"} {
		data := e.get(list)["data"].([]any)
		if len(data) == 0 {
			t.Fatalf("%s: empty", list)
		}
		for _, d := range data {
			self := obj(d, "links")["self"].(string)
			r := e.do("acme/viewer", "GET", strings.TrimPrefix(self, publicBase), nil)
			if r.status != http.StatusOK {
				t.Fatalf("GET %s: %d\n%s", self, r.status, r.body)
			}
			got, _ := json.Marshal(obj(r.json(t), "data"))
			want, _ := json.Marshal(d)
			if !bytes.Equal(got, want) {
				t.Errorf("GET %s:\n%s\nthe list has\n%s", self, got, want)
			}
		}
	}
}

// TestUpperCaseIDs: an id in upper case names the same record, in a /v2
// path and in a GraphQL argument (ids are normalised where they enter).
func TestUpperCaseIDs(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	up := strings.ToUpper
	for _, c := range []struct{ lower, upper string }{
		{"/v2/shipments/" + f.shipment, "/v2/shipments/" + up(f.shipment)},
		{"/v2/containers/" + f.container, "/v2/containers/" + up(f.container)},
		{"/v2/documents/" + f.document, "/v2/documents/" + up(f.document)},
		{"/v2/terminals/" + f.terminal, "/v2/terminals/" + up(f.terminal)},
		{"/v2/ports/" + f.port, "/v2/ports/" + up(f.port)},
		{"/v2/shipments/" + f.fieldsShipment + "/custom_fields", "/v2/shipments/" + up(f.fieldsShipment) + "/custom_fields"},
		{"/v2/shipments/" + f.fieldEntity + "/custom_fields/" + f.fieldSlug, "/v2/shipments/" + up(f.fieldEntity) + "/custom_fields/" + f.fieldSlug},
		{"/v2/custom_field_definitions/" + f.enumDefinition, "/v2/custom_field_definitions/" + up(f.enumDefinition)},
		{"/v2/custom_field_definitions/" + f.enumDefinition + "/options/" + f.option, "/v2/custom_field_definitions/" + up(f.enumDefinition) + "/options/" + up(f.option)},
		{"/v2/custom_fields/" + f.customField, "/v2/custom_fields/" + up(f.customField)},
	} {
		want := e.do("acme/viewer", "GET", c.lower, nil)
		got := e.do("acme/viewer", "GET", c.upper, nil)
		// The same data (a list's page links repeat the request's path).
		if want.status != http.StatusOK || got.status != http.StatusOK || !sameData(t, got, want) {
			t.Errorf("GET %s: %d, the lower-case id %d\n%s", c.upper, got.status, want.status, got.body)
		}
	}
	// A write through an upper-case path.
	r := e.do("acme/member", "PATCH", "/v2/shipments/"+up(f.fieldsShipment)+"/custom_fields/customer_po", cfBody("UP-1"))
	if r.status != http.StatusOK || obj(r.json(t), "data", "relationships", "entity", "data")["id"] != f.fieldsShipment {
		t.Errorf("PATCH with an upper-case id: %d\n%s", r.status, r.body)
	}

	// GraphQL: root fields, node and mutations take the id in any case.
	query := `query($s: ID!, $c: ID!, $d: ID!, $n: ID!) {
		shipment(id: $s) { id } container(id: $c) { id } customFieldDefinition(id: $d) { id } node(id: $n) { id }
		customField(id: $n) { id }
	}`
	body := map[string]any{"query": query, "variables": map[string]any{
		"s": up(f.shipment), "c": up(f.container), "d": up(f.enumDefinition), "n": up(f.customField)}}
	g := e.do("acme/viewer", "POST", "/graphql", body, "Content-Type", "application/json")
	var res struct {
		Data map[string]*struct{ ID string }
	}
	if err := json.Unmarshal(g.body, &res); err != nil {
		t.Fatalf("%v\n%s", err, g.body)
	}
	for field, want := range map[string]string{"shipment": f.shipment, "container": f.container, "customFieldDefinition": f.enumDefinition, "node": f.customField, "customField": f.customField} {
		if v := res.Data[field]; v == nil || v.ID != want {
			t.Errorf("GraphQL %s with an upper-case id: %s", field, g.body)
		}
	}
}

// sameData reports whether two documents have the same data member.
func sameData(t *testing.T, a, b *response) bool {
	x, _ := json.Marshal(a.json(t)["data"])
	y, _ := json.Marshal(b.json(t)["data"])
	return bytes.Equal(x, y)
}

// countSlug counts the values of slug listed under base (an entity's
// custom_fields).
func countSlug(t *testing.T, e *env, base, slug string) int {
	t.Helper()
	n := 0
	for _, cf := range e.get(base)["data"].([]any) {
		if obj(cf, "attributes")["api_slug"] == slug {
			n++
		}
	}
	return n
}

// racePosts sends n POSTs of customer_po values to path at once and
// returns how many answered each status.
func racePosts(e *env, path string, body func(i int) any) map[int]int {
	const n = 8
	statuses := make([]int, n)
	testkit.AtOnce(n, func(i int) {
		statuses[i] = e.do("acme/member", "POST", path, body(i)).status
	})
	got := map[int]int{}
	for _, s := range statuses {
		got[s]++
	}
	return got
}

// TestConcurrentCreates: racing creates of the same value by POST
// /v2/custom_fields (create only): one is created (201), the others are
// the conflict (422), never a 5xx; the unique constraint decides.
func TestConcurrentCreates(t *testing.T) {
	e := newEnv(t, envOptions{})
	ship := shipmentWithout(t, e, "customer_po")
	got := racePosts(e, "/v2/custom_fields", func(i int) any { return newEntityCF("shipment", ship, "customer_po", fmt.Sprint("PO-", i)) })
	if got[http.StatusCreated] != 1 || got[http.StatusUnprocessableEntity] != 7 {
		t.Errorf("statuses %v, want one 201 and 7 422", got)
	}
}

// TestConcurrentEntityPosts: racing POSTs of the same value under the
// shipment (create or update) all succeed, never a 5xx, and leave one
// value.
func TestConcurrentEntityPosts(t *testing.T) {
	e := newEnv(t, envOptions{})
	ship := shipmentWithout(t, e, "customer_po")
	base := "/v2/shipments/" + ship + "/custom_fields"
	got := racePosts(e, base, func(i int) any { return newCF("customer_po", fmt.Sprint("PO-", i)) })
	if got[http.StatusCreated] != 8 {
		t.Errorf("statuses %v, want 8 201", got)
	}
	if n := countSlug(t, e, base, "customer_po"); n != 1 {
		t.Errorf("customer_po listed %d times, want 1", n)
	}
}
