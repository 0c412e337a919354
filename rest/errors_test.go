package rest_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/model"
	"shipgraph/rest/jsonapi"
)

// call is one request of the endpoint table.
type call struct {
	method, path string
	body         any
	write        bool
}

// endpoints returns a request for every endpoint of /v2, on acme's records.
func endpoints(f fixtures) []call {
	cf := resource("custom_field", map[string]any{"value": "PO-1"})
	opt := resource("custom_field_option", map[string]any{"label": "Urgent", "value": "urgent"})
	optPatch := resource("custom_field_option", map[string]any{"label": "Normal!"})
	defPatch := resource("custom_field_definition", map[string]any{"display_name": "Renamed!"})
	return []call{
		{"GET", "/v2/documents", nil, false},
		{"GET", "/v2/documents/" + f.document, nil, false},
		{"GET", "/v2/shipments", nil, false},
		{"GET", "/v2/shipments/" + f.shipment, nil, false},
		{"GET", "/v2/shipments/" + f.shipment + "/custom_fields", nil, false},
		{"PATCH", "/v2/shipments/" + f.shipment + "/custom_fields/customer_po", cf, true},
		{"GET", "/v2/containers", nil, false},
		{"GET", "/v2/containers/" + f.container, nil, false},
		{"GET", "/v2/terminals/" + f.terminal, nil, false},
		{"GET", "/v2/ports/" + f.port, nil, false},
		{"GET", "/v2/custom_field_definitions", nil, false},
		{"GET", "/v2/custom_field_definitions/" + f.enumDefinition, nil, false},
		{"GET", "/v2/custom_field_definitions/" + f.enumDefinition + "/options", nil, false},
		{"POST", "/v2/custom_field_definitions/" + f.enumDefinition + "/options", opt, true},
		{"GET", "/v2/custom_field_definitions/" + f.enumDefinition + "/options/" + f.option, nil, false},
		{"PATCH", "/v2/custom_field_definitions/" + f.enumDefinition + "/options/" + f.option, optPatch, true},
		{"DELETE", "/v2/custom_field_definitions/" + f.enumDefinition + "/options/" + f.option, nil, true},
		// Custom field values (issue 8).
		{"POST", "/v2/shipments/" + f.shipment + "/custom_fields", newCF("customer_po", "PO-1"), true},
		{"GET", "/v2/shipments/" + f.fieldEntity + "/custom_fields/" + f.fieldSlug, nil, false},
		{"DELETE", "/v2/shipments/" + f.fieldEntity + "/custom_fields/" + f.fieldSlug, nil, true},
		{"GET", "/v2/containers/" + f.container + "/custom_fields", nil, false},
		{"POST", "/v2/containers/" + f.container + "/custom_fields", newCF("yard_slot", "A-1"), true},
		{"PATCH", "/v2/containers/" + f.container + "/custom_fields/yard_slot", cf, true},
		{"DELETE", "/v2/containers/" + f.container + "/custom_fields/yard_slot", nil, true},
		{"GET", "/v2/custom_fields", nil, false},
		{"POST", "/v2/custom_fields", newEntityCF("shipment", f.shipment, "customer_po", "PO-1"), true},
		{"GET", "/v2/custom_fields/" + f.customField, nil, false},
		{"PATCH", "/v2/custom_fields/" + f.customField, cf, true},
		{"DELETE", "/v2/custom_fields/" + f.customField, nil, true},
		// Shipment writes (issue 8).
		{"PATCH", "/v2/shipments/" + f.shipment, map[string]any{"data": map[string]any{"type": "shipment", "attributes": map[string]any{"tags": []string{"intruder"}}}}, true},
		{"PATCH", "/v2/shipments/" + f.shipment + "/stop_tracking", nil, true},
		{"PATCH", "/v2/shipments/" + f.shipment + "/resume_tracking", nil, true},
		// Documents (issue 8).
		{"PATCH", "/v2/documents/" + f.document, resource("document", map[string]any{"document_type_manual": "other"}), true},
		{"DELETE", "/v2/documents/" + f.document, nil, true},
		{"GET", "/v2/documents/types", nil, false},
		{"GET", "/v2/email_submissions", nil, false},
		{"GET", "/v2/shipping_lines", nil, false},
		{"GET", "/v2/shipping_lines/" + f.shippingLine, nil, false},
		{"GET", "/v2/metro_areas/" + f.metroArea, nil, false},
		{"GET", "/v2/email_submissions/" + f.emailSubmission, nil, false},
		// Definitions (issue 8).
		{"POST", "/v2/custom_field_definitions", newDefinition("Shipment", "new_field", "short_text"), true},
		{"PATCH", "/v2/custom_field_definitions/" + f.textDefinition, defPatch, true},
		{"DELETE", "/v2/custom_field_definitions/" + f.textDefinition, nil, true},
	}
}

