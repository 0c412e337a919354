package webhook_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest"
	"shipgraph/webhook"
)

// TestDeriveTransportEvent: an INSERT of a transport event raises the
// event its row names, about the record, with its attributes; an event
// Shipgraph does not list, an UPDATE or a DELETE raises nothing.
func TestDeriveTransportEvent(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := &webhook.Change{Type: "transport_event", Op: "INSERT", RecordID: "11111111-1111-4111-8111-111111111111",
		Parent: "22222222-2222-4222-8222-222222222222", LoggedAt: at,
		New: map[string]any{"event": "container.transport.vessel_departed", "event_at": "2026-02-28T10:00:00+00:00",
			"timezone": "Asia/Shanghai", "location_locode": "CNSHA", "voyage_number": "123E", "data_source": "shipping_line",
			"created_at": "2026-03-01T12:00:00+00:00"}}
	got := webhook.Derive(c)
	if len(got) != 1 || got[0].Name != "container.transport.vessel_departed" || got[0].ReferenceType != "transport_event" ||
		got[0].ReferenceID != c.RecordID {
		t.Fatalf("Derive = %+v", got)
	}
	want := `{"created_at":"2026-03-01T12:00:00Z","data_source":"shipping_line","event":"container.transport.vessel_departed","location_locode":"CNSHA","timestamp":"2026-02-28T10:00:00Z","timezone":"Asia/Shanghai","voyage_number":"123E"}`
	if string(got[0].Payload) != want {
		t.Errorf("payload %s\nwant    %s", got[0].Payload, want)
	}
	for _, ch := range []*webhook.Change{
		{Type: "transport_event", Op: "INSERT", New: map[string]any{"event": "container.transport.available"}},
		{Type: "transport_event", Op: "INSERT", New: map[string]any{"event": "container.nonsense"}},
		{Type: "transport_event", Op: "UPDATE", Changed: []string{"event_at"}, New: map[string]any{"event": "container.transport.vessel_departed"}},
		{Type: "transport_event", Op: "DELETE"},
	} {
		if got := webhook.Derive(ch); len(got) != 0 {
			t.Errorf("%s %v raised %+v", ch.Op, ch.New, got)
		}
	}
	for _, name := range webhook.JourneyEvents {
		if model.WebhookEventObjectType(name) != model.TransportEventType {
			t.Errorf("%s is not accepted at subscription", name)
		}
	}
}

// TestTransportEventInsertRaisesOnce: rows inserted into transport_events
// (as the carrier connectors do) raise one notification each for the
// account's webhooks subscribed to their event, about the record, and
// nothing for another account's; a fan-out run again raises nothing more.
// The notification's reference object carries the record's keys.
func TestTransportEventInsertRaisesOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hook := e.webhook(t, e.acme, "http://127.0.0.1:9/acme", "container.transport.vessel_departed", "container.transport.vessel_arrived")
	other := e.webhook(t, e.globex, "http://127.0.0.1:9/globex", "container.transport.vessel_departed")
	f := webhook.NewFanOut(e.Store, e.config(webhook.Config{}), func() {})
	drain(t, f)

	var container, shipment, port, vessel string
	e.one(t, `SELECT c.id, c.shipment_id, s.port_of_lading_id, (SELECT id FROM vessels ORDER BY imo LIMIT 1)
		FROM containers c JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id
		WHERE c.account_id = (SELECT id FROM accounts WHERE slug = 'acme') ORDER BY c.id LIMIT 1`, &container, &shipment, &port, &vessel)
	insert := func(carrierID, event string) string {
		var id string
		e.one(t, `INSERT INTO transport_events (account_id, container_id, shipment_id, scac, carrier_event_id, event, event_at,
			port_id, vessel_id, location_locode, data_source)
			VALUES ('`+e.acme+`', '`+container+`', '`+shipment+`', 'MAEU', '`+carrierID+`', '`+event+`', now(),
			'`+port+`', '`+vessel+`', 'CNSHA', 'shipping_line') RETURNING id`, &id)
		return id
	}
	departed := insert("T-1", "container.transport.vessel_departed")
	arrived := insert("T-2", "container.transport.vessel_arrived")
	insert("T-3", "container.transport.full_out") // not subscribed
	e.Exec(t, `UPDATE transport_events SET voyage_number = '9W' WHERE id = $1`, departed)
	drain(t, f)
	drain(t, f)

	rows, err := e.Store.SQL().Query(`SELECT id, event, reference_type, reference_id, payload FROM webhook_notifications
		WHERE webhook_id = $1 ORDER BY change_id`, hook)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type note struct{ id, event, refType, refID, payload string }
	var got []note
	for rows.Next() {
		var n note
		if err := rows.Scan(&n.id, &n.event, &n.refType, &n.refID, &n.payload); err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	if len(got) != 2 || got[0].event != "container.transport.vessel_departed" || got[0].refID != departed ||
		got[1].event != "container.transport.vessel_arrived" || got[1].refID != arrived || got[0].refType != "transport_event" {
		t.Fatalf("notifications %+v", got)
	}
	var attrs map[string]any
	if err := json.Unmarshal([]byte(got[0].payload), &attrs); err != nil || attrs["event"] != "container.transport.vessel_departed" ||
		attrs["location_locode"] != "CNSHA" || attrs["timestamp"] == nil {
		t.Errorf("payload %s (%v)", got[0].payload, err)
	}
	if n := e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE webhook_id = $1`, other); n != 0 {
		t.Errorf("globex's webhook got %d notifications", n)
	}
	// The reference object: the record's container, port and vessel.
	evs, err := e.Store.WebhookEventsByIDs(context.Background(), e.acme, []string{model.WebhookEventID(got[0].id)})
	if err != nil || len(evs) != 1 {
		t.Fatalf("reference object: %v %v", evs, err)
	}
	ev := model.FrozenTransportEvent(evs[0])
	if ev.ContainerID == nil || *ev.ContainerID != container || ev.PortID == nil || *ev.PortID != port ||
		ev.VesselID == nil || *ev.VesselID != vessel || ev.LocationLocode == nil || *ev.LocationLocode != "CNSHA" {
		t.Errorf("reference object %+v", ev)
	}
	// The delivered payload: the reference object is the record, under the
	// record's id (as /v2/containers/{id}/transport_events lists it), with
	// its port and vessel.
	body, err := rest.NotificationPayload(context.Background(), resolve.New(e.Store, resolve.Deps{}), rest.Config{}, e.acme, got[0].id)
	if err != nil {
		t.Fatal(err)
	}
	type linkage struct{ ID, Type string }
	var doc struct {
		Data struct {
			Relationships struct {
				ReferenceObject struct{ Data linkage } `json:"reference_object"`
			} `json:"relationships"`
		} `json:"data"`
		Included []struct {
			linkage
			Relationships map[string]struct{ Data json.RawMessage } `json:"relationships"`
		} `json:"included"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if ref := doc.Data.Relationships.ReferenceObject.Data; ref.ID != departed || ref.Type != "transport_event" {
		t.Errorf("reference_object %+v, want the record %s: %s", ref, departed, body)
	}
	var included bool
	for _, inc := range doc.Included {
		if inc.Type == "transport_event" {
			included = inc.ID == departed
			var l linkage
			if err := json.Unmarshal(inc.Relationships["vessel"].Data, &l); err != nil || l.ID != vessel {
				t.Errorf("included transport_event's vessel %+v (%v), want %s: %s", l, err, vessel, body)
			}
		}
	}
	if !included {
		t.Errorf("the record %s is not included: %s", departed, body)
	}
}
