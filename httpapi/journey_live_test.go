package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"shipgraph/graph/graphtest"
)

// TestLiveTransportEvent: a transport event inserted with plain SQL (as a
// carrier connector writes it) reaches the account's changes subscriber as
// a TRANSPORT_EVENT change whose parent is the container, and only that
// account's.
func TestLiveTransportEvent(t *testing.T) {
	d := newLiveDB(t)
	in := start(t, d.url, nil)
	container, shipment := d.container(t, "acme", 0)
	acme, err := dialWS(t, in.url, auth(d.keys["acme/viewer"]), nil)
	if err != nil {
		t.Fatal(err)
	}
	globex, err := dialWS(t, in.url, auth(d.keys["globex/admin"]), nil)
	if err != nil {
		t.Fatal(err)
	}
	const sub = `subscription { changes { operation type id parentId } }`
	acme.subscribe("all", sub, nil)
	globex.subscribe("all", sub, nil)
	graphtest.WaitFor(t, 5*time.Second, "two subscriptions", func() bool { return in.h.Subscriptions() == 2 })

	var id string
	if err := d.sql.QueryRow(`INSERT INTO transport_events (account_id, container_id, shipment_id, scac, carrier_event_id, event, event_at)
		SELECT account_id, id, shipment_id, 'MAEU', 'LIVE-1', 'container.transport.vessel_arrived', now()
		FROM containers WHERE id = $1 AND shipment_id = $2 RETURNING id`, container, shipment).Scan(&id); err != nil {
		t.Fatal(err)
	}
	m := acme.next(5 * time.Second)
	var got struct {
		Changes struct{ Operation, Type, ID, ParentID string }
	}
	event(t, m, &got)
	if got.Changes.Operation != "INSERT" || got.Changes.Type != "TRANSPORT_EVENT" || got.Changes.ID != id || got.Changes.ParentID != container {
		t.Errorf("changes: %s", m.Payload)
	}
	if strings.Contains(string(m.Payload), "errors") {
		t.Errorf("errors: %s", m.Payload)
	}
	globex.none(300 * time.Millisecond)
}