// newDefinition is the body of POST /v2/custom_field_definitions.
func newDefinition(entityType, slug, dataType string) map[string]any {
	return resource("custom_field_definition", map[string]any{
		"entity_type": entityType, "api_slug": slug, "display_name": "New field", "data_type": dataType})
}

// newCF is the body of a new custom field value on the entity of the path.
func newCF(slug string, value any) map[string]any {
	return resource("custom_field", map[string]any{"api_slug": slug, "value": value})
}

// newEntityCF is the body of POST /v2/custom_fields.
func newEntityCF(typ, id, slug string, value any) map[string]any {
	b := newCF(slug, value)
	b["data"].(map[string]any)["relationships"] = map[string]any{"entity": map[string]any{"data": map[string]any{"type": typ, "id": id}}}
	return b
}

func TestUnauthorized(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)

	// A revoked key of acme.
	ctx := context.Background()
	acme, err := e.store.FindAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	key, err := db.NewAPIKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.store.CreateToken(ctx, db.TokenInput{AccountID: acme.ID, Role: "admin", Name: "revoked", Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.RevokeToken(ctx, acme.ID, tok.ID); err != nil {
		t.Fatal(err)
	}

	auths := map[string]string{
		"missing":      "",
		"no key":       "Token",
		"wrong scheme": "Basic " + e.keys["acme/admin"],
		"malformed":    "Token not-a-key",
		"unknown":      "Token sg_" + strings.Repeat("0", 40),
		"revoked":      "Token " + key,
	}
	for _, c := range append(endpoints(f), call{"GET", "/v2/no/such/endpoint", nil, false}) {
		for name, auth := range auths {
			r := e.do("", c.method, c.path, c.body, "Authorization", auth)
			if r.status != http.StatusUnauthorized {
				t.Errorf("%s %s with %s key: %d, want 401", c.method, c.path, name, r.status)
				continue
			}
			wantError(t, r, http.StatusUnauthorized, "", "")
			validate(t, "get-documents-401", r.body)
			if r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s: 401 without WWW-Authenticate", c.method, c.path)
			}
		}
	}
	r := e.do("", "GET", "/v2/documents", nil)
	golden(t, "error_401", r)
}

func TestForbiddenForViewers(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	for _, c := range endpoints(f) {
		if !c.write {
			continue
		}
		r := e.do("acme/viewer", c.method, c.path, c.body)
		wantError(t, r, http.StatusForbidden, "", "")
		// Even a bad body: the key may not write at all.
		r = e.do("acme/viewer", c.method, c.path, `{"data": 1}`)
		wantError(t, r, http.StatusForbidden, "", "")
	}
	// Nothing changed.
	e.get("/v2/custom_field_definitions/" + f.textDefinition)
	e.get("/v2/custom_fields/" + f.customField)
	if got := len(e.get("/v2/custom_field_definitions/" + f.enumDefinition + "/options")["data"].([]any)); got != 4 {
		t.Errorf("options after refused writes: %d, want 4", got)
	}
	// Viewers read.
	for _, c := range endpoints(f) {
		if !c.write {
			if r := e.do("acme/viewer", c.method, c.path, nil); r.status != http.StatusOK {
				t.Errorf("viewer %s %s: %d", c.method, c.path, r.status)
			}
		}
	}
}

