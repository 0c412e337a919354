package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"shipgraph/testkit"
)

// fieldsBySlug returns the custom field resources of a shipment by slug.
func fieldsBySlug(e *env, shipmentID string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, cf := range e.get("/v2/shipments/" + shipmentID + "/custom_fields")["data"].([]any) {
		cf := cf.(map[string]any)
		out[obj(cf, "attributes")["api_slug"].(string)] = cf
	}
	return out
}

// shipmentWithout returns a shipment of acme with no value for slug.
func shipmentWithout(t *testing.T, e *env, slug string) string {
	t.Helper()
	for _, s := range e.get("/v2/shipments?page[size]=100")["data"].([]any) {
		id := s.(map[string]any)["id"].(string)
		if _, ok := fieldsBySlug(e, id)[slug]; !ok {
			return id
		}
	}
	t.Fatalf("every shipment has a %s value", slug)
	return ""
}

func cfBody(value any) map[string]any {
	return resource("custom_field", map[string]any{"value": value})
}

func TestPatchShipmentCustomField(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	path := func(shipment, slug string) string { return "/v2/shipments/" + shipment + "/custom_fields/" + slug }

	// Every data type: the stored value and its display form.
	cases := []struct {
		slug       string
		value      any
		stored     any
		display    any
		goldenName string
		wrong      []any
	}{
		{"customer_po", "PO-77-A", "PO-77-A", "PO-77-A", "custom_field_short_text", []any{12, true, []any{"a"}, map[string]any{}}},
		{"declared_value_usd", 125000.5, 125000.5, "125000.5", "custom_field_number", []any{"abc", true, []any{1.0}}},
		{"declared_value_usd", "42", 42.0, "42", "", nil},
		{"requested_delivery_date", "2026-04-01", "2026-04-01", "Apr 1, 2026", "custom_field_date", []any{"2026-13-01", "April 1", 20260401}},
		{"dock_appointment_at", "2026-04-01T09:30:00+02:00", "2026-04-01T07:30:00Z", "Apr 1, 2026 07:30 UTC", "custom_field_datetime", []any{"tomorrow", "2026-04-01", 1}},
		{"hazmat", true, true, "Yes", "custom_field_boolean", []any{"yes", 1, "true"}},
		{"hazmat", false, false, "No", "", nil},
		{"priority_level", "high", "high", "High", "custom_field_enum", []any{"urgent", "High", 3, []any{"high"}}},
		{"handling_requirements", []any{"fragile", "liftgate"}, []any{"fragile", "liftgate"}, "Fragile, Liftgate required", "custom_field_enum_multi", []any{"fragile", []any{"fragile", "nope"}, []any{1.0}}},
		{"account_manager", "alice@acme.example", "alice@acme.example", "alice@acme.example", "custom_field_reference", []any{5}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.slug, "=", c.value), func(t *testing.T) {
			r := e.do("acme/member", "PATCH", path(f.fieldsShipment, c.slug), cfBody(c.value))
			attrs := obj(wantDocument(t, r, http.StatusOK, "patch-shipment-custom-field-200"), "data", "attributes")
			if fmt.Sprint(attrs["value"]) != fmt.Sprint(c.stored) || attrs["display_value"] != c.display {
				t.Errorf("value %v display %v, want %v %v", attrs["value"], attrs["display_value"], c.stored, c.display)
			}
			// Read back.
			got := fieldsBySlug(e, f.fieldsShipment)[c.slug]
			if fmt.Sprint(obj(got, "attributes")["value"]) != fmt.Sprint(c.stored) {
				t.Errorf("read back %v", obj(got, "attributes"))
			}
			if c.goldenName != "" {
				golden(t, c.goldenName, r, idReplacements(r, "custom-field")...)
			}
			for _, w := range c.wrong {
				r := e.do("acme/member", "PATCH", path(f.fieldsShipment, c.slug), cfBody(w))
				wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/data/attributes/value")
			}
		})
	}
	golden(t, "error_422_value", e.do("acme/member", "PATCH", path(f.fieldsShipment, "priority_level"), cfBody("urgent")))

	t.Run("creates a value the shipment does not have", func(t *testing.T) {
		s := shipmentWithout(t, e, "customer_po")
		r := e.do("acme/admin", "PATCH", path(s, "customer_po"), cfBody("NEW-1"))
		wantDocument(t, r, http.StatusOK, "patch-shipment-custom-field-200")
		if got := fieldsBySlug(e, s)["customer_po"]; got == nil || obj(got, "attributes")["value"] != "NEW-1" {
			t.Errorf("not created: %v", got)
		}
	})

	t.Run("null clears the value", func(t *testing.T) {
		// The value is deleted: 204, then absent from the list, its self
		// link a 404; clearing again is the same 204.
		self := path(f.fieldsShipment, "customer_po")
		if e.do("acme/admin", "GET", self, nil).status != http.StatusOK {
			t.Fatal("no customer_po value to clear")
		}
		for range 2 {
			r := e.do("acme/admin", "PATCH", self, cfBody(nil))
			if r.status != http.StatusNoContent || len(r.body) != 0 {
				t.Fatalf("%d\n%s", r.status, r.body)
			}
			if _, ok := fieldsBySlug(e, f.fieldsShipment)["customer_po"]; ok {
				t.Errorf("a cleared value is still listed")
			}
			wantError(t, e.do("acme/admin", "GET", self, nil), http.StatusNotFound, "", "")
		}
	})

	t.Run("body forms", func(t *testing.T) {
		for i, body := range []any{
			map[string]any{"value": "FLAT-1"},
			map[string]any{"data": map[string]any{"value": "FLAT-2"}},
			map[string]any{"data": map[string]any{"type": "custom_field", "value": "FLAT-3"}},
			map[string]any{"data": map[string]any{"attributes": map[string]any{"value": "FLAT-4", "api_slug": "customer_po"}}},
		} {
			r := e.do("acme/admin", "PATCH", path(f.fieldsShipment, "customer_po"), body, "Content-Type", "application/json")
			if r.status != http.StatusOK {
				t.Fatalf("form %d: %d\n%s", i, r.status, r.body)
			}
			if got := obj(r.json(t), "data", "attributes")["value"]; got != fmt.Sprintf("FLAT-%d", i+1) {
				t.Errorf("form %d stored %v", i, got)
			}
		}
	})

	t.Run("value is required", func(t *testing.T) {
		for _, body := range []any{map[string]any{}, resource("custom_field", map[string]any{}),
			map[string]any{"data": map[string]any{"type": "custom_field"}}} {
			r := e.do("acme/admin", "PATCH", path(f.fieldsShipment, "customer_po"), body)
			wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/data/attributes/value")
		}
	})
}

