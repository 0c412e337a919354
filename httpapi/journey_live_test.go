package httpapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"shipgraph/testkit"
)

// TestLiveTransportEvent: a transport event inserted with plain SQL (as a
// carrier connector writes it) reaches the account's changes subscriber as
// a TRANSPORT_EVENT change whose parent is the container, and only that
// account's.
func TestLiveTransportEvent(t *testing.T) {
	d := newLiveDB(t)
	in := start(t, d.url, nil)
	container, shipment := d.container(t, "acme", 0)
	acme := in.ws(t, d.keys["acme/viewer"])
	globex := in.ws(t, d.keys["globex/admin"])
	const sub = `subscription { changes { operation type id parentId } }`
	acme.Subscribe("all", sub, nil)
	globex.Subscribe("all", sub, nil)
	testkit.WaitFor(t, 5*time.Second, "two subscriptions", func() bool { return in.h.Subscriptions() == 2 })

	var id string
	if err := d.sql.QueryRow(`INSERT INTO transport_events (account_id, container_id, shipment_id, scac, carrier_event_id, event, event_at)
		SELECT account_id, id, shipment_id, 'MAEU', 'LIVE-1', 'container.transport.vessel_arrived', now()
		FROM containers WHERE id = $1 AND shipment_id = $2 RETURNING id`, container, shipment).Scan(&id); err != nil {
		t.Fatal(err)
	}
	m := acme.Next(5 * time.Second)
	var got struct {
		Changes struct{ Operation, Type, ID, ParentID string }
	}
	testkit.Event(t, m, &got)
	if got.Changes.Operation != "INSERT" || got.Changes.Type != "TRANSPORT_EVENT" || got.Changes.ID != id || got.Changes.ParentID != container {
		t.Errorf("changes: %s", m.Payload)
	}
	if strings.Contains(string(m.Payload), "errors") {
		t.Errorf("errors: %s", m.Payload)
	}
	globex.None(300 * time.Millisecond)
}

// TestLiveTrackingRequest: a tracking request written with plain SQL (its
// INSERT, then the poller's status update to created with its shipment)
// reaches the account's changes subscriber as TRACKING_REQUEST changes,
// the update with its changed fields and the shipment as parent, and only
// that account's.
func TestLiveTrackingRequest(t *testing.T) {
	d := newLiveDB(t)
	in := start(t, d.url, nil)
	_, shipment := d.container(t, "acme", 0)
	acme := in.ws(t, d.keys["acme/viewer"])
	globex := in.ws(t, d.keys["globex/admin"])
	const sub = `subscription { changes { operation type id parentId changedFields } }`
	acme.Subscribe("all", sub, nil)
	globex.Subscribe("all", sub, nil)
	testkit.WaitFor(t, 5*time.Second, "two subscriptions", func() bool { return in.h.Subscriptions() == 2 })

	var id string
	if err := d.sql.QueryRow(`INSERT INTO tracking_requests (account_id, request_type, request_number, scac, next_poll_at)
		SELECT account_id, 'bill_of_lading', 'LIVE123456', 'MAEU', now() FROM shipments WHERE id = $1 RETURNING id`,
		shipment).Scan(&id); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Changes struct {
			Operation, Type, ID string
			ParentID            *string
			ChangedFields       []string
		}
	}
	m := acme.Next(5 * time.Second)
	testkit.Event(t, m, &got)
	if got.Changes.Operation != "INSERT" || got.Changes.Type != "TRACKING_REQUEST" || got.Changes.ID != id || got.Changes.ParentID != nil {
		t.Errorf("insert: %s", m.Payload)
	}
	d.exec(t, `UPDATE tracking_requests SET status = 'created', shipment_id = $2 WHERE id = $1`, id, shipment)
	m = acme.Next(5 * time.Second)
	got.Changes.ChangedFields = nil
	testkit.Event(t, m, &got)
	if got.Changes.Operation != "UPDATE" || got.Changes.Type != "TRACKING_REQUEST" || got.Changes.ID != id ||
		got.Changes.ParentID == nil || *got.Changes.ParentID != shipment || !slices.Contains(got.Changes.ChangedFields, "status") {
		t.Errorf("update: %s", m.Payload)
	}
	if strings.Contains(string(m.Payload), "errors") {
		t.Errorf("errors: %s", m.Payload)
	}
	globex.None(300 * time.Millisecond)
}

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