func TestBadQueryParameters(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	cases := []struct {
		name, path, parameter, detail string
	}{
		{"include unknown", "/v2/documents?include=invalid_relation", "include",
			"invalid_relation is not specified as a relationship on V2::DocumentSerializer"},
		{"include unknown among known", "/v2/documents?include=shipments,owner", "include",
			"owner is not specified as a relationship on V2::DocumentSerializer"},
		{"include nested", "/v2/documents?include=shipments.containers", "include", ""},
		{"include on document", "/v2/documents/" + f.document + "?include=containers", "include",
			"containers is not specified as a relationship on V2::DocumentSerializer"},
		{"include shipment unknown", "/v2/shipments?include=shipping_line", "include",
			"shipping_line is not specified as a relationship on V2::ShipmentSerializer"},
		{"include container unknown", "/v2/containers/" + f.container + "?include=containers", "include", ""},
		{"include port", "/v2/ports/" + f.port + "?include=terminals", "include", ""},
		{"include definitions", "/v2/custom_field_definitions?include=options", "include", ""},
		{"sort unknown", "/v2/documents?sort=file_name", "sort", ""},
		{"sort unknown descending", "/v2/documents?sort=-name", "sort", ""},
		{"sort two fields", "/v2/documents?sort=document_type,created_at", "sort", ""},
		{"sort not sortable", "/v2/custom_field_definitions?sort=created_at", "sort", ""},
		{"page number zero", "/v2/documents?page[number]=0", "page[number]", "page[number] must be at least 1"},
		{"page number negative", "/v2/shipments?page[number]=-1", "page[number]", ""},
		{"page number not a number", "/v2/containers?page[number]=two", "page[number]", ""},
		{"page number too large", "/v2/documents?page[number]=99999999999999999999", "page[number]", ""},
		{"page number huge", "/v2/documents?page[number]=2000000000", "page[number]", ""},
		{"page size zero", "/v2/documents?page[size]=0", "page[size]", "page[size] must be at least 1"},
		{"page size above max", "/v2/documents?page[size]=101", "page[size]", "page[size] must be at most 100"},
		{"page size float", "/v2/documents?page[size]=1.5", "page[size]", ""},
		{"page size encoded", "/v2/documents?page%5Bsize%5D=abc", "page[size]", ""},
		{"page size on options", "/v2/custom_field_definitions/" + f.enumDefinition + "/options?page[size]=0", "page[size]", ""},
		{"page size on custom fields", "/v2/shipments/" + f.shipment + "/custom_fields?page[size]=500", "page[size]", ""},
		{"page on an item", "/v2/shipments/" + f.shipment + "?page[size]=5", "page[size]", ""},
		{"page member unknown", "/v2/documents?page[offset]=5", "page[offset]", ""},
		{"filter unknown", "/v2/documents?filter[name]=x", "filter[name]", ""},
		{"filter of another list", "/v2/shipments?filter[filename]=x", "filter[filename]", ""},
		{"filter tracking_stopped not boolean", "/v2/shipments?filter[tracking_stopped]=maybe", "filter[tracking_stopped]", ""},
		{"filter entity_type unknown", "/v2/custom_field_definitions?filter[entity_type]=Vessel", "filter[entity_type]", ""},
		{"filter data_type unknown", "/v2/custom_field_definitions?filter[data_type]=json", "filter[data_type]", ""},
		{"parameter twice", "/v2/documents?page[size]=5&page[size]=6", "page[size]", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("acme/admin", "GET", c.path, nil)
			er := wantError(t, r, http.StatusBadRequest, "parameter", c.parameter)
			if c.detail != "" && er["detail"] != c.detail {
				t.Errorf("detail %q, want %q", er["detail"], c.detail)
			}
		})
	}
	golden(t, "error_400_include", e.do("acme/admin", "GET", "/v2/documents?include=invalid_relation", nil))

	// A malformed query string has no single parameter to blame.
	r := e.do("acme/admin", "GET", "/v2/documents?page[size]=%zz", nil)
	wantError(t, r, http.StatusBadRequest, "", "")
}

