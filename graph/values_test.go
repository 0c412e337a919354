package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"shipgraph/testkit"
)

// TestCustomFieldValues: the GraphQL side of issue 8's value endpoints:
// createCustomField, updateContainerCustomField, updateCustomField,
// deleteShipmentCustomField, deleteContainerCustomField, deleteCustomField,
// customField(id) and customFields.
func TestCustomFieldValues(t *testing.T) {
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeMember)
	var cont string
	e.SQL(t, &cont, `SELECT id FROM containers WHERE account_id = $1 AND NOT EXISTS (
		SELECT 1 FROM custom_fields cf JOIN custom_field_definitions d ON d.account_id = cf.account_id AND d.id = cf.definition_id
		WHERE cf.account_id = containers.account_id AND cf.container_id = containers.id AND d.api_slug = 'yard_slot') ORDER BY id LIMIT 1`, f.acme)
	e.SQL(t, new(int), `WITH d AS (DELETE FROM custom_fields WHERE shipment_id = $1 AND definition_id = $2 RETURNING 1)
		SELECT count(*) FROM d`, f.ship, f.customerPO)

	type cf struct {
		ID, APISlug string
		Value       json.RawMessage
		Entity      struct{ ID string }
	}
	const fields = `id apiSlug value entity { ... on Shipment { id } ... on Container { id } }`

	// Create, by entity id alone (the type is found) and with the type;
	// upper-case ids are the same record.
	var c struct{ CreateCustomField cf }
	e.Must(t, k, `mutation($e: ID!) { createCustomField(input: {entityId: $e, apiSlug: "customer_po", value: "PO-9"}) { `+fields+` } }`,
		testkit.Vars{"e": strings.ToUpper(f.ship)}, &c)
	if c.CreateCustomField.Entity.ID != f.ship || string(c.CreateCustomField.Value) != `"PO-9"` {
		t.Fatalf("create: %+v", c.CreateCustomField)
	}
	res := e.Do(t, k, `mutation($e: ID!) { createCustomField(input: {entityId: $e, apiSlug: "customer_po", value: "PO-10"}) { id } }`, testkit.Vars{"e": f.ship})
	if got := res.Codes(); len(got) != 1 || got[0] != "CONFLICT" {
		t.Errorf("second create: %s", res)
	}
	res = e.Do(t, k, `mutation($e: ID!) { createCustomField(input: {entityId: $e, entityType: CONTAINER, apiSlug: "yard_slot", value: "x"}) { id } }`, testkit.Vars{"e": f.ship})
	if got := res.Codes(); len(got) != 1 || got[0] != "NOT_FOUND" {
		t.Errorf("a shipment as a container: %s", res)
	}
	var cc struct{ UpdateContainerCustomField *cf }
	e.Must(t, k, `mutation($c: ID!) { updateContainerCustomField(containerId: $c, apiSlug: "yard_slot", value: "C-3") { `+fields+` } }`,
		testkit.Vars{"c": cont}, &cc)
	if cc.UpdateContainerCustomField == nil || cc.UpdateContainerCustomField.Entity.ID != cont {
		t.Fatalf("container value: %+v", cc.UpdateContainerCustomField)
	}

	// Read by id and in the list.
	var one struct {
		CustomField *cf
		All         struct {
			TotalCount int
			Nodes      []cf
		}
	}
	e.Must(t, k, `query($id: ID!, $e: ID!) { customField(id: $id) { `+fields+` }
		all: customFields(filter: {entityId: $e}) { totalCount nodes { `+fields+` } } }`,
		testkit.Vars{"id": c.CreateCustomField.ID, "e": cont}, &one)
	if one.CustomField == nil || one.CustomField.ID != c.CreateCustomField.ID || one.All.TotalCount != len(one.All.Nodes) {
		t.Errorf("read: %+v", one)
	}
	found := false
	for _, n := range one.All.Nodes {
		found = found || n.ID == cc.UpdateContainerCustomField.ID
		if n.Entity.ID != cont {
			t.Errorf("customFields(entityId) lists %+v", n)
		}
	}
	if !found {
		t.Errorf("customFields(entityId) misses the new value: %+v", one.All.Nodes)
	}

	// Update by id; null clears (null answer, value gone).
	var u struct{ UpdateCustomField *cf }
	e.Must(t, k, `mutation($id: ID!) { updateCustomField(id: $id, value: "PO-11") { `+fields+` } }`, testkit.Vars{"id": c.CreateCustomField.ID}, &u)
	if u.UpdateCustomField == nil || string(u.UpdateCustomField.Value) != `"PO-11"` {
		t.Errorf("update: %+v", u.UpdateCustomField)
	}
	e.Must(t, k, `mutation($id: ID!) { updateCustomField(id: $id, value: null) { id } }`, testkit.Vars{"id": c.CreateCustomField.ID}, &u)
	if u.UpdateCustomField != nil {
		t.Errorf("clear: %+v", u.UpdateCustomField)
	}
	var gone struct{ CustomField *cf }
	e.Must(t, k, `query($id: ID!) { customField(id: $id) { id } }`, testkit.Vars{"id": c.CreateCustomField.ID}, &gone)
	if gone.CustomField != nil {
		t.Errorf("a cleared value reads %+v", gone.CustomField)
	}

	// Delete by slug and by id: the deleted value is the answer, once.
	var d struct{ DeleteContainerCustomField cf }
	e.Must(t, k, `mutation($c: ID!) { deleteContainerCustomField(containerId: $c, apiSlug: "yard_slot") { `+fields+` } }`, testkit.Vars{"c": cont}, &d)
	if d.DeleteContainerCustomField.ID != cc.UpdateContainerCustomField.ID {
		t.Errorf("delete by slug: %+v", d)
	}
	res = e.Do(t, k, `mutation($c: ID!) { deleteContainerCustomField(containerId: $c, apiSlug: "yard_slot") { id } }`, testkit.Vars{"c": cont})
	if got := res.Codes(); len(got) != 1 || got[0] != "NOT_FOUND" {
		t.Errorf("second delete: %s", res)
	}
	someID := e.Text(t, `SELECT id FROM custom_fields WHERE account_id = $1 AND shipment_id IS NOT NULL ORDER BY id LIMIT 1`, f.acme)
	var di struct{ DeleteCustomField cf }
	e.Must(t, k, `mutation($id: ID!) { deleteCustomField(id: $id) { `+fields+` } }`, testkit.Vars{"id": someID}, &di)
	if di.DeleteCustomField.ID != someID {
		t.Errorf("delete by id: %+v", di)
	}
	var n int
	e.SQL(t, &n, `SELECT count(*) FROM custom_fields WHERE id = $1`, someID)
	if n != 0 {
		t.Errorf("deleted value still stored")
	}

	// Another account's value is NOT_FOUND / null.
	theirs := e.Text(t, `SELECT id FROM custom_fields WHERE account_id = $1 ORDER BY id LIMIT 1`, f.globex)
	e.Must(t, k, `query($id: ID!) { customField(id: $id) { id } }`, testkit.Vars{"id": theirs}, &gone)
	if gone.CustomField != nil {
		t.Errorf("another account's value is visible")
	}
	for _, m := range []string{
		`mutation($id: ID!) { deleteCustomField(id: $id) { id } }`,
		`mutation($id: ID!) { updateCustomField(id: $id, value: "x") { id } }`,
	} {
		res := e.Do(t, k, m, testkit.Vars{"id": theirs})
		if got := res.Codes(); len(got) != 1 || got[0] != "NOT_FOUND" {
			t.Errorf("%s on another account's value: %s", m, res)
		}
	}
}

