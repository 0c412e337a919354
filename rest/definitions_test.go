package rest_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestDefinitionWrites: POST, PATCH and DELETE of custom field
// definitions; a deleted definition takes its options and values with it.
func TestDefinitionWrites(t *testing.T) {
	e := newEnv(t, envOptions{})
	const defs = "/v2/custom_field_definitions"

	// Create: 201, Location, newest first in the list.
	r := e.do("acme/member", "POST", defs, resource("custom_field_definition", map[string]any{
		"entity_type": "Shipment", "api_slug": "incoterm", "display_name": "Incoterm", "data_type": "enum",
		"description": "Delivery terms.", "validation": map[string]any{"required": false}, "default_format": nil,
	}))
	id := obj(wantDocument(t, r, http.StatusCreated, "post-custom-field-definition-201"), "data")["id"].(string)
	self := defs + "/" + id
	if loc := r.header.Get("Location"); loc != publicBase+self {
		t.Errorf("Location %q", loc)
	}
	golden(t, "definition_create", r, id, "<created-id>")
	if first := e.get(defs)["data"].([]any)[0].(map[string]any)["id"]; first != id {
		t.Errorf("the new definition is not first in the list (newest first): %v", first)
	}

	// Bad input: 422 with a pointer, the duplicate slug included.
	for _, c := range []struct {
		attrs   map[string]any
		pointer string
	}{
		{map[string]any{"entity_type": "Shipment", "api_slug": "incoterm", "display_name": "Again", "data_type": "enum"}, "/data/attributes/api_slug"},
		{map[string]any{"entity_type": "Shipment", "api_slug": "Bad Slug", "display_name": "X", "data_type": "enum"}, "/data/attributes/api_slug"},
		{map[string]any{"entity_type": "Shipment", "api_slug": strings.Repeat("a", 101), "display_name": "X", "data_type": "enum"}, "/data/attributes/api_slug"},
		{map[string]any{"entity_type": "Vessel", "api_slug": "x", "display_name": "X", "data_type": "enum"}, "/data/attributes/entity_type"},
		{map[string]any{"api_slug": "x", "display_name": "X", "data_type": "enum"}, "/data/attributes/entity_type"},
		{map[string]any{"entity_type": "Shipment", "api_slug": "x", "display_name": "X", "data_type": "text"}, "/data/attributes/data_type"},
		{map[string]any{"entity_type": "Shipment", "api_slug": "x", "display_name": "  ", "data_type": "number"}, "/data/attributes/display_name"},
		{map[string]any{"entity_type": "Shipment", "api_slug": "x", "display_name": "X", "data_type": "number", "validation": 5}, "/data/attributes/validation"},
		{map[string]any{"entity_type": "Shipment", "api_slug": "x", "display_name": "X", "data_type": "number", "default_value": "abc"}, "/data/attributes/default_value"},
		{map[string]any{"entity_type": "Shipment", "api_slug": "x", "display_name": "X", "data_type": "enum", "default_value": "a"}, "/data/attributes/default_value"},
		{map[string]any{"entity_type": "Shipment", "api_slug": "x", "display_name": "X", "data_type": "number", "description": 5}, "/data/attributes/description"},
	} {
		wantError(t, e.do("acme/member", "POST", defs, resource("custom_field_definition", c.attrs)), http.StatusUnprocessableEntity, "pointer", c.pointer)
	}
	// The same slug for the other entity type is another definition.
	if r := e.do("acme/member", "POST", defs, resource("custom_field_definition", map[string]any{"entity_type": "container", "api_slug": "incoterm", "display_name": "Incoterm", "data_type": "short_text"})); r.status != http.StatusCreated {
		t.Errorf("same slug on containers: %d\n%s", r.status, r.body)
	}

	// Update: the editable attributes; null clears; the rest cannot change.
	r = e.do("acme/member", "PATCH", self, resource("custom_field_definition", map[string]any{"display_name": "Incoterms 2020", "description": nil, "api_slug": "incoterm", "default_format": "upper"}))
	a := obj(wantDocument(t, r, http.StatusOK, "patch-custom-field-definition-200"), "data", "attributes")
	if a["display_name"] != "Incoterms 2020" || a["description"] != nil || a["default_format"] != "upper" || a["validation"] == nil {
		t.Errorf("PATCH: %v", a)
	}
	for _, c := range []struct {
		attrs   map[string]any
		pointer string
	}{
		{map[string]any{"api_slug": "other"}, "/data/attributes/api_slug"},
		{map[string]any{"data_type": "number"}, "/data/attributes/data_type"},
		{map[string]any{"entity_type": "Container"}, "/data/attributes/entity_type"},
		{map[string]any{"display_name": nil}, "/data/attributes/display_name"},
		{map[string]any{"display_name": ""}, "/data/attributes/display_name"},
		{map[string]any{"validation": []any{1}}, "/data/attributes/validation"},
		{map[string]any{"default_value": "fob"}, "/data/attributes/default_value"},
	} {
		wantError(t, e.do("acme/member", "PATCH", self, resource("custom_field_definition", c.attrs)), http.StatusUnprocessableEntity, "pointer", c.pointer)
	}
	// An option, then it is a valid default.
	if r := e.do("acme/member", "POST", self+"/options", map[string]any{"label": "FOB", "value": "fob"}); r.status != http.StatusCreated {
		t.Fatalf("option: %d\n%s", r.status, r.body)
	}
	if r := e.do("acme/member", "PATCH", self, resource("custom_field_definition", map[string]any{"default_value": "fob"})); r.status != http.StatusOK || obj(r.json(t), "data", "attributes")["default_value"] != "fob" {
		t.Errorf("default_value: %d\n%s", r.status, r.body)
	}

	// A value on a shipment, then delete the definition: its options and
	// values go with it.
	ship := shipmentWithout(t, e, "incoterm")
	if r := e.do("acme/member", "POST", "/v2/shipments/"+ship+"/custom_fields", newCF("incoterm", "fob")); r.status != http.StatusCreated {
		t.Fatalf("value: %d\n%s", r.status, r.body)
	}
	r = e.do("acme/member", "DELETE", self, nil)
	wantDocument(t, r, http.StatusOK, "get-custom-field-definition-200")
	wantError(t, e.do("acme/member", "GET", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "GET", self+"/options", nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "DELETE", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "PATCH", self, resource("custom_field_definition", map[string]any{"display_name": "X"})), http.StatusNotFound, "", "")
	if _, ok := fieldsBySlug(e, ship)["incoterm"]; ok {
		t.Errorf("the deleted definition's value is still on the shipment")
	}
	if n := len(e.get("/v2/custom_fields?filter[definition_id]=" + id)["data"].([]any)); n != 0 {
		t.Errorf("%d values of the deleted definition", n)
	}
	wantError(t, e.do("acme/member", "DELETE", defs+"/not-a-uuid", nil), http.StatusNotFound, "", "")
}