func TestNotFound(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	unknown := "00000000-0000-4000-8000-000000000000"
	// Metro areas also take a UN/LOCODE: one that no metro area has.
	wantError(t, e.do("acme/admin", "GET", "/v2/metro_areas/ZZZ99", nil), http.StatusNotFound, "", "")
	for _, id := range []string{unknown, "not-a-uuid", "0", strings.ToUpper(unknown) + "x"} {
		for _, p := range []string{
			"/v2/documents/" + id,
			"/v2/shipments/" + id,
			"/v2/shipments/" + id + "/custom_fields",
			"/v2/containers/" + id,
			"/v2/terminals/" + id,
			"/v2/ports/" + id,
			"/v2/custom_field_definitions/" + id,
			"/v2/custom_field_definitions/" + id + "/options",
			"/v2/custom_field_definitions/" + id + "/options/" + f.option,
			"/v2/custom_field_definitions/" + f.enumDefinition + "/options/" + id,
			"/v2/containers/" + id + "/custom_fields",
			"/v2/shipments/" + id + "/custom_fields/customer_po",
			"/v2/custom_fields/" + id,
			"/v2/email_submissions/" + id,
			"/v2/shipping_lines/" + id,
			"/v2/metro_areas/" + id,
		} {
			r := e.do("acme/admin", "GET", p, nil)
			wantError(t, r, http.StatusNotFound, "", "")
		}
		writes := []call{
			{"PATCH", "/v2/shipments/" + id + "/custom_fields/customer_po", map[string]any{"value": "x"}, true},
			{"PATCH", "/v2/shipments/" + id + "/custom_fields/customer_po", map[string]any{"nothing": "x"}, true},
			{"POST", "/v2/custom_field_definitions/" + id + "/options", map[string]any{"label": "A", "value": "a"}, true},
			{"POST", "/v2/custom_field_definitions/" + id + "/options", map[string]any{"label": 5}, true},
			{"PATCH", "/v2/custom_field_definitions/" + id + "/options/" + f.option, map[string]any{"label": "A"}, true},
			{"PATCH", "/v2/custom_field_definitions/" + f.enumDefinition + "/options/" + id, map[string]any{"label": "A"}, true},
			{"DELETE", "/v2/custom_field_definitions/" + id + "/options/" + f.option, nil, true},
			{"DELETE", "/v2/custom_field_definitions/" + f.enumDefinition + "/options/" + id, nil, true},
			{"POST", "/v2/shipments/" + id + "/custom_fields", map[string]any{"api_slug": "customer_po", "value": "x"}, true},
			{"POST", "/v2/containers/" + id + "/custom_fields", map[string]any{"nothing": 1}, true},
			{"DELETE", "/v2/shipments/" + id + "/custom_fields/customer_po", nil, true},
			{"PATCH", "/v2/containers/" + id + "/custom_fields/yard_slot", map[string]any{"value": "x"}, true},
			{"PATCH", "/v2/custom_fields/" + id, map[string]any{"value": "x"}, true},
			{"PATCH", "/v2/custom_fields/" + id, map[string]any{"nothing": "x"}, true},
			{"DELETE", "/v2/custom_fields/" + id, nil, true},
			{"PATCH", "/v2/custom_field_definitions/" + id, map[string]any{"display_name": "x"}, true},
			{"PATCH", "/v2/custom_field_definitions/" + id, map[string]any{"display_name": 5}, true},
			{"DELETE", "/v2/custom_field_definitions/" + id, nil, true},
			{"PATCH", "/v2/shipments/" + id, map[string]any{"tags": []string{"x"}}, true},
			{"PATCH", "/v2/shipments/" + id, map[string]any{"tags": 5}, true},
			{"PATCH", "/v2/shipments/" + id + "/stop_tracking", nil, true},
			{"PATCH", "/v2/shipments/" + id + "/resume_tracking", nil, true},
			{"PATCH", "/v2/documents/" + id, map[string]any{"document_type_manual": "other"}, true},
			{"PATCH", "/v2/documents/" + id, map[string]any{"document_type_manual": 5}, true},
			{"DELETE", "/v2/documents/" + id, nil, true},
		}
		for _, c := range writes {
			r := e.do("acme/admin", c.method, c.path, c.body)
			wantError(t, r, http.StatusNotFound, "", "")
		}
	}
	// An unknown slug on a known shipment.
	r := e.do("acme/admin", "PATCH", "/v2/shipments/"+f.shipment+"/custom_fields/no_such_field", map[string]any{"value": "x"})
	wantError(t, r, http.StatusNotFound, "", "")
	// A container's field is not a shipment's.
	r = e.do("acme/admin", "PATCH", "/v2/shipments/"+f.shipment+"/custom_fields/yard_slot", map[string]any{"value": "x"})
	wantError(t, r, http.StatusNotFound, "", "")
	// Paths that are no endpoint.
	for _, p := range []string{"/v2/", "/v2/vessels/" + unknown, "/v2/documents/" + f.document + "/nope", "/v2/shipments/"} {
		r := e.do("acme/admin", "GET", p, nil)
		wantError(t, r, http.StatusNotFound, "", "")
	}
	golden(t, "error_404", e.do("acme/admin", "GET", "/v2/shipments/"+unknown, nil))
	validate(t, "get-shipment-404", e.do("acme/admin", "GET", "/v2/shipments/"+unknown, nil).body)
}