// idReplacements maps the id of a response's data to a placeholder when
// the database generated it (a new row), so golden files stay stable.
func idReplacements(r *response, placeholder string) []string {
	var doc map[string]any
	_ = json.Unmarshal(r.body, &doc)
	d, _ := doc["data"].(map[string]any)
	if d == nil {
		return nil
	}
	id, _ := d["id"].(string)
	return []string{id, "<" + placeholder + "-id>"}
}

func TestOptions(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	options := "/v2/custom_field_definitions/" + f.enumDefinition + "/options"

	// Create.
	r := e.do("acme/member", "POST", options, resource("custom_field_option", map[string]any{"label": "Urgent", "value": "urgent", "position": 9}))
	created := obj(wantDocument(t, r, http.StatusCreated, "post-custom-field-option-201"), "data")
	id := created["id"].(string)
	if loc := r.header.Get("Location"); loc != publicBase+options+"/"+id {
		t.Errorf("Location %q", loc)
	}
	golden(t, "option_create", r, id, "<created-option-id>")
	if got := e.get(options + "/" + id); obj(got, "data", "attributes")["label"] != "Urgent" {
		t.Errorf("created option reads %v", got)
	}

	// Flat forms, and position left out.
	for i, body := range []any{
		map[string]any{"label": "Flat A", "value": "flat_a"},
		map[string]any{"data": map[string]any{"label": "Flat B", "value": "flat_b", "position": nil}},
		map[string]any{"data": map[string]any{"type": "custom_field_option", "label": "Flat C", "value": "flat_c"}},
	} {
		r := e.do("acme/member", "POST", options, body, "Content-Type", "application/json")
		if r.status != http.StatusCreated {
			t.Fatalf("form %d: %d\n%s", i, r.status, r.body)
		}
		validate(t, "post-custom-field-option-201", r.body)
	}

	// 422s.
	for _, c := range []struct {
		body    map[string]any
		pointer string
	}{
		{map[string]any{"value": "x"}, "/data/attributes/label"},
		{map[string]any{"label": "X"}, "/data/attributes/value"},
		{map[string]any{"label": "  ", "value": "x"}, "/data/attributes/label"},
		{map[string]any{"label": "X", "value": ""}, "/data/attributes/value"},
		{map[string]any{"label": 5, "value": "x"}, "/data/attributes/label"},
		{map[string]any{"label": nil, "value": "x"}, "/data/attributes/label"},
		{map[string]any{"label": "X", "value": []any{"x"}}, "/data/attributes/value"},
		{map[string]any{"label": "X", "value": "x", "position": "1"}, "/data/attributes/position"},
		{map[string]any{"label": "X", "value": "x", "position": 1.5}, "/data/attributes/position"},
		{map[string]any{"label": "Dup", "value": "high"}, "/data/attributes/value"},
		{map[string]any{"label": "Dup", "value": "urgent"}, "/data/attributes/value"},
	} {
		r := e.do("acme/member", "POST", options, resource("custom_field_option", c.body))
		wantError(t, r, http.StatusUnprocessableEntity, "pointer", c.pointer)
	}
	golden(t, "error_422_duplicate_option", e.do("acme/member", "POST", options, resource("custom_field_option", map[string]any{"label": "Dup", "value": "high"})))

	// Not on a definition without options.
	r = e.do("acme/member", "POST", "/v2/custom_field_definitions/"+f.textDefinition+"/options", resource("custom_field_option", map[string]any{"label": "X", "value": "x"}))
	wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/data")
	golden(t, "error_422_not_enum", r)

	// Update.
	r = e.do("acme/member", "PATCH", options+"/"+id, resource("custom_field_option", map[string]any{"label": "Very urgent", "position": 0}))
	wantDocument(t, r, http.StatusOK, "patch-custom-field-option-200")
	golden(t, "option_update", r, id, "<created-option-id>")
	r = e.do("acme/member", "PATCH", options+"/"+id, map[string]any{"label": "Flat label"}, "Content-Type", "application/json")
	if r.status != http.StatusOK || obj(r.json(t), "data", "attributes")["label"] != "Flat label" {
		t.Errorf("flat update: %d\n%s", r.status, r.body)
	}
	// An explicit null clears the position; omitting it keeps it.
	before := obj(e.getAs("acme/member", options+"/"+id), "data", "attributes")["position"]
	r = e.do("acme/member", "PATCH", options+"/"+id, resource("custom_field_option", map[string]any{"position": 7}))
	if r.status != http.StatusOK || obj(r.json(t), "data", "attributes")["position"] != float64(7) {
		t.Fatalf("set position: %d\n%s", r.status, r.body)
	}
	r = e.do("acme/member", "PATCH", options+"/"+id, resource("custom_field_option", map[string]any{"label": "Kept position"}))
	if r.status != http.StatusOK || obj(r.json(t), "data", "attributes")["position"] != float64(7) {
		t.Fatalf("omitted position must be kept: %d\n%s", r.status, r.body)
	}
	r = e.do("acme/member", "PATCH", options+"/"+id, resource("custom_field_option", map[string]any{"position": nil}))
	if attrs := obj(r.json(t), "data", "attributes"); r.status != http.StatusOK || attrs["position"] != nil || attrs["label"] != "Kept position" {
		t.Fatalf("clear position: %d\n%s", r.status, r.body)
	}
	if r := e.do("acme/member", "PATCH", options+"/"+id, resource("custom_field_option", map[string]any{"position": before, "label": "Flat label"})); r.status != http.StatusOK {
		t.Fatalf("restore position: %d\n%s", r.status, r.body)
	}
	for _, c := range []struct {
		body    map[string]any
		pointer string
	}{
		{map[string]any{"label": ""}, "/data/attributes/label"},
		{map[string]any{"label": 1}, "/data/attributes/label"},
		{map[string]any{"value": "high"}, "/data/attributes/value"},
		{map[string]any{"position": true}, "/data/attributes/position"},
	} {
		r := e.do("acme/member", "PATCH", options+"/"+id, resource("custom_field_option", c.body))
		wantError(t, r, http.StatusUnprocessableEntity, "pointer", c.pointer)
	}

	// A new value is written through to the stored values that use it.
	r = e.do("acme/member", "PATCH", "/v2/shipments/"+f.fieldsShipment+"/custom_fields/priority_level", cfBody("urgent"))
	if r.status != http.StatusOK {
		t.Fatalf("set: %d\n%s", r.status, r.body)
	}
	r = e.do("acme/member", "PATCH", options+"/"+id, resource("custom_field_option", map[string]any{"value": "asap", "label": "ASAP"}))
	if r.status != http.StatusOK {
		t.Fatalf("update value: %d\n%s", r.status, r.body)
	}
	got := obj(fieldsBySlug(e, f.fieldsShipment)["priority_level"], "attributes")
	if got["value"] != "asap" || got["display_value"] != "ASAP" {
		t.Errorf("stored value after the option's value changed: %v", got)
	}

	// Delete: refused while in use, then done.
	r = e.do("acme/member", "DELETE", options+"/"+id, nil)
	wantError(t, r, http.StatusUnprocessableEntity, "", "")
	if r := e.do("acme/member", "PATCH", "/v2/shipments/"+f.fieldsShipment+"/custom_fields/priority_level", cfBody(nil)); r.status != http.StatusNoContent {
		t.Fatalf("clear: %d\n%s", r.status, r.body)
	}
	r = e.do("acme/member", "DELETE", options+"/"+id, nil)
	wantDocument(t, r, http.StatusOK, "get-custom-field-option-200")
	golden(t, "option_delete", r, id, "<created-option-id>")
	wantError(t, e.do("acme/member", "GET", options+"/"+id, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "DELETE", options+"/"+id, nil), http.StatusNotFound, "", "")
}

