package graph_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"shipgraph/testkit"
)

// newRequestDefinitions creates short_text TrackingRequest definitions of
// the key's account, by createCustomFieldDefinition; it returns their ids.
func newRequestDefinitions(t *testing.T, e *testkit.Env, k string, slugs ...string) []string {
	t.Helper()
	var ids []string
	for _, slug := range slugs {
		var c struct {
			CreateCustomFieldDefinition struct{ ID, EntityType string }
		}
		e.Must(t, k, `mutation($s: String!) { createCustomFieldDefinition(input: {entityType: TRACKING_REQUEST, apiSlug: $s,
			displayName: $s, dataType: SHORT_TEXT}) { id entityType } }`, testkit.Vars{"s": slug}, &c)
		if c.CreateCustomFieldDefinition.EntityType != "TRACKING_REQUEST" {
			t.Fatalf("definition %s: %+v", slug, c.CreateCustomFieldDefinition)
		}
		ids = append(ids, c.CreateCustomFieldDefinition.ID)
	}
	return ids
}

// TestTrackingRequestCustomFieldsGraphQL: TRACKING_REQUEST definitions,
// values set, created, read, updated and deleted on a tracking request
// (by its mutations and the generic ones), TrackingRequest.customFields and
// customField(apiSlug), the CustomFieldEntity union and the filters; another
// account's request is NOT_FOUND.
func TestTrackingRequestCustomFieldsGraphQL(t *testing.T) {
	t.Parallel()
	e, f := newWriteFixture(t)
	admin, k := e.Key(t, acmeAdmin), e.Key(t, acmeMember)
	defs := newRequestDefinitions(t, e, admin, "internal_ref", "desk")
	req := e.Text(t, `SELECT id FROM tracking_requests WHERE account_id = $1 ORDER BY id LIMIT 1`, f.acme)
	otherReq := e.Text(t, `SELECT id FROM tracking_requests WHERE account_id = $1 ORDER BY id LIMIT 1`, f.globex)

	type cf struct {
		ID, APISlug string
		Value       json.RawMessage
		Definition  struct{ ID string }
		Entity      struct {
			Typename string `json:"__typename"`
			ID       string
		}
	}
	const fields = `id apiSlug value definition { id } entity { __typename ... on TrackingRequest { id } ... on Shipment { id } }`

	// Set by the request's own mutation (upper-case id: the same record).
	var set struct{ UpdateTrackingRequestCustomField *cf }
	e.Must(t, k, `mutation($r: ID!) { updateTrackingRequestCustomField(trackingRequestId: $r, apiSlug: "internal_ref", value: "REF-1") { `+fields+` } }`,
		testkit.Vars{"r": strings.ToUpper(req)}, &set)
	v := set.UpdateTrackingRequestCustomField
	if v == nil || v.Entity.Typename != "TrackingRequest" || v.Entity.ID != req || string(v.Value) != `"REF-1"` || v.Definition.ID != defs[0] {
		t.Fatalf("set: %+v", v)
	}
	stored := e.Text(t, `SELECT tracking_request_id::text FROM custom_fields WHERE id = $1 AND shipment_id IS NULL AND container_id IS NULL`, v.ID)
	if stored != req {
		t.Errorf("stored on %q, want %s", stored, req)
	}

	// Create by entity id alone (the kind is found) and with the type.
	var c struct{ CreateCustomField cf }
	e.Must(t, k, `mutation($e: ID!) { createCustomField(input: {entityId: $e, apiSlug: "desk", value: "D-1"}) { `+fields+` } }`,
		testkit.Vars{"e": req}, &c)
	if c.CreateCustomField.Entity.Typename != "TrackingRequest" || c.CreateCustomField.Entity.ID != req {
		t.Fatalf("create: %+v", c.CreateCustomField)
	}
	for _, m := range []struct{ query, code string }{
		{`mutation($e: ID!) { createCustomField(input: {entityId: $e, entityType: TRACKING_REQUEST, apiSlug: "desk", value: "D-2"}) { id } }`, "CONFLICT"},
		{`mutation($e: ID!) { createCustomField(input: {entityId: $e, entityType: SHIPMENT, apiSlug: "desk", value: "D-2"}) { id } }`, "NOT_FOUND"},
		{`mutation($e: ID!) { createCustomField(input: {entityId: $e, entityType: TRACKING_REQUEST, apiSlug: "customer_po", value: "x"}) { id } }`, "NOT_FOUND"},
		{`mutation($e: ID!) { updateTrackingRequestCustomField(trackingRequestId: $e, apiSlug: "internal_ref", value: 5) { id } }`, "BAD_USER_INPUT"},
	} {
		res := e.Do(t, k, m.query, testkit.Vars{"e": req})
		if !testkit.CodesEqual(res.Codes(), m.code) {
			t.Errorf("%s: %s, want %s", m.query, res, m.code)
		}
	}
	// A shipment id is not a tracking request.
	res := e.Do(t, k, `mutation($s: ID!) { updateTrackingRequestCustomField(trackingRequestId: $s, apiSlug: "internal_ref", value: "x") { id } }`, testkit.Vars{"s": f.ship})
	if !testkit.CodesEqual(res.Codes(), "NOT_FOUND") {
		t.Errorf("a shipment as a tracking request: %s", res)
	}

	// Read: customFields (display name order), customField(apiSlug), and
	// the lists filtered by TRACKING_REQUEST.
	var r struct {
		TrackingRequest *struct {
			ID           string
			CustomFields []cf
			Ref          *cf
			Missing      *cf
		}
		CustomFields struct {
			TotalCount int
			Nodes      []cf
		}
		CustomFieldDefinitions struct {
			Nodes []struct{ ID, EntityType string }
		}
	}
	e.Must(t, k, `query($r: ID!) {
		trackingRequest(id: $r) { id customFields { `+fields+` } ref: customField(apiSlug: "internal_ref") { `+fields+` }
			missing: customField(apiSlug: "customer_po") { id } }
		customFields(first: 50, filter: {entityType: TRACKING_REQUEST}) { totalCount nodes { `+fields+` } }
		customFieldDefinitions(first: 50, filter: {entityType: TRACKING_REQUEST}) { nodes { id entityType } }
	}`, testkit.Vars{"r": req}, &r)
	tr := r.TrackingRequest
	if tr == nil || len(tr.CustomFields) != 2 || tr.CustomFields[0].APISlug != "desk" || tr.CustomFields[1].APISlug != "internal_ref" {
		t.Fatalf("trackingRequest.customFields: %+v", tr)
	}
	if tr.Ref == nil || tr.Ref.ID != v.ID || string(tr.Ref.Value) != `"REF-1"` || tr.Missing != nil {
		t.Errorf("customField(apiSlug): ref %+v, missing %+v", tr.Ref, tr.Missing)
	}
	if r.CustomFields.TotalCount != 2 || len(r.CustomFields.Nodes) != 2 {
		t.Errorf("customFields(TRACKING_REQUEST): %+v", r.CustomFields)
	}
	for _, n := range r.CustomFields.Nodes {
		if n.Entity.Typename != "TrackingRequest" {
			t.Errorf("customFields(TRACKING_REQUEST) lists %+v", n)
		}
	}
	if d := r.CustomFieldDefinitions.Nodes; len(d) != 2 || d[0].EntityType != "TRACKING_REQUEST" || d[1].EntityType != "TRACKING_REQUEST" {
		t.Errorf("customFieldDefinitions(TRACKING_REQUEST): %+v", d)
	}

	// Update by id; clear by the request's mutation (null answer, gone).
	var u struct{ UpdateCustomField *cf }
	e.Must(t, k, `mutation($id: ID!) { updateCustomField(id: $id, value: "D-9") { `+fields+` } }`, testkit.Vars{"id": c.CreateCustomField.ID}, &u)
	if u.UpdateCustomField == nil || string(u.UpdateCustomField.Value) != `"D-9"` || u.UpdateCustomField.Entity.ID != req {
		t.Errorf("update by id: %+v", u.UpdateCustomField)
	}
	e.Must(t, k, `mutation($r: ID!) { updateTrackingRequestCustomField(trackingRequestId: $r, apiSlug: "desk", value: null) { id } }`,
		testkit.Vars{"r": req}, &set)
	if set.UpdateTrackingRequestCustomField != nil {
		t.Errorf("clear: %+v", set.UpdateTrackingRequestCustomField)
	}

	// Delete by slug: the deleted value, once.
	var d struct{ DeleteTrackingRequestCustomField cf }
	e.Must(t, k, `mutation($r: ID!) { deleteTrackingRequestCustomField(trackingRequestId: $r, apiSlug: "internal_ref") { `+fields+` } }`,
		testkit.Vars{"r": req}, &d)
	if d.DeleteTrackingRequestCustomField.ID != v.ID || d.DeleteTrackingRequestCustomField.Entity.ID != req {
		t.Errorf("delete: %+v", d)
	}
	res = e.Do(t, k, `mutation($r: ID!) { deleteTrackingRequestCustomField(trackingRequestId: $r, apiSlug: "internal_ref") { id } }`, testkit.Vars{"r": req})
	if !testkit.CodesEqual(res.Codes(), "NOT_FOUND") {
		t.Errorf("second delete: %s", res)
	}
	var n int
	e.SQL(t, &n, `SELECT count(*) FROM custom_fields WHERE tracking_request_id = $1`, req)
	if n != 0 {
		t.Errorf("%d values left on the request", n)
	}

	// Another account's request: NOT_FOUND for every write; its own
	// definitions do not exist there either.
	for _, m := range []string{
		`mutation($r: ID!) { updateTrackingRequestCustomField(trackingRequestId: $r, apiSlug: "internal_ref", value: "x") { id } }`,
		`mutation($r: ID!) { deleteTrackingRequestCustomField(trackingRequestId: $r, apiSlug: "internal_ref") { id } }`,
		`mutation($r: ID!) { createCustomField(input: {entityId: $r, apiSlug: "internal_ref", value: "x"}) { id } }`,
	} {
		if res := e.Do(t, k, m, testkit.Vars{"r": otherReq}); !testkit.CodesEqual(res.Codes(), "NOT_FOUND") {
			t.Errorf("%s on another account's request: %s", m, res)
		}
	}
}