func TestMethodNotAllowed(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	for _, c := range []call{
		{"PUT", "/v2/documents", map[string]any{}, true},
		{"DELETE", "/v2/shipments/" + f.shipment, nil, true},
		{"PUT", "/v2/custom_field_definitions/" + f.enumDefinition + "/options/" + f.option, map[string]any{}, true},
		{"PUT", "/v2/shipments/" + f.shipment + "/custom_fields/customer_po", map[string]any{}, true},
		{"PATCH", "/v2/custom_fields", map[string]any{}, true},
	} {
		r := e.do("acme/admin", c.method, c.path, c.body)
		wantError(t, r, http.StatusMethodNotAllowed, "", "")
		if r.header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", c.method, c.path)
		}
	}
	// HEAD is GET without a body.
	if r := e.do("acme/admin", "HEAD", "/v2/shipments/"+f.shipment, nil); r.status != http.StatusOK || len(r.body) != 0 {
		t.Errorf("HEAD: %d, %d bytes", r.status, len(r.body))
	}
}

func TestBadBodies(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	patchCF := "/v2/shipments/" + f.shipment + "/custom_fields/customer_po"
	options := "/v2/custom_field_definitions/" + f.enumDefinition + "/options"
	option := options + "/" + f.option
	targets := []struct{ method, path string }{{"PATCH", patchCF}, {"POST", options}, {"PATCH", option},
		// Issue 8's writes.
		{"POST", "/v2/shipments/" + f.shipment + "/custom_fields"}, {"POST", "/v2/containers/" + f.container + "/custom_fields"},
		{"POST", "/v2/custom_fields"}, {"PATCH", "/v2/custom_fields/" + f.customField},
		{"POST", "/v2/custom_field_definitions"}, {"PATCH", "/v2/custom_field_definitions/" + f.textDefinition},
		{"PATCH", "/v2/shipments/" + f.shipment}, {"PATCH", "/v2/documents/" + f.document}}

	for _, tg := range targets {
		// 415: not JSON.
		for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx"} {
			r := e.do("acme/admin", tg.method, tg.path, `{"value": "x"}`, "Content-Type", ct)
			wantError(t, r, http.StatusUnsupportedMediaType, "", "")
		}
		// Both JSON media types, with parameters, are fine.
		for _, ct := range []string{"application/json", "application/json; charset=utf-8", "application/vnd.api+json"} {
			r := e.do("acme/admin", tg.method, tg.path, `{"data": 5}`, "Content-Type", ct)
			wantError(t, r, http.StatusBadRequest, "pointer", "/data")
		}
		// 413: over the limit.
		big := `{"value": "` + strings.Repeat("x", testBodyLimit) + `"}`
		r := e.do("acme/admin", tg.method, tg.path, big)
		wantError(t, r, http.StatusRequestEntityTooLarge, "", "")

		// 400: not the JSON:API shape.
		for _, c := range []struct{ body, pointer string }{
			{``, "/"},
			{`{`, "/"},
			{`not json`, "/"},
			{`[]`, "/"},
			{`null`, "/"},
			{`"value"`, "/"},
			{`{"value": 1} trailing`, "/"},
			{`{"data": null}`, "/data"},
			{`{"data": []}`, "/data"},
			{`{"data": "x"}`, "/data"},
			{`{"data": {"type": "vessel", "attributes": {}}}`, "/data/type"},
			{`{"data": {"type": 5, "attributes": {}}}`, "/data/type"},
			{`{"data": {"attributes": []}}`, "/data/attributes"},
			{`{"data": {"attributes": null}}`, "/data/attributes"},
		} {
			r := e.do("acme/admin", tg.method, tg.path, c.body)
			wantError(t, r, http.StatusBadRequest, "pointer", c.pointer)
		}
	}
	golden(t, "error_400_body", e.do("acme/admin", "PATCH", patchCF, `{"data": {"type": "shipment", "attributes": {"value": "x"}}}`))
	golden(t, "error_415", e.do("acme/admin", "PATCH", patchCF, `{"value": "x"}`, "Content-Type", "text/plain"))
}