// TestDefinitionMutations: create, update (an omitted field keeps its
// value, null clears) and delete (options and values go with it).
func TestDefinitionMutations(t *testing.T) {
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeAdmin)
	type def struct {
		ID, APISlug, DisplayName string
		Description              *string
		Validation               json.RawMessage
	}
	const fields = `id apiSlug displayName description validation`
	var c struct{ CreateCustomFieldDefinition def }
	e.Must(t, k, `mutation { createCustomFieldDefinition(input: {entityType: SHIPMENT, apiSlug: "incoterm", displayName: " Incoterm ",
		description: "Terms", dataType: ENUM, validation: {required: true}}) { `+fields+` } }`, nil, &c)
	d := c.CreateCustomFieldDefinition
	if d.DisplayName != "Incoterm" || d.Description == nil || string(d.Validation) != `{"required":true}` {
		t.Fatalf("create: %+v", d)
	}
	res := e.Do(t, k, `mutation { createCustomFieldDefinition(input: {entityType: SHIPMENT, apiSlug: "incoterm", displayName: "X", dataType: ENUM}) { id } }`, nil)
	if got := res.Codes(); len(got) != 1 || got[0] != "CONFLICT" {
		t.Errorf("duplicate slug: %s", res)
	}
	var u struct{ UpdateCustomFieldDefinition def }
	e.Must(t, k, `mutation($id: ID!) { updateCustomFieldDefinition(id: $id, input: {description: null}) { `+fields+` } }`, testkit.Vars{"id": d.ID}, &u)
	if u.UpdateCustomFieldDefinition.Description != nil || u.UpdateCustomFieldDefinition.DisplayName != "Incoterm" || string(u.UpdateCustomFieldDefinition.Validation) != `{"required":true}` {
		t.Errorf("update: %+v", u.UpdateCustomFieldDefinition)
	}
	e.Must(t, k, `mutation($id: ID!) { createCustomFieldOption(definitionId: $id, input: {label: "FOB", value: "fob"}) { id } }`, testkit.Vars{"id": d.ID}, nil)
	e.Must(t, k, `mutation($s: ID!) { updateShipmentCustomField(shipmentId: $s, apiSlug: "incoterm", value: "fob") { id } }`, testkit.Vars{"s": f.ship}, nil)

	var del struct{ DeleteCustomFieldDefinition def }
	e.Must(t, k, `mutation($id: ID!) { deleteCustomFieldDefinition(id: $id) { `+fields+` } }`, testkit.Vars{"id": d.ID}, &del)
	if del.DeleteCustomFieldDefinition.ID != d.ID {
		t.Errorf("delete: %+v", del)
	}
	var n int
	e.SQL(t, &n, `SELECT (SELECT count(*) FROM custom_field_definitions WHERE id = $1) + (SELECT count(*) FROM custom_field_options WHERE definition_id = $1)
		+ (SELECT count(*) FROM custom_fields WHERE definition_id = $1)`, d.ID)
	if n != 0 {
		t.Errorf("%d rows of the deleted definition left", n)
	}
	// Another account's definition is NOT_FOUND.
	res = e.Do(t, k, `mutation($id: ID!) { deleteCustomFieldDefinition(id: $id) { id } }`, testkit.Vars{"id": f.otherPriority})
	if got := res.Codes(); len(got) != 1 || got[0] != "NOT_FOUND" {
		t.Errorf("another account's definition: %s", res)
	}
}

