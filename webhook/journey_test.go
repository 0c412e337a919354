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

// TestTrackingRequestEvents: each transition of a tracking request's
// status, written to its row, raises its event through the change log and
// the fan-out, with the request as the reference; stopping a shipment's
// tracking (through the store, or plain SQL) stops its request in the
// same transaction, which raises tracking_stopped (and a resume,
// succeeded).
func TestTrackingRequestEvents(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	hook := e.webhook(t, e.acme, "https://hooks.example.com/", webhook.EventTrackingSucceeded, webhook.EventTrackingFailed,
		webhook.EventTrackingAwaitingManifest, webhook.EventTrackingStopped)
	f := webhook.NewFanOut(e.Store, e.config(webhook.Config{}), nil)
	drain(t, f) // the seed's changes, if any

	req := &model.TrackingRequest{RequestType: "bill_of_lading", RequestNumber: "MEDUEVENTS1", Scac: "MSCU"}
	if err := e.Store.CreateTrackingRequest(ctx, e.acme, req, nil, nil); err != nil {
		t.Fatal(err)
	}
	raised := func(want ...string) {
		t.Helper()
		drain(t, f)
		rows, err := e.Store.SQL().Query(`SELECT event, reference_type, reference_id FROM webhook_notifications
			WHERE webhook_id = $1 ORDER BY change_id, event`, hook)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var ev, typ, id string
			if err := rows.Scan(&ev, &typ, &id); err != nil {
				t.Fatal(err)
			}
			got = append(got, ev)
			if typ != model.TrackingRequestType {
				t.Errorf("%s: reference %s %s, want the tracking request", ev, typ, id)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("notifications %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("notifications %v, want %v", got, want)
			}
		}
	}
	raised() // created pending: nothing yet
	set := func(status, reason string) {
		t.Helper()
		var r any
		if reason != "" {
			r = reason
		}
		e.Exec(t, `UPDATE tracking_requests SET status = $3, failed_reason = $4, updated_at = now() WHERE account_id = $1 AND id = $2`,
			e.acme, req.ID, status, r)
	}
	set("awaiting_manifest", "")
	raised(webhook.EventTrackingAwaitingManifest)
	e.Exec(t, `UPDATE tracking_requests SET retry_count = 2, is_retrying = true WHERE id = $1 AND account_id = $2`, req.ID, e.acme)
	raised(webhook.EventTrackingAwaitingManifest) // a retry is no transition
	set("failed", "not_found")
	raised(webhook.EventTrackingAwaitingManifest, webhook.EventTrackingFailed)
	set("pending", "")
	set("created", "")
	raised(webhook.EventTrackingAwaitingManifest, webhook.EventTrackingFailed, webhook.EventTrackingSucceeded)

	// stop_tracking and resume_tracking of a shipment, through the store.
	var ship, seeded string
	e.one(t, `SELECT s.id, r.id FROM shipments s JOIN tracking_requests r ON r.account_id = s.account_id AND r.shipment_id = s.id
		WHERE s.account_id = '`+e.acme+`' AND s.line_tracking_stopped_at IS NULL AND r.status = 'created' ORDER BY s.id LIMIT 1`, &ship, &seeded)
	if _, err := e.Store.StopTracking(ctx, e.acme, ship, nil); err != nil {
		t.Fatal(err)
	}
	raised(webhook.EventTrackingAwaitingManifest, webhook.EventTrackingFailed, webhook.EventTrackingSucceeded, webhook.EventTrackingStopped)
	var status, ref string
	e.one(t, `SELECT r.status, n.reference_id FROM tracking_requests r JOIN webhook_notifications n ON n.account_id = r.account_id
		WHERE r.account_id = '`+e.acme+`' AND r.id = '`+seeded+`' AND n.event = 'tracking_request.tracking_stopped'`, &status, &ref)
	if status != "tracking_stopped" || ref != seeded {
		t.Errorf("stopped request: status %s, notification about %s, want %s", status, ref, seeded)
	}
	if _, err := e.Store.ResumeTracking(ctx, e.acme, ship); err != nil {
		t.Fatal(err)
	}
	raised(webhook.EventTrackingAwaitingManifest, webhook.EventTrackingFailed, webhook.EventTrackingSucceeded, webhook.EventTrackingStopped,
		webhook.EventTrackingSucceeded)
	// The shipping line's stop written with plain SQL: the same rule.
	e.Exec(t, `UPDATE shipments SET line_tracking_stopped_at = now(), line_tracking_stopped_reason = 'past_arrival_window'
		WHERE account_id = $1 AND id = $2`, e.acme, ship)
	raised(webhook.EventTrackingAwaitingManifest, webhook.EventTrackingFailed, webhook.EventTrackingSucceeded, webhook.EventTrackingStopped,
		webhook.EventTrackingSucceeded, webhook.EventTrackingStopped)
}