// TestNoServerErrors sends odd requests to every endpoint: none may be
// answered with a 5xx.
func TestNoServerErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	odd := []string{
		"?include=%00", "?sort=%ff", "?page[number]=1e3", "?filter[reference]=%27%3B--", "?filter[filename]=%26%7C%21%3A*",
		"?filter[document_types]=,,,", "?q=%25%5F", "?number=%00", "?filter[display_name]=%25", "?include=,", "?sort=-",
		"?page[size]=+5", "?filter[tracking_stopped]=", "?filter[entity_type]=shipment", "?filter[data_type]=ENUM",
	}
	bodies := []string{`{"value": {"a": [1, 2]}}`, `{"value": 1e400}`, `{"data": {"attributes": {"value": "\u0000"}}}`,
		`{"label": "` + strings.Repeat("é", 300) + `", "value": "v"}`, `{"position": 1e20, "label": "x"}`,
		`{"data": {"attributes": {"label": "x", "value": "y", "position": -1}}}`, `{"value": [null]}`, `{"value": true}`}
	for _, c := range endpoints(f) {
		for _, q := range odd {
			r := e.do("acme/admin", c.method, c.path+q, c.body)
			if r.status >= 500 {
				t.Errorf("%s %s%s: %d\n%s", c.method, c.path, q, r.status, r.body)
			}
		}
		if c.write {
			for _, b := range bodies {
				r := e.do("acme/admin", c.method, c.path, b)
				if r.status >= 500 {
					t.Errorf("%s %s %s: %d\n%s", c.method, c.path, b, r.status, r.body)
				}
			}
		}
	}
}

