package webhook

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"shipgraph/model"
)

func TestDerive(t *testing.T) {
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	type want struct {
		name, ref string
		attrs     map[string]any // expected members of the payload
	}
	cs := func(m map[string][2]any) map[string]any {
		return map[string]any{"changeset": m, "data_source": "terminal", "timestamp": "2026-03-02T10:00:00Z"}
	}
	tr := func(event, source string) map[string]any {
		return map[string]any{"event": event, "data_source": source, "timestamp": "2026-03-02T10:00:00Z",
			"created_at": "2026-03-02T10:00:00Z", "timezone": nil, "location_locode": nil, "voyage_number": nil}
	}
	upd := func(typ string, old, new map[string]any) *Change {
		c := &Change{ID: 7, AccountID: "a", Type: typ, RecordID: "r", Op: "UPDATE", Old: old, New: new, LoggedAt: at}
		for k := range new {
			c.Changed = append(c.Changed, k)
		}
		c.Changed = append(c.Changed, "updated_at")
		return c
	}
	cases := []struct {
		name string
		c    *Change
		want []want
	}{
		{"container insert", &Change{Type: "container", Op: "INSERT", RecordID: "r", LoggedAt: at},
			[]want{{EventContainerCreated, "container", cs(map[string][2]any{})}}},
		{"container delete", &Change{Type: "container", Op: "DELETE", RecordID: "r"}, nil},
		// Tracking request events come from the requests' rows (issue 27):
		// a shipment's insert or stop raises none of its own.
		{"shipment insert", &Change{Type: "shipment", Op: "INSERT", RecordID: "r"}, nil},
		{"shipment delete", &Change{Type: "shipment", Op: "DELETE", RecordID: "r"}, nil},
		{"shipment tracking stopped", upd("shipment",
			map[string]any{"line_tracking_stopped_at": nil, "line_tracking_stopped_reason": nil},
			map[string]any{"line_tracking_stopped_at": "2026-03-02T10:00:00+00:00", "line_tracking_stopped_reason": "cancelled_by_user"}), nil},
		{"eta moved and tracking stopped", upd("shipment",
			map[string]any{"pod_eta_at": "2026-03-10T00:00:00+00:00", "line_tracking_stopped_at": nil},
			map[string]any{"pod_eta_at": "2026-03-12T00:00:00+00:00", "line_tracking_stopped_at": "2026-03-02T10:00:00+00:00"}),
			[]want{
				{EventShipmentEstimatedArrival, "shipment", map[string]any{"event": EventShipmentEstimatedArrival, "estimated_timestamp": "2026-03-12T00:00:00Z"}},
			}},
		{"request insert", &Change{Type: "tracking_request", Op: "INSERT", RecordID: "r"}, nil},
		{"request succeeded", upd("tracking_request", map[string]any{"status": "pending"}, map[string]any{"status": "created"}),
			[]want{{EventTrackingSucceeded, "tracking_request", map[string]any{"status": "created"}}}},
		{"request failed", upd("tracking_request", map[string]any{"status": "pending", "failed_reason": nil},
			map[string]any{"status": "failed", "failed_reason": "not_found"}),
			[]want{{EventTrackingFailed, "tracking_request", map[string]any{"status": "failed", "failed_reason": "not_found"}}}},
		{"request awaiting manifest", upd("tracking_request", map[string]any{"status": "pending"}, map[string]any{"status": "awaiting_manifest"}),
			[]want{{EventTrackingAwaitingManifest, "tracking_request", map[string]any{"status": "awaiting_manifest"}}}},
		{"request stopped", upd("tracking_request", map[string]any{"status": "created"}, map[string]any{"status": "tracking_stopped"}),
			[]want{{EventTrackingStopped, "tracking_request", map[string]any{"status": "tracking_stopped"}}}},
		{"request back to pending", upd("tracking_request", map[string]any{"status": "failed"}, map[string]any{"status": "pending"}), nil},
		{"document extracted", upd("document", map[string]any{"extraction_status": "pending"}, map[string]any{"extraction_status": "extracted"}),
			[]want{{EventDocumentExtracted, "document", map[string]any{}}}},
		{"document failed", upd("document", map[string]any{"extraction_status": "pending"}, map[string]any{"extraction_status": "failed"}),
			[]want{{EventDocumentExtractionFailed, "document", map[string]any{}}}},
		{"document reset to pending", upd("document", map[string]any{"extraction_status": "extracted"}, map[string]any{"extraction_status": "pending"}), nil},
		{"document retyped", upd("document", map[string]any{"document_type": "other"}, map[string]any{"document_type": "packing_list"}), nil},
		{"document insert", &Change{Type: "document", Op: "INSERT", RecordID: "d"}, nil},
		{"request retried", upd("tracking_request", map[string]any{"retry_count": 0.0, "is_retrying": false}, map[string]any{"retry_count": 1.0, "is_retrying": true}), nil},
		{"request deleted", &Change{Type: "tracking_request", Op: "DELETE", RecordID: "r"}, nil},
		{"document update", upd("document", map[string]any{"name": "a"}, map[string]any{"name": "b"}), nil},
		{"only updated_at", upd("container", map[string]any{}, map[string]any{}), nil},
		{"seal number alone", upd("container", map[string]any{"seal_number": "a"}, map[string]any{"seal_number": "b"}), nil},
		{"available_for_pickup", upd("container", map[string]any{"available_for_pickup": nil}, map[string]any{"available_for_pickup": true}),
			[]want{{EventContainerUpdated, "container", cs(map[string][2]any{"available_for_pickup": {nil, true}})}}},
		{"holds", upd("container", map[string]any{"holds_at_pod_terminal": []any{}}, map[string]any{"holds_at_pod_terminal": []any{map[string]any{"name": "customs"}}}),
			[]want{{EventContainerUpdated, "container", cs(map[string][2]any{"holds_at_pod_terminal": {[]any{}, []any{map[string]any{"name": "customs"}}}})}}},
		{"pod terminal", upd("container", map[string]any{"pod_terminal_id": "t1"}, map[string]any{"pod_terminal_id": "t2"}),
			[]want{
				{EventContainerUpdated, "container", cs(map[string][2]any{"pod_terminal": {"t1", "t2"}})},
				{EventPodTerminalChanged, "container", cs(map[string][2]any{"pod_terminal": {"t1", "t2"}})},
			}},
		{"line lfd moves the lfd", upd("container",
			map[string]any{"pickup_lfd_line": nil, "pickup_lfd": "2026-03-01T00:00:00+00:00"},
			map[string]any{"pickup_lfd_line": "2026-03-05T00:00:00-05:00", "pickup_lfd": "2026-03-05T00:00:00-05:00"}),
			[]want{
				{EventContainerUpdated, "container", cs(map[string][2]any{"pickup_lfd": {"2026-03-01T00:00:00Z", "2026-03-05T05:00:00Z"}})},
				{EventPickupLFDChanged, "container", tr(EventPickupLFDChanged, "terminal")},
				{EventPickupLFDLineChanged, "container", tr(EventPickupLFDLineChanged, "shipping_line")},
			}},
		{"terminal lfd hidden by the line's", upd("container",
			map[string]any{"pickup_lfd_terminal": nil}, map[string]any{"pickup_lfd_terminal": "2026-03-05T00:00:00+00:00"}),
			[]want{{EventPickupLFDTerminalChanged, "container", tr(EventPickupLFDTerminalChanged, "terminal")}}},
		{"rail lfd", upd("container", map[string]any{"pickup_lfd_rail": "2026-03-05T00:00:00+00:00"}, map[string]any{"pickup_lfd_rail": nil}),
			[]want{{EventPickupLFDRailChanged, "container", tr(EventPickupLFDRailChanged, "terminal")}}},
		{"appointment", upd("container", map[string]any{"pickup_appointment_at": nil}, map[string]any{"pickup_appointment_at": "2026-03-05T08:30:00+00:00"}),
			[]want{
				{EventContainerUpdated, "container", cs(map[string][2]any{"pickup_appointment_at": {nil, "2026-03-05T08:30:00Z"}})},
				{EventPickupAppointmentChanged, "container", tr(EventPickupAppointmentChanged, "terminal")},
			}},
		{"becomes available", upd("container", map[string]any{"current_status": "not_available"}, map[string]any{"current_status": "available"}),
			[]want{{EventTransportAvailable, "container", tr(EventTransportAvailable, "terminal")}}},
		{"grounded to not available", upd("container", map[string]any{"current_status": "grounded"}, map[string]any{"current_status": "not_available"}),
			[]want{{EventTransportNotAvailable, "container", tr(EventTransportNotAvailable, "terminal")}}},
		{"delivered", upd("container", map[string]any{"current_status": "picked_up"}, map[string]any{"current_status": "delivered"}),
			[]want{{EventTransportDelivered, "container", tr(EventTransportDelivered, "terminal")}}},
		{"on ship to grounded", upd("container", map[string]any{"current_status": "on_ship"}, map[string]any{"current_status": "grounded"}), nil},
		{"status and availability together", upd("container",
			map[string]any{"current_status": "grounded", "available_for_pickup": false},
			map[string]any{"current_status": "available", "available_for_pickup": true}),
			[]want{
				{EventContainerUpdated, "container", cs(map[string][2]any{"available_for_pickup": {false, true}})},
				{EventTransportAvailable, "container", tr(EventTransportAvailable, "terminal")},
			}},
		{"eta moved", upd("shipment", map[string]any{"pod_eta_at": "2026-03-10T00:00:00+00:00"}, map[string]any{"pod_eta_at": "2026-03-12T00:00:00+00:00"}),
			[]want{{EventShipmentEstimatedArrival, "shipment", map[string]any{"event": EventShipmentEstimatedArrival, "estimated_timestamp": "2026-03-12T00:00:00Z", "data_source": "shipping_line", "created_at": "2026-03-02T10:00:00Z"}}}},
		{"shipment other column", upd("shipment", map[string]any{"customer_name": "a"}, map[string]any{"customer_name": "b"}), nil},
		{"listed but equal", &Change{Type: "container", Op: "UPDATE", Changed: []string{"current_status"},
			Old: map[string]any{"current_status": "available"}, New: map[string]any{"current_status": "available"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Derive(tc.c)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d events %+v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Name != w.name || g.ReferenceType != w.ref || g.ReferenceID != tc.c.RecordID {
					t.Errorf("event %d: got %s %s %s, want %s %s", i, g.Name, g.ReferenceType, g.ReferenceID, w.name, w.ref)
				}
				var p map[string]any
				if err := json.Unmarshal(g.Payload, &p); err != nil {
					t.Fatal(err)
				}
				wb, _ := json.Marshal(w.attrs)
				var norm map[string]any
				_ = json.Unmarshal(wb, &norm)
				for k, v := range norm {
					if !reflect.DeepEqual(p[k], v) {
						t.Errorf("event %d %s: %s = %v, want %v (payload %s)", i, g.Name, k, p[k], v, g.Payload)
					}
				}
				if len(p) != len(norm) && w.name != EventShipmentEstimatedArrival {
					t.Errorf("event %d %s: payload %s has other members than %v", i, g.Name, g.Payload, norm)
				}
			}
		})
	}
}

