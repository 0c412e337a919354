package graph_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"shipgraph/testkit"
)

// TestReferenceDisplayValue (issue 29): a reference custom field's display
// value is the name of the record its value names (the demo's
// account_manager: a user), in GraphQL and in /v2, while the value keeps
// the id; a value that names no user of the account is shown as it is.
func TestReferenceDisplayValue(t *testing.T) {
	e := testkit.New(t, testkit.Options{Shipments: 20})
	k := e.Key(t, acmeAdmin)
	rows := e.Rows(t, `SELECT cf.id, cf.shipment_id, u.id, btrim(u.first_name || ' ' || u.last_name)
		FROM custom_fields cf
		JOIN custom_field_definitions d ON d.account_id = cf.account_id AND d.id = cf.definition_id
		JOIN users u ON u.account_id = cf.account_id AND u.id::text = cf.value #>> '{}'
		JOIN accounts a ON a.id = cf.account_id
		WHERE a.slug = 'acme' AND d.api_slug = 'account_manager' ORDER BY cf.id`)
	if len(rows) < 2 {
		t.Fatalf("the seed set %d account managers", len(rows))
	}
	names := map[string]string{} // user id → name
	for _, r := range rows {
		if r[3] == "" {
			t.Fatalf("user %s has no name: the test would prove nothing", r[2])
		}
		names[r[2]] = r[3]
	}
	cfID, ship, user, name := rows[0][0], rows[0][1], rows[0][2], rows[0][3]

	type field struct {
		APISlug      string
		Value        json.RawMessage
		DisplayValue *string
	}
	check := func(what string, fs []field) int {
		t.Helper()
		n := 0
		for _, f := range fs {
			if f.APISlug != "account_manager" {
				continue
			}
			n++
			var id string
			if err := json.Unmarshal(f.Value, &id); err != nil || names[id] == "" {
				t.Errorf("%s: value %s is not a user id", what, f.Value)
				continue
			}
			if f.DisplayValue == nil || *f.DisplayValue != names[id] {
				t.Errorf("%s: displayValue %v, want %q (the value %s)", what, f.DisplayValue, names[id], id)
			}
		}
		return n
	}

	// GraphQL: one shipment, and a page of them (batched: one read of
	// users for the page, TestSeeded/DashboardStatements counts it).
	var one struct {
		Shipment struct{ CustomFields []field }
	}
	e.Must(t, k, `query($id: ID!) { shipment(id: $id) { customFields { apiSlug value displayValue } } }`, testkit.Vars{"id": ship}, &one)
	if check("shipment", one.Shipment.CustomFields) != 1 {
		t.Errorf("shipment %s: no account_manager", ship)
	}
	var page struct {
		Shipments struct {
			Nodes []struct{ CustomFields []field }
		}
	}
	e.Must(t, k, `{ shipments(first: 50) { nodes { customFields { apiSlug value displayValue } } } }`, nil, &page)
	n := 0
	for _, s := range page.Shipments.Nodes {
		n += check("page", s.CustomFields)
	}
	if n != len(rows) {
		t.Errorf("the page showed %d account managers, the database holds %d", n, len(rows))
	}
	var byID struct{ CustomField field }
	e.Must(t, k, `query($id: ID!) { customField(id: $id) { apiSlug value displayValue } }`, testkit.Vars{"id": cfID}, &byID)
	check("customField(id)", []field{byID.CustomField})

	// /v2: the entity's values, the list, a value by id.
	v2 := func(path string) []byte {
		t.Helper()
		res, b := testkit.Get(t, strings.TrimSuffix(e.URL(), "/graphql")+path, k)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
		}
		return b
	}
	type resource struct {
		ID         string
		Attributes struct {
			APISlug      string          `json:"api_slug"`
			Value        json.RawMessage `json:"value"`
			DisplayValue *string         `json:"display_value"`
		}
	}
	v2fields := func(path string) []field {
		t.Helper()
		var doc struct{ Data json.RawMessage }
		if err := json.Unmarshal(v2(path), &doc); err != nil {
			t.Fatal(err)
		}
		var list []resource
		if strings.HasPrefix(string(doc.Data), "{") {
			var r resource
			_ = json.Unmarshal(doc.Data, &r)
			list = []resource{r}
		} else if err := json.Unmarshal(doc.Data, &list); err != nil {
			t.Fatal(err)
		}
		var out []field
		for _, r := range list {
			out = append(out, field{r.Attributes.APISlug, r.Attributes.Value, r.Attributes.DisplayValue})
		}
		return out
	}
	if check("/v2/shipments/{id}/custom_fields", v2fields("/v2/shipments/"+ship+"/custom_fields")) != 1 {
		t.Errorf("/v2/shipments/%s/custom_fields: no account_manager", ship)
	}
	check("/v2/shipments/{id}/custom_fields/account_manager", v2fields("/v2/shipments/"+ship+"/custom_fields/account_manager"))
	check("/v2/custom_fields/{id}", v2fields("/v2/custom_fields/"+cfID))
	if got := check("/v2/custom_fields", v2fields("/v2/custom_fields?page[size]=100")); got == 0 {
		t.Error("/v2/custom_fields: no account_manager")
	}

	// A write answers with the new user's name; a value naming no user
	// of the account is shown as it is.
	var other string
	for id := range names {
		if id != user {
			other = id
		}
	}
	if other == "" {
		t.Fatalf("one account manager only (%s, %s)", user, name)
	}
	var set struct{ UpdateShipmentCustomField field }
	e.Must(t, k, `mutation($s: ID!, $v: JSON!) { updateShipmentCustomField(shipmentId: $s, apiSlug: "account_manager", value: $v) { apiSlug value displayValue } }`,
		testkit.Vars{"s": ship, "v": other}, &set)
	check("after the write", []field{set.UpdateShipmentCustomField})
	globexUser := e.Text(t, `SELECT u.id FROM users u JOIN accounts a ON a.id = u.account_id WHERE a.slug = 'globex' LIMIT 1`)
	for _, v := range []string{"someone@acme.example", globexUser} {
		e.Must(t, k, `mutation($s: ID!, $v: JSON!) { updateShipmentCustomField(shipmentId: $s, apiSlug: "account_manager", value: $v) { apiSlug value displayValue } }`,
			testkit.Vars{"s": ship, "v": v}, &set)
		if d := set.UpdateShipmentCustomField.DisplayValue; d == nil || *d != v {
			t.Errorf("value %q: displayValue %v, want the value", v, d)
		}
	}
}