// TestInternalErrors: an error that is not an application error (a bug, a
// driver failure) is a generic JSON:API 500 naming the request id, and its
// text never reaches the client.
func TestInternalErrors(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest("GET", "/v2/documents", nil)
	req.Header.Set("X-Request-Id", "req-123")
	w := httptest.NewRecorder()
	jsonapi.WriteError(w, req, errors.New(`pq: relation "secret_table" does not exist`))
	r := &response{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
	e := wantError(t, r, http.StatusInternalServerError, "", "")
	if d := e["detail"].(string); strings.Contains(d, "secret") || !strings.Contains(d, "req-123") {
		t.Errorf("detail %q", d)
	}
	for err, status := range map[error]int{
		model.Errorf(model.EINVALID, "x"):                             400,
		model.Errorf(model.EINVALID, "x").AtParameter("sort"):         400,
		model.Errorf(model.EINVALID, "x").AtPointer("/data/type"):     400,
		model.Errorf(model.EINVALID, "x").AtPointer("/data/attrs"):    422,
		model.Errorf(model.ECONFLICT, "x"):                            422,
		model.Errorf(model.EFORBIDDEN, "x"):                           403,
		model.Errorf(model.ENOTFOUND, "x"):                            404,
		model.Errorf(model.EUNAUTHENTICATED, "x"):                     401,
		model.Errorf(model.ERATELIMITED, "x"):                         429,
		model.Errorf(model.EUNAVAILABLE, "x"):                         503,
		fmt.Errorf("wrapped: %w", model.Errorf(model.ENOTFOUND, "x")): 404,
		errors.New("x"): 500,
	} {
		if got := jsonapi.StatusOf(err); got != status {
			t.Errorf("StatusOf(%v) = %d, want %d", err, got, status)
		}
	}
}

// TestInvalidUTF8Bodies: a body that is not valid UTF-8 is refused with a
// 400 before anything is decoded; encoding/json would otherwise store
// U+FFFD in place of the bytes sent.
func TestInvalidUTF8Bodies(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	n := 0
	for _, c := range endpoints(f) {
		if !c.write || c.body == nil {
			continue // reads and deletes read no body
		}
		for _, bad := range []string{"\xff", "\xc3(", "\xed\xa0\x80"} {
			r := e.do("acme/admin", c.method, c.path, `{"data": {"attributes": {"value": "x`+bad+`", "label": "L`+bad+`"}}}`)
			if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "UTF-8") {
				t.Errorf("%s %s with %q: %d\n%s", c.method, c.path, bad, r.status, r.body)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no write endpoint was tried")
	}
}

// TestPositionOutOfRange: a position that is an integer but too large
// for the column says so (not "must be an integer").
func TestPositionOutOfRange(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	for _, c := range endpoints(f) {
		if !c.write || c.method != "POST" || !strings.HasSuffix(c.path, "/options") {
			continue
		}
		r := e.do("acme/admin", c.method, c.path, `{"label": "x", "value": "x", "position": 99999999999}`)
		got := wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/data/attributes/position")
		if d, _ := got["detail"].(string); !strings.Contains(d, "between") {
			t.Errorf("detail %q; want the range", d)
		}
		return
	}
	t.Fatal("no options endpoint among the fixtures")
}

// TestMethodNotAllowedSlowBody: a 405 is answered at once even while the
// client is still sending the body it announced (the server closes the
// connection instead of waiting to drain the body).
func TestMethodNotAllowedSlowBody(t *testing.T) {
	e := newEnv(t, envOptions{})
	k := e.keys["acme/admin"]
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v2/shipments/%s HTTP/1.1\r\nHost: x\r\nAuthorization: Token %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"da", uuidZero, k)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer while the body is incomplete: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("status %d, want 405", res.StatusCode)
	}
}

const uuidZero = "00000000-0000-0000-0000-000000000000"

