package model

import (
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The route of a container (/v2/containers/{id}/route, the map GeoJSON):
// its port calls in order, derived from its transport events, with the
// mode, carrier, vessel and times of the leg arriving at and leaving each.

// The JSON:API types of the route document.
const (
	RouteType         = "route"
	RouteLocationType = "route_location"
)

// Route is a container's route.
type Route struct {
	ID          string // stable per container (RouteID)
	ContainerID string
	CreatedAt   time.Time `jsonapi:"created_at"` // the first event's recording, else the container's creation
	UpdatedAt   time.Time `jsonapi:"updated_at"` // the last event's recording
	Locations   []*RouteLocation
}

// RouteLocation is one port call of a route. Port is the event's port,
// or, for a place missing from ports (an inland rail ramp), a port made of
// the event's UN/LOCODE (unlistedLocation).
type RouteLocation struct {
	ID             string // stable per container and call
	Port           *Port
	InboundMode    *string    `jsonapi:"inbound_mode"` // "vessel" or "rail"
	InboundScac    *string    `jsonapi:"inbound_scac"`
	InboundEtaAt   *time.Time `jsonapi:"inbound_eta_at"`
	InboundAtaAt   *time.Time `jsonapi:"inbound_ata_at"`
	InboundVessel  *Vessel
	InboundVoyage  *string
	OutboundMode   *string    `jsonapi:"outbound_mode"`
	OutboundScac   *string    `jsonapi:"outbound_scac"`
	OutboundEtdAt  *time.Time `jsonapi:"outbound_etd_at"`
	OutboundAtdAt  *time.Time `jsonapi:"outbound_atd_at"`
	OutboundVessel *Vessel
	OutboundVoyage *string
}

var routeSpace = uuid.MustParse("6f1c2a9e-3d47-4b8a-9e21-5c0d7a4b3e10")

// RouteID is the id of the route of a container, and of its calls (n ≥ 1):
// name-based UUIDs, so they are stable and differ from every record's.
func RouteID(containerID string, n int) string {
	name := containerID + "/route"
	if n > 0 {
		name += "/" + strconv.Itoa(n)
	}
	return uuid.NewSHA1(routeSpace, []byte(name)).String()
}

// LegOf is legEvent for the adapters that derive a route from transport
// events they read through an API (the MCP server's get_container_route).
func LegOf(event string) (inbound bool, mode string, estimated, ok bool) { return legEvent(event) }

// legEvent classifies a transport event for the route: whether it is about
// arriving (inbound) or leaving (outbound) a port, by which mode, and
// whether it is an estimate. ok is false for events that say nothing of a
// leg (gate moves, availability).
func legEvent(event string) (inbound bool, mode string, estimated, ok bool) {
	name, found := strings.CutPrefix(event, "container.transport.")
	if !found {
		return false, "", false, false
	}
	if rest, est := strings.CutPrefix(name, "estimated."); est {
		name, estimated = rest, true
	}
	switch name {
	case "vessel_arrived", "vessel_berthed", "vessel_discharged", "transshipment_arrived", "transshipment_discharged",
		"feeder_arrived", "feeder_discharged":
		return true, "vessel", estimated, true
	case "vessel_loaded", "vessel_departed", "transshipment_loaded", "transshipment_departed", "feeder_loaded", "feeder_departed":
		return false, "vessel", estimated, true
	case "rail_arrived", "rail_unloaded", "arrived_at_inland_destination":
		return true, "rail", estimated, true
	case "rail_loaded", "rail_departed":
		return false, "rail", estimated, true
	}
	return false, "", false, false
}

// RouteOf derives the route of container c from its transport events in
// time order, with their location (port) and vessel attached: one call
// per run of events at the same port; an arrival's actual time is the
// *_arrived event's (an estimate's is the ETA), a departure's the
// *_departed event's (an estimate's is the ETD).
func RouteOf(c *Container, events []*TransportEvent) *Route {
	r := &Route{ID: RouteID(c.ID, 0), ContainerID: c.ID, CreatedAt: c.CreatedAt, UpdatedAt: c.CreatedAt}
	var at *RouteLocation
	for i, e := range events {
		if i == 0 || e.CreatedAt.Before(r.CreatedAt) {
			r.CreatedAt = e.CreatedAt
		}
		if e.CreatedAt.After(r.UpdatedAt) {
			r.UpdatedAt = e.CreatedAt
		}
		port := e.Rel.LocationPort
		if port == nil {
			port = unlistedLocation(e)
		}
		if port == nil {
			continue
		}
		if at == nil || at.Port.ID != port.ID {
			at = &RouteLocation{ID: RouteID(c.ID, len(r.Locations)+1), Port: port}
			r.Locations = append(r.Locations, at)
		}
		inbound, mode, estimated, ok := legEvent(e.Event)
		if !ok {
			continue
		}
		scac := &e.Scac
		if e.Scac == "" {
			scac = nil
		}
		arrivedOrLeft := strings.HasSuffix(e.Event, "_arrived") || strings.HasSuffix(e.Event, "_departed") ||
			strings.HasSuffix(e.Event, "arrived_at_inland_destination")
		if inbound {
			at.InboundMode, at.InboundScac = &mode, or(scac, at.InboundScac)
			if e.Rel.Vessel != nil {
				at.InboundVessel = e.Rel.Vessel
			}
			at.InboundVoyage = or(e.VoyageNumber, at.InboundVoyage)
			switch {
			case estimated:
				at.InboundEtaAt = e.EventAt
			case arrivedOrLeft:
				at.InboundAtaAt = e.EventAt
			}
		} else {
			at.OutboundMode, at.OutboundScac = &mode, or(scac, at.OutboundScac)
			if e.Rel.Vessel != nil {
				at.OutboundVessel = e.Rel.Vessel
			}
			at.OutboundVoyage = or(e.VoyageNumber, at.OutboundVoyage)
			switch {
			case estimated:
				at.OutboundEtdAt = e.EventAt
			case arrivedOrLeft:
				at.OutboundAtdAt = e.EventAt
			}
		}
	}
	return r
}

// unlistedLocation is the place of an event whose location is not in
// ports (an inland rail ramp, most often): a port of the event's UN/LOCODE,
// as name and code, under a name-based id (stable, and no record's), with
// no coordinates (the map leaves it out). Nil when the event names no
// place.
func unlistedLocation(e *TransportEvent) *Port {
	if e.LocationLocode == nil || *e.LocationLocode == "" {
		return nil
	}
	code := *e.LocationLocode
	p := &Port{ID: uuid.NewSHA1(routeSpace, []byte("location/"+code)).String(), Name: code, Code: code}
	if len(code) >= 2 {
		p.CountryCode = code[:2]
	}
	return p
}

func or(a, b *string) *string {
	if a != nil {
		return a
	}
	return b
}
