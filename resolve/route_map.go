package resolve

import (
	"context"
	"strconv"
	"time"

	"shipgraph/model"
)

// The map of a container's route (GET /v2/containers/{id}/map_geojson,
// GraphQL containerMap): one document for both transports.

// ContainerMap reads the container's route (ContainerRoute) and draws it.
func (r *Resolver) ContainerMap(ctx context.Context, p *model.Principal, containerID string) (*FeatureCollection, error) {
	route, err := r.ContainerRoute(ctx, p, containerID)
	if err != nil {
		return nil, err
	}
	return RouteMap(route), nil
}

func routeVesselID(v *model.Vessel) *string {
	if v == nil {
		return nil
	}
	return &v.ID
}

// FeatureCollection is a GeoJSON FeatureCollection.
type FeatureCollection struct {
	Type     string    `json:"type"`
	Features []feature `json:"features"`
}

type feature struct {
	Type       string   `json:"type"`
	Geometry   geometry `json:"geometry"`
	Properties any      `json:"properties"`
}

// geometry is a Point (coordinates [lon, lat]) or a LineString (a list
// of them).
type geometry struct {
	Type        string `json:"type"`
	Coordinates any    `json:"coordinates"`
}

func point(lon, lat float64) geometry {
	return geometry{Type: "Point", Coordinates: [2]float64{lon, lat}}
}

func lineString(pts ...[2]float64) geometry {
	return geometry{Type: "LineString", Coordinates: pts}
}

type portFeature struct {
	FeatureType   string     `json:"feature_type"`
	PortsSequence int        `json:"ports_sequence"`
	PortsTotal    int        `json:"ports_total"`
	LocationID    string     `json:"location_id"`
	LocationType  string     `json:"location_type"`
	Name          string     `json:"name"`
	StateAbbr     *string    `json:"state_abbr"`
	State         *string    `json:"state"`
	CountryCode   string     `json:"country_code"`
	TimeZone      string     `json:"time_zone"`
	Label         string     `json:"label"`
	InboundEtaAt  *time.Time `json:"inbound_eta_at"`
	InboundAtaAt  *time.Time `json:"inbound_ata_at"`
	OutboundEtdAt *time.Time `json:"outbound_etd_at"`
	OutboundAtdAt *time.Time `json:"outbound_atd_at"`
	UpdatedAt     *time.Time `json:"updated_at"`
}

type currentVesselFeature struct {
	FeatureType             string     `json:"feature_type"`
	PortsSequence           int        `json:"ports_sequence"`
	VesselID                string     `json:"vessel_id"`
	VesselName              string     `json:"vessel_name"`
	VesselImo               *string    `json:"vessel_imo,omitempty"`
	VoyageNumber            *string    `json:"voyage_number"`
	VesselLocationTimestamp *time.Time `json:"vessel_location_timestamp,omitempty"`
	VesselLocationHeading   *float64   `json:"vessel_location_heading"`
	VesselLocationSpeed     *float64   `json:"vessel_location_speed"`
	DeparturePortID         string     `json:"departure_port_id"`
	DeparturePortName       string     `json:"departure_port_name"`
	DeparturePortStateAbbr  *string    `json:"departure_port_state_abbr"`
	DeparturePortCountry    string     `json:"departure_port_country_code"`
	DeparturePortLabel      string     `json:"departure_port_label"`
	DeparturePortAtd        *time.Time `json:"departure_port_atd"`
	DeparturePortTimeZone   string     `json:"departure_port_time_zone"`
	ArrivalPortID           *string    `json:"arrival_port_id"`
	ArrivalPortName         *string    `json:"arrival_port_name"`
	ArrivalPortStateAbbr    *string    `json:"arrival_port_state_abbr"`
	ArrivalPortCountry      *string    `json:"arrival_port_country_code"`
	ArrivalPortLabel        *string    `json:"arrival_port_label"`
	ArrivalPortEta          *time.Time `json:"arrival_port_eta"`
	ArrivalPortTimeZone     *string    `json:"arrival_port_time_zone"`
}

type pastLegFeature struct {
	FeatureType   string     `json:"feature_type"`
	PortsSequence int        `json:"ports_sequence"`
	VesselID      *string    `json:"vessel_id,omitempty"`
	StartTime     *time.Time `json:"start_time,omitempty"`
	EndTime       *time.Time `json:"end_time,omitempty"`
	PointCount    int        `json:"point_count"`
	OutboundAtdAt *time.Time `json:"outbound_atd_at"`
	InboundAtaAt  *time.Time `json:"inbound_ata_at"`
	InboundEtaAt  *time.Time `json:"inbound_eta_at"`
}

type fullLegFeature struct {
	FeatureType    string `json:"feature_type"`
	PortsSequence  int    `json:"ports_sequence"`
	PreviousPortID string `json:"previous_port_id"`
	NextPortID     string `json:"next_port_id"`
	PointCount     int    `json:"point_count"`
}

type partialLegFeature struct {
	FeatureType   string `json:"feature_type"`
	PortsSequence int    `json:"ports_sequence"`
	CurrentPortID string `json:"current_port_id"`
	NextPortID    string `json:"next_port_id"`
	PointCount    int    `json:"point_count"`
}

