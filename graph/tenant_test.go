package graph_test

import (
	"strings"
	"testing"

	"shipgraph/testkit"
)

// accountRecords are, per account-scoped Node type, SQL giving one id of
// the account ($1).
var accountRecords = map[string]string{
	"Account":                `SELECT id FROM accounts WHERE id = $1`,
	"User":                   `SELECT id FROM users WHERE account_id = $1 ORDER BY id LIMIT 1`,
	"Shipment":               `SELECT id FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 1`,
	"Container":              `SELECT id FROM containers WHERE account_id = $1 ORDER BY id LIMIT 1`,
	"Document":               `SELECT id FROM documents WHERE account_id = $1 ORDER BY id LIMIT 1`,
	"EmailSubmission":        `SELECT id FROM email_submissions WHERE account_id = $1 ORDER BY id LIMIT 1`,
	"DocumentRepresentation": `SELECT id FROM document_representations WHERE account_id = $1 ORDER BY id LIMIT 1`,
	"CustomFieldDefinition":  `SELECT id FROM custom_field_definitions WHERE account_id = $1 ORDER BY id LIMIT 1`,
	"CustomFieldOption": `SELECT o.id FROM custom_field_options o JOIN custom_field_definitions d ON d.account_id = o.account_id AND d.id = o.definition_id
		WHERE d.account_id = $1 ORDER BY o.id LIMIT 1`,
	"CustomField": `SELECT id FROM custom_fields WHERE account_id = $1 ORDER BY id LIMIT 1`,
}

// rootByID are the root fields that look an account record up by id.
var rootByID = map[string]string{
	"Shipment":              "shipment",
	"Container":             "container",
	"Document":              "document",
	"CustomFieldDefinition": "customFieldDefinition",
}

// testTenantIsolation: with either account's keys (every role), every
// record of the other account is null on every root field and on node,
// while the account's own record is found, and lists hold only the
// account's own rows.
func testTenantIsolation(t *testing.T, e *testkit.Env) {
	accounts := map[string]string{"acme": e.Account(t, "acme"), "globex": e.Account(t, "globex")}
	records := map[string]map[string]string{}
	for slug, id := range accounts {
		records[slug] = map[string]string{}
		for typ, q := range accountRecords {
			rec := e.Text(t, q, id)
			records[slug][typ] = rec
		}
	}
	for _, who := range []string{"acme/admin", "acme/member", "acme/viewer", "globex/admin", "globex/member", "globex/viewer"} {
		self, _, _ := strings.Cut(who, "/")
		other := map[string]string{"acme": "globex", "globex": "acme"}[self]
		k := e.Key(t, who)
		for typ := range accountRecords {
			for _, owner := range []string{self, other} {
				id := records[owner][typ]
				q := `query($id: ID!) { node(id: $id) { __typename id } }`
				root := rootByID[typ]
				if root != "" {
					q = `query($id: ID!) { node(id: $id) { __typename id } r: ` + root + `(id: $id) { id } }`
				}
				res := e.Do(t, k, q, testkit.Vars{"id": id})
				if len(res.Errors) > 0 {
					t.Errorf("%s reading %s's %s: %s", who, owner, typ, res)
					continue
				}
				var d struct {
					Node *struct{ Typename, ID string } `json:"node"`
					R    *idObj
				}
				res.Decode(t, &d)
				if owner == other {
					if d.Node != nil || d.R != nil {
						t.Errorf("%s can read %s's %s %s: %s", who, owner, typ, id, res.Data)
					}
				} else if d.Node == nil || d.Node.ID != id || (root != "" && (d.R == nil || d.R.ID != id)) {
					t.Errorf("%s cannot read its own %s %s: %s", who, typ, id, res.Data)
				}
			}
		}

		// Lists: only the account's rows, counted as the account's.
		for field, table := range map[string]string{"shipments": "shipments", "containers": "containers",
			"documents": "documents", "customFieldDefinitions": "custom_field_definitions"} {
			var want int
			e.SQL(t, &want, `SELECT count(*) FROM `+table+` WHERE account_id = $1`, accounts[self])
			var foreign int
			got, total := walk(t, e, k, field, map[string]string{"shipments": "ShipmentFilter", "containers": "ContainerFilter",
				"documents": "DocumentFilter", "customFieldDefinitions": "CustomFieldDefinitionFilter"}[field], nil)
			e.SQL(t, &foreign, `SELECT count(*) FROM `+table+` WHERE id = ANY($1::uuid[]) AND account_id <> $2`, pqArray(got), accounts[self])
			if total != want || len(got) != want || foreign != 0 {
				t.Errorf("%s: %s lists %d rows (totalCount %d, %d of another account), want the account's %d", who, field, len(got), total, foreign, want)
			}
		}

		// Searching for the other account's numbers finds nothing.
		bol := e.Text(t, `SELECT bill_of_lading_number FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 1`, accounts[other])
		box := e.Text(t, `SELECT number FROM containers WHERE account_id = $1 ORDER BY id LIMIT 1`, accounts[other])
		var d struct {
			S struct{ TotalCount int }
			C struct{ TotalCount int }
			D struct{ TotalCount int }
		}
		e.Must(t, k, `query($bol: String!, $box: String!) {
			s: shipments(filter: {search: $bol}) { totalCount }
			c: containers(filter: {number: $box}) { totalCount }
			d: documents(filter: {reference: $bol}) { totalCount } }`, testkit.Vars{"bol": bol, "box": box}, &d)
		var own int
		e.SQL(t, &own, `SELECT count(*) FROM shipments WHERE account_id = $1 AND upper(bill_of_lading_number) LIKE upper($2) || '%'`, accounts[self], bol)
		if d.S.TotalCount != own || d.C.TotalCount != 0 || d.D.TotalCount != 0 {
			t.Errorf("%s finds the other account's numbers: %+v", who, d)
		}
	}

	// Reference data is shared: both accounts see the same terminal.
	term := e.Text(t, `SELECT id FROM terminals ORDER BY id LIMIT 1`)
	for _, who := range []string{acmeViewer, globexViewer} {
		var d struct{ Terminal *idObj }
		e.Must(t, e.Key(t, who), `query($id: ID!) { terminal(id: $id) { id } }`, testkit.Vars{"id": term}, &d)
		if d.Terminal == nil || d.Terminal.ID != term {
			t.Errorf("%s cannot read the shared terminal %s", who, term)
		}
	}
}