// TestTrackingRequestCustomFieldsStatements: TrackingRequest.customFields
// and customField(apiSlug) are batched: the statements of a page do not
// grow with its size.
func TestTrackingRequestCustomFieldsStatements(t *testing.T) {
	t.Parallel()
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeMember)
	newRequestDefinitions(t, e, e.Key(t, acmeAdmin), "internal_ref", "desk")
	var ids struct {
		TrackingRequests struct{ Nodes []struct{ ID string } }
	}
	e.Must(t, k, `{ trackingRequests(first: 50) { nodes { id } } }`, nil, &ids)
	many := len(ids.TrackingRequests.Nodes)
	if many < 6 {
		t.Fatalf("%d tracking requests, want at least 6", many)
	}
	for i, n := range ids.TrackingRequests.Nodes {
		e.Must(t, k, `mutation($r: ID!, $v: JSON) { a: updateTrackingRequestCustomField(trackingRequestId: $r, apiSlug: "internal_ref", value: $v) { id }
			b: updateTrackingRequestCustomField(trackingRequestId: $r, apiSlug: "desk", value: $v) { id } }`,
			testkit.Vars{"r": n.ID, "v": fmt.Sprint("R-", i)}, nil)
	}
	var total int
	e.SQL(t, &total, `SELECT count(*) FROM custom_fields WHERE account_id = $1 AND tracking_request_id IS NOT NULL`, f.acme)
	if total != 2*many {
		t.Fatalf("%d values stored, want %d", total, 2*many)
	}

	const q = `query($n: Int!) { trackingRequests(first: $n) { nodes { id
		customFields { apiSlug value definition { apiSlug } entity { __typename ... on TrackingRequest { id } } }
		ref: customField(apiSlug: "internal_ref") { value } } } }`
	e.Must(t, k, q, testkit.Vars{"n": many}, nil) // warm
	counts := map[int]int64{}
	for _, size := range []int{2, many} {
		var d struct {
			TrackingRequests struct {
				Nodes []struct {
					ID           string
					CustomFields []struct {
						APISlug string
						Value   json.RawMessage
						Entity  struct{ ID string }
					}
					Ref *struct{ Value json.RawMessage }
				}
			}
		}
		res := e.Must(t, k, q, testkit.Vars{"n": size}, &d)
		counts[size] = res.Statements
		if len(d.TrackingRequests.Nodes) != size {
			t.Fatalf("first %d: %d nodes", size, len(d.TrackingRequests.Nodes))
		}
		for _, n := range d.TrackingRequests.Nodes {
			if len(n.CustomFields) != 2 || n.Ref == nil || string(n.Ref.Value) != string(n.CustomFields[1].Value) {
				t.Errorf("request %s: %+v, ref %+v", n.ID, n.CustomFields, n.Ref)
			}
			for _, v := range n.CustomFields {
				if v.Entity.ID != n.ID {
					t.Errorf("request %s lists a value of %s", n.ID, v.Entity.ID)
				}
			}
		}
	}
	t.Logf("statements: first 2: %d, first %d: %d", counts[2], many, counts[many])
	if counts[2] != counts[many] || counts[many] > 5 {
		t.Errorf("TrackingRequest.customFields costs %v statements by page size; want the same few at any size", counts)
	}
}