// portLabel is POL (first call), POD (last) or TSn between.
func portLabel(i, n int) string {
	switch {
	case i == 0:
		return "POL"
	case i == n-1:
		return "POD"
	}
	return "TS" + strconv.Itoa(i)
}

func coords(p *model.Port) ([2]float64, bool) {
	if p.Latitude == nil || p.Longitude == nil {
		return [2]float64{}, false
	}
	return [2]float64{*p.Longitude, *p.Latitude}, true // GeoJSON: [lon, lat]
}

// RouteMap is the map of a container's journey as a GeoJSON
// FeatureCollection: its port calls (Points, in order), the legs sailed
// (past_vessel_locations: the ports' coordinates, as no track is kept), the
// vessel of the leg under way at its last known position with the rest of
// that leg (estimated_partial_leg; estimated_full_legs when the vessel's
// position is unknown), and the legs ahead (estimated_full_legs).
func RouteMap(route *model.Route) *FeatureCollection {
	fc := &FeatureCollection{Type: "FeatureCollection", Features: []feature{}}
	locs := route.Locations
	n := len(locs)
	updated := route.UpdatedAt
	for i, l := range locs {
		c, ok := coords(l.Port)
		if !ok {
			continue
		}
		fc.Features = append(fc.Features, feature{Type: "Feature", Geometry: point(c[0], c[1]), Properties: portFeature{
			FeatureType: "port", PortsSequence: i + 1, PortsTotal: n, LocationID: l.Port.ID, LocationType: "Port",
			Name: l.Port.Name, StateAbbr: l.Port.StateAbbr, CountryCode: l.Port.CountryCode, TimeZone: l.Port.TimeZone,
			Label: portLabel(i, n), InboundEtaAt: l.InboundEtaAt, InboundAtaAt: l.InboundAtaAt,
			OutboundEtdAt: l.OutboundEtdAt, OutboundAtdAt: l.OutboundAtdAt, UpdatedAt: &updated}})
	}
	for i := 0; i+1 < n; i++ {
		from, to := locs[i], locs[i+1]
		a, okA := coords(from.Port)
		b, okB := coords(to.Port)
		if !okA || !okB {
			continue
		}
		departed := from.OutboundAtdAt != nil
		arrived := to.InboundAtaAt != nil
		v := from.OutboundVessel
		switch {
		case departed && arrived:
			fc.Features = append(fc.Features, feature{Type: "Feature", Geometry: lineString(a, b), Properties: pastLegFeature{
				FeatureType: "past_vessel_locations", PortsSequence: i + 1, VesselID: routeVesselID(v), StartTime: from.OutboundAtdAt,
				EndTime: to.InboundAtaAt, PointCount: 2, OutboundAtdAt: from.OutboundAtdAt, InboundAtaAt: to.InboundAtaAt,
				InboundEtaAt: to.InboundEtaAt}})
		case departed && v != nil && v.Latitude != nil && v.Longitude != nil:
			at := [2]float64{*v.Longitude, *v.Latitude}
			label := portLabel(i+1, n)
			fc.Features = append(fc.Features,
				feature{Type: "Feature", Geometry: lineString(a, at), Properties: pastLegFeature{
					FeatureType: "past_vessel_locations", PortsSequence: i + 1, VesselID: &v.ID, StartTime: from.OutboundAtdAt,
					EndTime: v.PositionTimestamp, PointCount: 2, OutboundAtdAt: from.OutboundAtdAt, InboundEtaAt: to.InboundEtaAt}},
				feature{Type: "Feature", Geometry: point(at[0], at[1]), Properties: currentVesselFeature{
					FeatureType: "current_vessel", PortsSequence: i + 1, VesselID: v.ID, VesselName: v.Name, VesselImo: v.IMO,
					VoyageNumber: from.OutboundVoyage, VesselLocationTimestamp: v.PositionTimestamp,
					VesselLocationHeading: v.NavigationalHeadingDegrees, VesselLocationSpeed: v.NauticalSpeedKnots,
					DeparturePortID: from.Port.ID, DeparturePortName: from.Port.Name, DeparturePortStateAbbr: from.Port.StateAbbr,
					DeparturePortCountry: from.Port.CountryCode, DeparturePortLabel: portLabel(i, n), DeparturePortAtd: from.OutboundAtdAt,
					DeparturePortTimeZone: from.Port.TimeZone, ArrivalPortID: &to.Port.ID, ArrivalPortName: &to.Port.Name,
					ArrivalPortStateAbbr: to.Port.StateAbbr, ArrivalPortCountry: &to.Port.CountryCode, ArrivalPortLabel: &label,
					ArrivalPortEta: to.InboundEtaAt, ArrivalPortTimeZone: &to.Port.TimeZone}},
				feature{Type: "Feature", Geometry: lineString(at, b), Properties: partialLegFeature{
					FeatureType: "estimated_partial_leg", PortsSequence: i + 1, CurrentPortID: from.Port.ID, NextPortID: to.Port.ID, PointCount: 2}})
		default:
			fc.Features = append(fc.Features, feature{Type: "Feature", Geometry: lineString(a, b), Properties: fullLegFeature{
				FeatureType: "estimated_full_legs", PortsSequence: i + 1, PreviousPortID: from.Port.ID, NextPortID: to.Port.ID, PointCount: 2}})
		}
	}
	return fc
}