// TestShipmentMutations: updateShipment, stopTrackingShipment and
// resumeTrackingShipment.
func TestShipmentMutations(t *testing.T) {
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeMember)
	e.SQL(t, new(int), `WITH s AS (UPDATE shipments SET line_tracking_stopped_at = NULL, line_tracking_stopped_reason = NULL,
		line_tracking_stopped_by_user_id = NULL WHERE id = $1 RETURNING 1) SELECT count(*) FROM s`, f.ship)
	type ship struct {
		ID                        string
		RefNumbers                []string
		Tags                      []string
		LineTrackingStoppedAt     *string
		LineTrackingStoppedReason *string
		LineTrackingStoppedByUser *struct{ ID string }
	}
	const fields = `id refNumbers tags lineTrackingStoppedAt lineTrackingStoppedReason lineTrackingStoppedByUser { id }`
	var u struct{ UpdateShipment ship }
	e.Must(t, k, `mutation($s: ID!) { updateShipment(id: $s, input: {tags: ["a", "a", "b"], refNumbers: null}) { `+fields+` } }`, testkit.Vars{"s": f.ship}, &u)
	if strings.Join(u.UpdateShipment.Tags, ",") != "a,b" || u.UpdateShipment.RefNumbers != nil {
		t.Errorf("update: %+v", u.UpdateShipment)
	}
	var me struct {
		Viewer struct{ User struct{ ID string } }
	}
	e.Must(t, k, `{ viewer { user { id } } }`, nil, &me)
	var s struct{ StopTrackingShipment ship }
	e.Must(t, k, `mutation($s: ID!) { stopTrackingShipment(id: $s) { `+fields+` } }`, testkit.Vars{"s": f.ship}, &s)
	st := s.StopTrackingShipment
	if st.LineTrackingStoppedAt == nil || st.LineTrackingStoppedReason == nil || *st.LineTrackingStoppedReason != "CANCELLED_BY_USER" ||
		st.LineTrackingStoppedByUser == nil || st.LineTrackingStoppedByUser.ID != me.Viewer.User.ID {
		t.Errorf("stop: %+v", st)
	}
	var r struct{ ResumeTrackingShipment ship }
	e.Must(t, k, `mutation($s: ID!) { resumeTrackingShipment(id: $s) { `+fields+` } }`, testkit.Vars{"s": f.ship}, &r)
	if rt := r.ResumeTrackingShipment; rt.LineTrackingStoppedAt != nil || rt.LineTrackingStoppedReason != nil || rt.LineTrackingStoppedByUser != nil {
		t.Errorf("resume: %+v", rt)
	}
	res := e.Do(t, k, `mutation($s: ID!) { stopTrackingShipment(id: $s) { id } }`, testkit.Vars{"s": f.otherShip})
	if got := res.Codes(); len(got) != 1 || got[0] != "NOT_FOUND" {
		t.Errorf("another account's shipment: %s", res)
	}
}