// TestWriteErrorOrder checks the order the resolver layer answers a write
// in, the body's shape included: a key that may not write (403), then a
// body that is not the JSON:API shape (400, even for an unknown record),
// then an unknown record (404), then the attributes (422). A member key's
// malformed body to an admin-only write is a 400 before the role's 403.
func TestWriteErrorOrder(t *testing.T) {
	e := newEnv(t, envOptions{})
	const unknown = "00000000-0000-4000-8000-000000000000"
	for _, path := range []string{
		"/v2/shipments/" + unknown, "/v2/containers/" + unknown, "/v2/documents/" + unknown,
		"/v2/tracking_requests/" + unknown, "/v2/parties/" + unknown, "/v2/custom_fields/" + unknown,
		"/v2/custom_field_definitions/" + unknown, "/v2/custom_field_definitions/" + unknown + "/options/" + unknown,
		"/v2/shipments/" + unknown + "/custom_fields/customer_po",
	} {
		wantError(t, e.do("acme/viewer", "PATCH", path, `{"data": 5}`), http.StatusForbidden, "", "")
		wantError(t, e.do("acme/member", "PATCH", path, `{"data": 5}`), http.StatusBadRequest, "pointer", "/data")
		wantError(t, e.do("acme/member", "PATCH", path, `{"nonsense": 1, "value": 1}`), http.StatusNotFound, "", "")
	}
	// A new record's body: the shape, then the attributes.
	wantError(t, e.do("acme/viewer", "POST", "/v2/tracking_requests", `{"data": 5}`), http.StatusForbidden, "", "")
	wantError(t, e.do("acme/member", "POST", "/v2/tracking_requests", `{"data": 5}`), http.StatusBadRequest, "pointer", "/data")
	wantError(t, e.do("acme/member", "POST", "/v2/tracking_requests", `{"data": {"relationships": 5}}`), http.StatusBadRequest, "pointer", "/data/relationships")
	wantError(t, e.do("acme/member", "POST", "/v2/custom_fields", `{"data": {"attributes": {}}}`), http.StatusBadRequest, "pointer", "/data/relationships/entity")
	wantError(t, e.do("acme/member", "POST", "/v2/documents", `{"data": {"attributes": {}, "relationships": {"vessels": {"data": []}}}}`), http.StatusBadRequest, "pointer", "/data/relationships/vessels")
	wantError(t, e.do("acme/member", "POST", "/rails/active_storage/direct_uploads", `{}`), http.StatusBadRequest, "pointer", "/blob")
	wantError(t, e.do("acme/viewer", "POST", "/rails/active_storage/direct_uploads", `{}`), http.StatusForbidden, "", "")
	// Rotation: a degrees of the wrong type is answered before the
	// document is looked up; a number is checked once it is found.
	rotate := "/v2/documents/" + unknown + "/rotate"
	wantError(t, e.do("acme/member", "POST", rotate, `{"degrees": "x"}`), http.StatusUnprocessableEntity, "pointer", "/data/attributes/degrees")
	wantError(t, e.do("acme/member", "POST", rotate, `{"degrees": 45}`), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "POST", rotate, `{"degrees": 90}`, "Content-Type", "text/plain"), http.StatusUnsupportedMediaType, "", "")
	wantError(t, e.do("acme/member", "POST", rotate, "{\"degrees\": \"\xff\"}"), http.StatusBadRequest, "", "")
	wantError(t, e.do("acme/member", "POST", rotate, `{"data": 5}`), http.StatusBadRequest, "pointer", "/data")
	// Webhooks are an admin's: a member's malformed body is still a 400
	// first, a well-formed one the role's 403.
	wantError(t, e.do("acme/member", "POST", "/v2/webhooks", `{"data": 5}`), http.StatusBadRequest, "pointer", "/data")
	wantError(t, e.do("acme/member", "POST", "/v2/webhooks", `{"url": "https://example.com/hook"}`), http.StatusForbidden, "", "")
	wantError(t, e.do("acme/member", "POST", "/v2/webhooks/trigger", `{"data": 5}`), http.StatusForbidden, "", "")
}

// TestDefinitionFixedAttributes: a definition's entity type, api_slug and
// data type may be sent with a PATCH only as they are (any case).
func TestDefinitionFixedAttributes(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	path := "/v2/custom_field_definitions/" + f.textDefinition
	def := e.get(path)["data"].(map[string]any)["attributes"].(map[string]any)
	patch := func(attrs map[string]any) *response {
		return e.do("acme/member", "PATCH", path, map[string]any{"data": map[string]any{"type": "custom_field_definition", "attributes": attrs}})
	}
	for _, name := range []string{"entity_type", "api_slug", "data_type"} {
		for _, v := range []any{"something_else", 5, nil} {
			r := patch(map[string]any{name: v, "display_name": 7})
			body := wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/data/attributes/"+name)
			if d := body["detail"]; d != name+" cannot be changed; create a new definition" {
				t.Errorf("%s %v: detail %q", name, v, d)
			}
		}
	}
	r := patch(map[string]any{"entity_type": strings.ToUpper(def["entity_type"].(string)), "api_slug": def["api_slug"], "data_type": def["data_type"], "display_name": "Renamed"})
	if r.status != http.StatusOK {
		t.Fatalf("PATCH with the fixed attributes as they are: %d\n%s", r.status, r.body)
	}
	// A fixed attribute's check comes once the definition is found.
	wantError(t, e.do("acme/member", "PATCH", "/v2/custom_field_definitions/00000000-0000-4000-8000-000000000000",
		map[string]any{"api_slug": "other"}), http.StatusNotFound, "", "")
}
