package model

import (
	"testing"
	"time"
)

// A reference object's id is its notification's under a mask: its own
// inverse, a different UUID of the same version and variant.
func TestWebhookEventID(t *testing.T) {
	for _, id := range []string{"6a1f2b3c-4d5e-4f60-8a7b-9c0d1e2f0001", "00000000-0000-4000-8000-000000000000", "ffffffff-ffff-4fff-bfff-ffffffffffff"} {
		ev := WebhookEventID(id)
		if ev == id || len(ev) != 36 || WebhookEventID(ev) != id {
			t.Errorf("%s → %s → %s", id, ev, WebhookEventID(ev))
		}
		if ev[14] != id[14] || isHexVariant(ev[19]) != isHexVariant(id[19]) {
			t.Errorf("%s → %s changes the version or variant", id, ev)
		}
		if NormalizeID(ev) != ev {
			t.Errorf("%s is not a lower-case UUID", ev)
		}
	}
	if WebhookEventID("nonsense") != "nonsense" {
		t.Error("a non-UUID changed")
	}
}

func isHexVariant(c byte) bool { return c == '8' || c == '9' || c == 'a' || c == 'b' }

func TestWebhookEventObjectType(t *testing.T) {
	for ev, want := range map[string]string{
		"container.updated": ContainerUpdatedEventType, "container.created": ContainerUpdatedEventType,
		"container.pickup_lfd_rail.changed": TransportEventType, "container.transport.delivered": TransportEventType,
		"shipment.estimated.arrival": EstimatedEventType, "tracking_request.succeeded": TrackingRequestType,
		"tracking_request.tracking_stopped": TrackingRequestType, "tracking_request.failed": TrackingRequestType,
		"tracking_request.awaiting_manifest": TrackingRequestType, "document.extracted": DocumentObjectType,
		"document.extraction_failed": DocumentObjectType, "document.nothing": "",
	} {
		if got := WebhookEventObjectType(ev); got != want {
			t.Errorf("%s: %q, want %q", ev, got, want)
		}
	}
}

func TestTrackingRequestOfShipment(t *testing.T) {
	sid := "0b7f0a4e-5c36-4b8a-9d51-3f0e2a6c9b11"
	id := TrackingRequestID(sid)
	if id == sid || id == WebhookEventID(sid) || len(id) != 36 || id[14] != sid[14] || !isHexVariant(id[19]) {
		t.Fatalf("tracking request id %s of shipment %s", id, sid)
	}
	if TrackingRequestID(id) != sid {
		t.Errorf("%s does not map back to the shipment", id)
	}
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &Shipment{ID: sid, AccountID: "a", BillOfLadingNumber: "MEDU123", ShippingLineScac: "MSCU", CreatedAt: created, UpdatedAt: created.Add(time.Hour)}
	tr := TrackingRequestOf(s)
	if tr.ID != id || tr.ShipmentID == nil || *tr.ShipmentID != sid || tr.RequestNumber != "MEDU123" || tr.Scac != "MSCU" || tr.Status != TrackingCreated ||
		!tr.UpdatedAt.Equal(s.UpdatedAt) || tr.Tags == nil || tr.RefNumbers != nil {
		t.Errorf("tracked: %+v", tr)
	}
	stopped := created.Add(48 * time.Hour)
	s.LineTrackingStoppedAt = &stopped
	if tr := TrackingRequestOf(s); tr.Status != TrackingStopped || !tr.UpdatedAt.Equal(stopped) {
		t.Errorf("stopped: %+v", tr)
	}
	n := &WebhookNotification{ID: "1d9c1e0a-7b2f-4c1e-8a55-2b6f0c3d4e5f", Event: "tracking_request.tracking_stopped", ReferenceType: "shipment", ReferenceID: sid}
	if k := n.EventKey(TrackingRequestType); k == nil || *k != id {
		t.Errorf("reference object key %v, want %s", k, id)
	}
	if k := n.EventKey(EstimatedEventType); k != nil {
		t.Errorf("an estimated_event key %s for a tracking request event", *k)
	}
	// Raised from the request's own row (issue 27): its id as is.
	rid := "7e0f3c52-9a1b-4d6e-8f20-31c4b5a6d7e8"
	n = &WebhookNotification{ID: "1d9c1e0a-7b2f-4c1e-8a55-2b6f0c3d4e5f", Event: "tracking_request.failed", ReferenceType: TrackingRequestType, ReferenceID: rid}
	if k := n.EventKey(TrackingRequestType); k == nil || *k != rid {
		t.Errorf("reference object key %v, want %s", k, rid)
	}
}