// TestDocumentMutations: documentTypes, updateDocument, deleteDocument.
func TestDocumentMutations(t *testing.T) {
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeMember)
	doc := e.Text(t, `SELECT id FROM documents WHERE account_id = $1 ORDER BY id LIMIT 1`, f.acme)
	theirs := e.Text(t, `SELECT id FROM documents WHERE account_id = $1 ORDER BY id LIMIT 1`, f.globex)
	var types struct {
		DocumentTypes []struct{ Code, Label string }
	}
	e.Must(t, k, `{ documentTypes { code label } }`, nil, &types)
	if len(types.DocumentTypes) == 0 || types.DocumentTypes[0].Code != "bill_of_lading" {
		t.Errorf("documentTypes: %+v", types)
	}
	var u struct {
		UpdateDocument struct{ DocumentTypeManual *string }
	}
	e.Must(t, k, `mutation($d: ID!) { updateDocument(id: $d, input: {documentTypeManual: "customs_entry"}) { documentTypeManual } }`, testkit.Vars{"d": doc}, &u)
	if u.UpdateDocument.DocumentTypeManual == nil || *u.UpdateDocument.DocumentTypeManual != "customs_entry" {
		t.Errorf("update: %+v", u)
	}
	res := e.Do(t, k, `mutation($d: ID!) { updateDocument(id: $d, input: {documentTypeManual: "passport"}) { id } }`, testkit.Vars{"d": doc})
	if got := res.Codes(); len(got) != 1 || got[0] != "BAD_USER_INPUT" {
		t.Errorf("unknown type: %s", res)
	}
	var d struct{ DeleteDocument struct{ ID string } }
	e.Must(t, k, `mutation($d: ID!) { deleteDocument(id: $d) { id } }`, testkit.Vars{"d": doc}, &d)
	var n int
	e.SQL(t, &n, `SELECT (SELECT count(*) FROM documents WHERE id = $1) + (SELECT count(*) FROM document_shipments WHERE document_id = $1)
		+ (SELECT count(*) FROM document_representations WHERE document_id = $1)`, doc)
	if d.DeleteDocument.ID != doc || n != 0 {
		t.Errorf("delete: %+v, %d rows left", d, n)
	}
	res = e.Do(t, k, `mutation($d: ID!) { deleteDocument(id: $d) { id } }`, testkit.Vars{"d": theirs})
	if got := res.Codes(); len(got) != 1 || got[0] != "NOT_FOUND" {
		t.Errorf("another account's document: %s", res)
	}
}

