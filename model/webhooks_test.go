package model

import "testing"

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
		"shipment.estimated.arrival": EstimatedEventType, "tracking_request.succeeded": "",
	} {
		if got := WebhookEventObjectType(ev); got != want {
			t.Errorf("%s: %q, want %q", ev, got, want)
		}
	}
}
