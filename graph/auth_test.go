package graph_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"

	"shipgraph/testkit"
)

// testAuthentication: without a valid key nothing is answered but an
// UNAUTHENTICATED error (application/json: status 200, see transport).
func testAuthentication(t *testing.T, e *testkit.Env) {
	for name, header := range map[string]string{
		"none":    "",
		"garbage": "Token nope",
		"unknown": "Token sg_0000000000000000000000000000000000000000",
		"scheme":  "Basic " + e.Key(t, acmeAdmin),
	} {
		var opts []client.Option
		if header != "" {
			opts = append(opts, client.AddHeader("Authorization", header))
		}
		res := e.Do(t, "", `{ viewer { role } shipments { totalCount } }`, nil, opts...)
		if !testkit.CodesEqual(res.Codes(), "UNAUTHENTICATED") || (string(res.Data) != "null" && string(res.Data) != "") {
			t.Errorf("%s key: %s; want UNAUTHENTICATED and no data", name, res)
		}
	}
	// Bearer is accepted like Token.
	res := e.Do(t, "", `{ viewer { role } }`, nil, client.AddHeader("Authorization", "Bearer "+e.Key(t, acmeViewer)))
	if len(res.Errors) > 0 || !strings.Contains(string(res.Data), "VIEWER") {
		t.Errorf("Bearer key: %s", res)
	}
}

// TestRevokedKey: a revoked key stops working within a second, although
// it was cached (the database announces the revocation; see httpapi).
func TestRevokedKey(t *testing.T) {
	e := testkit.New(t, testkit.Options{Shipments: 3})
	k := e.Key(t, acmeMember)
	e.Must(t, k, `{ viewer { role } }`, nil, nil)
	if res := e.Must(t, k, `{ viewer { role } }`, nil, nil); res.Statements != res.AfterAuth {
		t.Fatalf("a known key cost %d statements to authenticate; want it cached", res.Statements-res.AfterAuth)
	}
	var tokenID, acme string
	e.SQL(t, &tokenID, `SELECT id FROM api_tokens WHERE prefix = $1`, k[:10])
	acme = e.Account(t, "acme")
	if err := e.Store.RevokeToken(context.Background(), acme, tokenID); err != nil {
		t.Fatal(err)
	}
	took := testkit.WaitFor(t, 30*time.Second, "the revoked key to be refused", func() bool {
		return testkit.CodesEqual(e.Do(t, k, `{ viewer { role } }`, nil).Codes(), "UNAUTHENTICATED")
	})
	t.Logf("revoked key refused after %v", took)
}

// testViewerCannotWrite: viewer keys are refused every mutation with
// FORBIDDEN, before anything is read or written.
func testViewerCannotWrite(t *testing.T, e *testkit.Env) {
	acme := e.Account(t, "acme")
	var ship, def, opt string
	e.SQL(t, &ship, `SELECT id FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 1`, acme)
	e.SQL(t, &def, `SELECT id FROM custom_field_definitions WHERE account_id = $1 AND api_slug = 'priority_level'`, acme)
	e.SQL(t, &opt, `SELECT id FROM custom_field_options WHERE definition_id = $1 ORDER BY position LIMIT 1`, def)
	k := e.Key(t, acmeViewer)
	for name, m := range map[string]string{
		"updateShipmentCustomField":        `mutation($s: ID!) { updateShipmentCustomField(shipmentId: $s, apiSlug: "priority_level", value: "high") { id } }`,
		"createCustomFieldOption":          `mutation($d: ID!) { createCustomFieldOption(definitionId: $d, input: {label: "X", value: "x"}) { id } }`,
		"updateCustomFieldOption":          `mutation($d: ID!, $o: ID!) { updateCustomFieldOption(definitionId: $d, optionId: $o, input: {label: "X"}) { id } }`,
		"deleteCustomFieldOption":          `mutation($d: ID!, $o: ID!) { deleteCustomFieldOption(definitionId: $d, optionId: $o) { id } }`,
		"createCustomField":                `mutation($s: ID!) { createCustomField(input: {entityId: $s, apiSlug: "customer_po", value: "X"}) { id } }`,
		"updateContainerCustomField":       `mutation($c: ID!) { updateContainerCustomField(containerId: $c, apiSlug: "x", value: "X") { id } }`,
		"updateCustomField":                `mutation($s: ID!) { updateCustomField(id: $s, value: "X") { id } }`,
		"deleteShipmentCustomField":        `mutation($s: ID!) { deleteShipmentCustomField(shipmentId: $s, apiSlug: "priority_level") { id } }`,
		"deleteContainerCustomField":       `mutation($c: ID!) { deleteContainerCustomField(containerId: $c, apiSlug: "x") { id } }`,
		"updateTrackingRequestCustomField": `mutation($c: ID!) { updateTrackingRequestCustomField(trackingRequestId: $c, apiSlug: "x", value: "X") { id } }`,
		"deleteTrackingRequestCustomField": `mutation($c: ID!) { deleteTrackingRequestCustomField(trackingRequestId: $c, apiSlug: "x") { id } }`,
		"deleteCustomField":                `mutation($s: ID!) { deleteCustomField(id: $s) { id } }`,
		"createCustomFieldDefinition":      `mutation { createCustomFieldDefinition(input: {entityType: SHIPMENT, apiSlug: "x", displayName: "X", dataType: NUMBER}) { id } }`,
		"updateCustomFieldDefinition":      `mutation($d: ID!) { updateCustomFieldDefinition(id: $d, input: {displayName: "X"}) { id } }`,
		"deleteCustomFieldDefinition":      `mutation($d: ID!) { deleteCustomFieldDefinition(id: $d) { id } }`,
		"updateShipment":                   `mutation($s: ID!) { updateShipment(id: $s, input: {tags: ["x"]}) { id } }`,
		"stopTrackingShipment":             `mutation($s: ID!) { stopTrackingShipment(id: $s) { id } }`,
		"resumeTrackingShipment":           `mutation($s: ID!) { resumeTrackingShipment(id: $s) { id } }`,
		"updateDocument":                   `mutation($s: ID!) { updateDocument(id: $s, input: {documentTypeManual: "other"}) { id } }`,
		"deleteDocument":                   `mutation($s: ID!) { deleteDocument(id: $s) { id } }`,
	} {
		// Variables an operation does not declare are ignored.
		res := e.Do(t, k, m, testkit.Vars{"s": ship, "c": ship, "d": def, "o": opt})
		// A nullable mutation field answers null in place of the error.
		if string(res.Data) == `{"`+name+`":null}` {
			res.Data = []byte("null")
		}
		testkit.Refused(t, "viewer "+name, res, "FORBIDDEN")
	}
}