// TestEmailSubmissions: the list (newest first, with documents) and one.
func TestEmailSubmissions(t *testing.T) {
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeViewer)
	var got struct {
		EmailSubmissions struct {
			TotalCount int
			Nodes      []struct {
				ID        string
				CreatedAt string
				Account   struct{ ID string }
				Documents []struct{ ID string }
			}
		}
	}
	e.Must(t, k, `{ emailSubmissions(first: 100) { totalCount nodes { id createdAt account { id } documents { id } } } }`, nil, &got)
	var want int
	e.SQL(t, &want, `SELECT count(*) FROM email_submissions WHERE account_id = $1`, f.acme)
	nodes := got.EmailSubmissions.Nodes
	if got.EmailSubmissions.TotalCount != want || len(nodes) == 0 {
		t.Fatalf("totalCount %d nodes %d, want %d", got.EmailSubmissions.TotalCount, len(nodes), want)
	}
	for i, n := range nodes {
		if n.Account.ID != f.acme || (i > 0 && n.CreatedAt > nodes[i-1].CreatedAt) {
			t.Errorf("node %d: %+v", i, n)
		}
		var docs int
		e.SQL(t, &docs, `SELECT count(*) FROM documents WHERE email_submission_id = $1`, n.ID)
		if docs != len(n.Documents) {
			t.Errorf("%s: %d documents, want %d", n.ID, len(n.Documents), docs)
		}
	}
	// The owner reads one; globex's keys do not see it.
	q := `query($id: ID!) { emailSubmission(id: $id) { id } }`
	var one struct{ EmailSubmission *struct{ ID string } }
	e.Must(t, k, q, testkit.Vars{"id": strings.ToUpper(nodes[0].ID)}, &one)
	if one.EmailSubmission == nil || one.EmailSubmission.ID != nodes[0].ID {
		t.Errorf("emailSubmission: %+v", one)
	}
	e.Must(t, e.Key(t, globexViewer), q, testkit.Vars{"id": nodes[0].ID}, &one)
	if one.EmailSubmission != nil {
		t.Errorf("another account's emailSubmission: %+v", one)
	}
}

// TestReferenceReads: shippingLines (by SCAC), shippingLine by id or SCAC,
// metroArea.
func TestReferenceReads(t *testing.T) {
	e := newWriteEnv(t)
	k := e.Key(t, globexViewer)
	var got struct {
		ShippingLines struct {
			TotalCount int
			Nodes      []struct{ ID, Scac string }
		}
	}
	e.Must(t, k, `{ shippingLines(first: 100) { totalCount nodes { id scac } } }`, nil, &got)
	nodes := got.ShippingLines.Nodes
	if len(nodes) == 0 || got.ShippingLines.TotalCount != len(nodes) {
		t.Fatalf("shippingLines: %+v", got)
	}
	for i := 1; i < len(nodes); i++ {
		if nodes[i].Scac < nodes[i-1].Scac {
			t.Errorf("not by SCAC: %s after %s", nodes[i].Scac, nodes[i-1].Scac)
		}
	}
	metro := e.Text(t, `SELECT id FROM metro_areas ORDER BY id LIMIT 1`)
	var one struct {
		ByID, ByScac, None *struct{ ID string }
		MetroArea          *struct{ ID string }
	}
	e.Must(t, k, `query($id: ID!, $scac: ID!, $m: ID!) { byID: shippingLine(id: $id) { id } byScac: shippingLine(id: $scac) { id }
		none: shippingLine(id: "ZZZZ") { id } metroArea(id: $m) { id } }`,
		testkit.Vars{"id": strings.ToUpper(nodes[0].ID), "scac": strings.ToLower(nodes[0].Scac), "m": metro}, &one)
	if one.ByID == nil || one.ByID.ID != nodes[0].ID || one.ByScac == nil || one.ByScac.ID != nodes[0].ID || one.None != nil ||
		one.MetroArea == nil || one.MetroArea.ID != metro {
		t.Errorf("%+v", one)
	}
}