// TestDuplicateOptionRace creates the same option value concurrently: the
// database's unique constraint picks one winner (201); every other request
// gets a 422, never a 500.
func TestDuplicateOptionRace(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	options := "/v2/custom_field_definitions/" + f.enumDefinition + "/options"
	const n = 12
	statuses := make([]int, n)
	testkit.AtOnce(n, func(i int) {
		who := "acme/admin"
		if i%2 == 1 {
			who = "acme/member"
		}
		r := e.do(who, "POST", options, resource("custom_field_option", map[string]any{"label": fmt.Sprint("Racer ", i), "value": "racing"}))
		statuses[i] = r.status
		if r.status == http.StatusUnprocessableEntity {
			validate(t, errorSchema, r.body)
		}
	})
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[http.StatusCreated] != 1 || count[http.StatusUnprocessableEntity] != n-1 {
		t.Errorf("statuses %v, want one 201 and %d 422", count, n-1)
	}
	var racing int
	for _, o := range e.get(options)["data"].([]any) {
		if obj(o, "attributes")["value"] == "racing" {
			racing++
		}
	}
	if racing != 1 {
		t.Errorf("%d options with the raced value", racing)
	}
}

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
	a := obj(wantDocument(t, r, http.StatusOK, "patch-shipment-200"), "data", "attributes")
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
	doc := wantDocument(t, r, http.StatusOK, "patch-shipment-stop-tracking-200")
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
	doc = wantDocument(t, r, http.StatusOK, "patch-shipment-resume-tracking-200")
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

