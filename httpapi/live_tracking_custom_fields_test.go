package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"shipgraph/testkit"
)

// customFieldChanged follows a tracking request's values as it follows a
// shipment's: the change log's parent of a value is its entity_id, which
// covers tracking_request_id (migration 00016).
func TestLiveTrackingRequestCustomField(t *testing.T) {
	d := newLiveDB(t)
	in := start(t, d.url, nil)
	var acct, req string
	if err := d.sql.QueryRow(`SELECT id FROM accounts WHERE slug = 'acme'`).Scan(&acct); err != nil {
		t.Fatal(err)
	}
	if err := d.sql.QueryRow(`INSERT INTO tracking_requests (account_id, request_type, request_number, scac)
		VALUES ($1, 'bill_of_lading', 'MAEULIVE01', 'MAEU') RETURNING id`, acct).Scan(&req); err != nil {
		t.Fatal(err)
	}
	d.exec(t, `INSERT INTO custom_field_definitions (account_id, entity_type, api_slug, display_name, data_type)
		VALUES ($1, 'TrackingRequest', 'live_desk', 'Live desk', 'short_text')`, acct)
	c := in.ws(t, d.keys["acme/viewer"])
	c.Subscribe("cf", `subscription($id: ID!) { customFieldChanged(entityId: $id) { operation entityId
		customField { apiSlug value entity { __typename ... on TrackingRequest { id } } } } }`, map[string]any{"id": req})
	testkit.WaitFor(t, 5*time.Second, "the subscription", func() bool { return in.h.Subscriptions() == 1 })

	r := in.gql(t, d.keys["acme/admin"], fmt.Sprintf(`mutation { updateTrackingRequestCustomField(trackingRequestId: %q, apiSlug: "live_desk", value: "D-7") { id } }`, req))
	if r.status != 200 || strings.Contains(string(r.body), "errors") {
		t.Fatalf("mutation: %d %s", r.status, r.body)
	}
	m := c.Next(5 * time.Second)
	got := string(m.Payload)
	for _, want := range []string{`"operation":"INSERT"`, `"entityId":"` + req + `"`, `"value":"D-7"`,
		`"entity":{"__typename":"TrackingRequest","id":"` + req + `"}`} {
		if !strings.Contains(got, want) {
			t.Errorf("customFieldChanged has no %s: %s", want, got)
		}
	}
	c.None(300 * time.Millisecond)
}
