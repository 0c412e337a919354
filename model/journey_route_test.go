package model

import (
	"testing"
	"time"
)

// TestRouteKeepsUnlistedLocations: a rail ramp missing from ports stays on
// the route as a call named by the event's UN/LOCODE, in order, with its
// rail leg; an event that names no place is still left out.
func TestRouteKeepsUnlistedLocations(t *testing.T) {
	at := func(h int) *time.Time { v := time.Date(2026, 3, 1, h, 0, 0, 0, time.UTC); return &v }
	str := func(s string) *string { return &s }
	pod := &Port{ID: "11111111-1111-4111-8111-111111111111", Name: "Los Angeles", Code: "USLAX"}
	ev := func(name string, h int, port *Port, locode *string) *TransportEvent {
		e := &TransportEvent{WebhookEvent: WebhookEvent{Event: name, CreatedAt: *at(h)},
			TransportEventFields: TransportEventFields{EventAt: at(h), LocationLocode: locode, Scac: "UPRR"}}
		e.Rel.LocationPort = port
		return e
	}
	c := &Container{ID: "22222222-2222-4222-8222-222222222222"}
	r := RouteOf(c, []*TransportEvent{
		ev("container.transport.vessel_arrived", 1, pod, str("USLAX")),
		ev("container.transport.rail_departed", 2, pod, str("USLAX")),
		ev("container.transport.rail_arrived", 3, nil, str("USQSR")),
		ev("container.transport.rail_unloaded", 4, nil, str("USQSR")),
		ev("container.transport.full_out", 5, nil, nil),
	})
	if len(r.Locations) != 2 {
		t.Fatalf("%d calls, want 2: %+v", len(r.Locations), r.Locations)
	}
	ramp := r.Locations[1]
	if ramp.Port == nil || ramp.Port.Code != "USQSR" || ramp.Port.Name != "USQSR" || ramp.Port.CountryCode != "US" ||
		ramp.Port.ID == "" || ramp.Port.Latitude != nil {
		t.Fatalf("ramp %+v", ramp.Port)
	}
	if ramp.InboundMode == nil || *ramp.InboundMode != "rail" || ramp.InboundAtaAt == nil || !ramp.InboundAtaAt.Equal(*at(3)) {
		t.Errorf("ramp's inbound leg %+v", ramp)
	}
	again := RouteOf(c, []*TransportEvent{ev("container.transport.rail_arrived", 3, nil, str("USQSR"))})
	if again.Locations[0].Port.ID != ramp.Port.ID || ramp.Port.ID == pod.ID {
		t.Errorf("the ramp's id is not stable: %s, %s", again.Locations[0].Port.ID, ramp.Port.ID)
	}
}