// TestDocumentWrites: PATCH and DELETE /v2/documents/{id} and GET
// /v2/documents/types.
func TestDocumentWrites(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)

	r := e.do("acme/viewer", "GET", "/v2/documents/types", nil)
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("types: %d %s\n%s", r.status, r.header.Get("Content-Type"), r.body)
	}
	validate(t, "get-document-types-200", r.body)
	golden(t, "document_types", r)

	self := "/v2/documents/" + f.document
	r = e.do("acme/member", "PATCH", self+"?include=shipments", resource("document", map[string]any{"document_type_manual": " packing_list "}))
	if a := obj(wantDocument(t, r, http.StatusOK, "patch-document-200"), "data", "attributes"); a["document_type_manual"] != "packing_list" {
		t.Errorf("PATCH: %v", a)
	}
	// The manual type is what filter[document_types] matches too.
	found := false
	for _, d := range e.get("/v2/documents?filter[document_types]=packing_list&page[size]=100")["data"].([]any) {
		found = found || d.(map[string]any)["id"] == f.document
	}
	if !found {
		t.Errorf("filter[document_types] misses the manually typed document")
	}
	r = e.do("acme/member", "PATCH", self, resource("document", map[string]any{"document_type_manual": nil}))
	if a := obj(r.json(t), "data", "attributes"); r.status != http.StatusOK || a["document_type_manual"] != nil {
		t.Errorf("clear: %d %v", r.status, a)
	}
	for _, c := range []struct {
		attrs   map[string]any
		pointer string
	}{
		{map[string]any{"document_type_manual": "passport"}, "/data/attributes/document_type_manual"},
		{map[string]any{"document_type_manual": 5}, "/data/attributes/document_type_manual"},
		{map[string]any{"extracted_data_manual": map[string]any{"a": 1}}, "/data/attributes/extracted_data_manual"},
		{map[string]any{"name": "x"}, "/data/attributes/name"},
	} {
		wantError(t, e.do("acme/member", "PATCH", self, resource("document", c.attrs)), http.StatusUnprocessableEntity, "pointer", c.pointer)
	}

	// Delete: 204, then gone from GET, lists and its shipments.
	r = e.do("acme/member", "DELETE", self, nil)
	if r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Fatalf("DELETE: %d\n%s", r.status, r.body)
	}
	wantError(t, e.do("acme/member", "GET", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "DELETE", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "PATCH", self, resource("document", map[string]any{"document_type_manual": "other"})), http.StatusNotFound, "", "")
	for _, d := range e.get("/v2/documents?page[size]=100")["data"].([]any) {
		if d.(map[string]any)["id"] == f.document {
			t.Errorf("a deleted document is listed")
		}
	}
}
