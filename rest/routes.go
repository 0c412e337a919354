package rest

import (
	"net/http"

	"shipgraph/model"
	"shipgraph/rest/jsonapi"
)

// The route of a container (GET /v2/containers/{id}/route, which the
// TypeScript SDK's getContainerRoute calls; not in the OpenAPI document)
// and its map (GET /v2/containers/{id}/map_geojson), both from
// resolve.ContainerRoute: the port calls its transport events tell.

func vesselID(v *model.Vessel) *string {
	if v == nil {
		return nil
	}
	return &v.ID
}

// containerRoute answers the route document: the route, its calls in
// included (then their ports and vessels, once each).
func (s *server) containerRoute(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, routeItem)
	var route *model.Route
	if err == nil {
		route, err = s.res.ContainerRoute(r.Context(), who(r), r.PathValue("id"))
	}
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	b := s.newBuilder(s.baseURL(r), p)
	b.withIncluded = true
	ids := make([]Identifier, len(route.Locations))
	for i, l := range route.Locations {
		ids[i] = Identifier{Type: model.RouteLocationType, ID: l.ID}
	}
	data := &Resource{ID: route.ID, Type: model.RouteType,
		Attributes:    routeAttributesOf(route),
		Relationships: Relationships{jsonapi.ToMany("route_locations", ids)},
		Links:         &jsonapi.Links{Self: b.base + r.URL.Path}}
	b.setPrimary(data)
	for _, l := range route.Locations {
		b.include(&Resource{ID: l.ID, Type: model.RouteLocationType,
			Attributes: routeLocationAttributesOf(l),
			Relationships: Relationships{
				jsonapi.ToOne("location", "port", &l.Port.ID),
				jsonapi.ToOne("inbound_vessel", model.VesselType, vesselID(l.InboundVessel)),
				jsonapi.ToOne("outbound_vessel", model.VesselType, vesselID(l.OutboundVessel)),
			}})
	}
	for _, l := range route.Locations {
		b.include(portResource(b, l.Port))
	}
	for _, l := range route.Locations {
		for _, v := range []*model.Vessel{l.InboundVessel, l.OutboundVessel} {
			if v != nil {
				b.include(vesselResource(b, v))
			}
		}
	}
	b.writeOne(w, r, http.StatusOK, data)
}

// containerMap answers the map of a container's journey as a GeoJSON
// FeatureCollection (resolve.RouteMap; GraphQL's containerMap is the same
// document).
func (s *server) containerMap(w http.ResponseWriter, r *http.Request) {
	if _, err := parseParams(r, mapItem); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	fc, err := s.res.ContainerMap(r.Context(), who(r), r.PathValue("id"))
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, fc)
}