func TestSignVerify(t *testing.T) {
	body := []byte(`{"data":{"id":"x"}}`)
	sig := Sign("s3cret", body)
	// The reference value, computed independently:
	// printf '%s' '{"data":{"id":"x"}}' | openssl dgst -sha256 -hmac s3cret
	if sig != "cadbb49d74296c15c1ae4f80d09ca548afbc174af4f8239a4d99a46f5c285990" {
		t.Fatalf("signature %q", sig)
	}
	if !Verify("s3cret", body, sig) {
		t.Fatal("own signature does not verify")
	}
	if Verify("other", body, sig) || Verify("s3cret", append(body, ' '), sig) || Verify("s3cret", body, "zz") {
		t.Fatal("a wrong secret, body or signature verifies")
	}
}

func TestBackoff(t *testing.T) {
	base := 30 * time.Second
	for attempt, ceil := range map[int]time.Duration{1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute, 12: 30 * time.Second << 11, 40: 24 * time.Hour} {
		if got := Backoff(base, attempt, 0.999999999); got > ceil || got < ceil*99/100 {
			t.Errorf("attempt %d: top %v, want about %v", attempt, got, ceil)
		}
		if got := Backoff(base, attempt, 0); got != 0 {
			t.Errorf("attempt %d: bottom %v, want 0 (full jitter)", attempt, got)
		}
	}
}

// Events and the catalogue the API validates against (model) name the same
// events: a webhook can subscribe to every event Derive raises, and to no
// other.
func TestEventsMatchTheAPI(t *testing.T) {
	api := map[string]bool{}
	for _, c := range model.WebhookEventCategories {
		for _, e := range c.Events {
			api[e.Name] = true
		}
	}
	for _, e := range Events {
		if !api[e] {
			t.Errorf("Derive raises %s, which no webhook can subscribe to", e)
		}
		delete(api, e)
	}
	for e := range api {
		t.Errorf("webhooks may subscribe to %s, which Derive never raises", e)
	}
}