// The server's wiring: the body is rest.NotificationPayload's document.
func TestPayloadIsTheV2Document(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	c1, s1 := e.containerOf(t, e.acme, 0)
	e.Exec(t, `UPDATE containers SET current_status = 'on_ship' WHERE id = $1`, c1)
	e.webhook(t, e.acme, r.URL, webhook.EventContainerUpdated, webhook.EventTransportAvailable, webhook.EventShipmentEstimatedArrival)
	res := resolve.New(e.Store, resolve.Deps{})
	e.start(t, e.Store, webhook.Config{Payload: func(ctx context.Context, account, id string) ([]byte, error) {
		return rest.NotificationPayload(ctx, res, rest.Config{}, account, id)
	}})
	e.Exec(t, `UPDATE containers SET current_status = 'available', pickup_appointment_at = '2026-03-05T08:30:00Z' WHERE id = $1`, c1)
	e.Exec(t, `UPDATE shipments SET pod_eta_at = '2026-04-01T00:00:00Z' WHERE id = $1`, s1)
	type resource struct {
		ID            string          `json:"id"`
		Type          string          `json:"type"`
		Attributes    json.RawMessage `json:"attributes"`
		Relationships map[string]struct {
			Data json.RawMessage `json:"data"`
		} `json:"relationships"`
	}
	got := map[string]bool{}
	for len(got) < 3 {
		d := r.wait(t, 15*time.Second)
		var doc struct {
			Data     resource   `json:"data"`
			Included []resource `json:"included"`
		}
		if err := json.Unmarshal(d.body, &doc); err != nil {
			t.Fatalf("%v: %s", err, d.body)
		}
		if !webhook.Verify("secret-"+r.URL, d.body, d.header.Get(webhook.SignatureHeader)) {
			t.Errorf("signature does not verify")
		}
		var attrs struct {
			Event string `json:"event"`
		}
		_ = json.Unmarshal(doc.Data.Attributes, &attrs)
		if doc.Data.Type != "webhook_notification" {
			t.Fatalf("primary data %s", d.body)
		}
		got[attrs.Event] = true
		types := map[string]json.RawMessage{}
		for _, inc := range doc.Included {
			types[inc.Type] = inc.Attributes
		}
		switch attrs.Event {
		case webhook.EventContainerUpdated:
			var a struct {
				Changeset map[string][2]any `json:"changeset"`
			}
			_ = json.Unmarshal(types["container_updated_event"], &a)
			if v := a.Changeset["pickup_appointment_at"]; v[1] != "2026-03-05T08:30:00Z" {
				t.Errorf("container_updated_event changeset %v in %s", a.Changeset, d.body)
			}
			if types["container"] == nil {
				t.Errorf("the container is not included: %s", d.body)
			}
		case webhook.EventTransportAvailable:
			if types["transport_event"] == nil || types["container"] == nil {
				t.Errorf("transport_event or container missing: %s", d.body)
			}
		case webhook.EventShipmentEstimatedArrival:
			var a struct {
				Estimated string `json:"estimated_timestamp"`
			}
			_ = json.Unmarshal(types["estimated_event"], &a)
			if a.Estimated != "2026-04-01T00:00:00Z" || types["shipment"] == nil {
				t.Errorf("estimated_event %s", d.body)
			}
		default:
			t.Errorf("unexpected event %q: %s", attrs.Event, d.body)
		}
	}
}

// TestTrackingPayloadAsOfEvent: a tracking request that succeeds and stops
// in one transaction is tracking_stopped when its notifications are
// rendered; the /v2 body of each still shows the request as of its event
// (succeeded: created; tracking_stopped: tracking_stopped).
func TestTrackingPayloadAsOfEvent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.webhook(t, e.acme, "https://hooks.example.com/", webhook.EventTrackingSucceeded, webhook.EventTrackingStopped)
	req := &model.TrackingRequest{RequestType: "bill_of_lading", RequestNumber: "MEDUASOF1", Scac: "MSCU"}
	if err := e.Store.CreateTrackingRequest(ctx, e.acme, req, nil, nil); err != nil {
		t.Fatal(err)
	}
	tx, err := e.Store.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"created", "tracking_stopped"} {
		if _, err := tx.ExecContext(ctx, `UPDATE tracking_requests SET status = $3 WHERE account_id = $1 AND id = $2`, e.acme, req.ID, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	drain(t, webhook.NewFanOut(e.Store, e.config(webhook.Config{}), nil))
	res := resolve.New(e.Store, resolve.Deps{})
	rows, err := e.Store.SQL().QueryContext(ctx, `SELECT id, event FROM webhook_notifications WHERE account_id = $1 AND reference_id = $2
		ORDER BY change_id`, e.acme, req.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id, event string
		if err := rows.Scan(&id, &event); err != nil {
			t.Fatal(err)
		}
		body, err := rest.NotificationPayload(ctx, res, rest.Config{}, e.acme, id)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Included []struct {
				Type       string `json:"type"`
				ID         string `json:"id"`
				Attributes struct {
					Status string `json:"status"`
				} `json:"attributes"`
			} `json:"included"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatal(err)
		}
		status := "(not included)"
		for _, inc := range doc.Included {
			if inc.Type == model.TrackingRequestType && inc.ID == req.ID {
				status = inc.Attributes.Status
			}
		}
		got = append(got, event+" "+status)
	}
	want := []string{webhook.EventTrackingSucceeded + " created", webhook.EventTrackingStopped + " tracking_stopped"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("rendered %q, want %q", got, want)
	}
}