// TestCreateTrackingRequestInitialCustomFields: createTrackingRequest's
// initialCustomFields is checked as /v2's initial_custom_fields is: a
// good one is staged on the request; an unknown slug and a value its data
// type refuses are BAD_USER_INPUT naming the member in extensions.field.
func TestCreateTrackingRequestInitialCustomFields(t *testing.T) {
	t.Parallel()
	e := newWriteEnv(t)
	k := e.Key(t, acmeMember)
	const create = `mutation($i: TrackingRequestInput!) { createTrackingRequest(input: $i) { id } }`
	input := func(number string, initial any) testkit.Vars {
		return testkit.Vars{"i": map[string]any{"requestType": "bill_of_lading", "requestNumber": number, "scac": "MSCU",
			"initialCustomFields": initial}}
	}
	var c struct{ CreateTrackingRequest struct{ ID string } }
	e.Must(t, k, create, input("MEDUGQ100001", map[string]any{
		"shipment":   []any{map[string]any{"apiSlug": "customer_po", "value": "PO-9"}},
		"containers": []any{map[string]any{"apiSlug": "yard_slot", "value": "C-3", "number": "MSCU1234566"}},
	}), &c)
	var n int
	e.SQL(t, &n, `SELECT jsonb_array_length(initial_custom_fields) FROM tracking_requests WHERE id = $1`, c.CreateTrackingRequest.ID)
	if n != 2 {
		t.Errorf("%d values staged, want 2", n)
	}
	for i, m := range []struct {
		initial any
		field   string
	}{
		{map[string]any{"shipment": []any{map[string]any{"apiSlug": "no_such", "value": "x"}}}, "initial_custom_fields/shipment/0/api_slug"},
		{map[string]any{"containers": []any{map[string]any{"apiSlug": "chassis_provider", "value": "nope"}}}, "initial_custom_fields/containers/0/value"},
	} {
		res := e.Do(t, k, create, input(fmt.Sprintf("MEDUGQ2%05d", i), m.initial))
		if !testkit.CodesEqual(res.Codes(), "BAD_USER_INPUT") || len(res.Errors) != 1 || res.Errors[0].Extensions["field"] != m.field {
			t.Errorf("%v: %s, want BAD_USER_INPUT at %s", m.initial, res, m.field)
		}
	}
}
