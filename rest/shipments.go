package rest

import (
	"context"
	"net/http"

	"shipgraph/catalog"
	"shipgraph/model"
	"shipgraph/resolve"
)

// GET /v2/shipments and GET /v2/shipments/{id}.

// shipmentIncludes are the relationships of the shipment resource.
var shipmentIncludes = includes(catalog.Shipment)

var (
	shipmentList = endpoint{
		Serializer: "V2::ShipmentSerializer",
		Includes:   shipmentIncludes,
		// Not in the OpenAPI document, but the resolvers order by these.
		Sorts:   []string{"created_at", "pod_eta_at", "bill_of_lading_number"},
		Filters: []string{"q", "number", "filter[tracking_stopped]"},
		Paged:   true,
		Cursors: true,
	}
	shipmentItem = endpoint{Serializer: "V2::ShipmentSerializer", Includes: shipmentIncludes}
)

func (s *server) listShipments(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, shipmentList, func(ctx context.Context, p *params) (listPage[*model.Shipment], error) {
		stopped, err := p.BoolFilter("filter[tracking_stopped]")
		if err != nil {
			return listPage[*model.Shipment]{}, err
		}
		filter := model.ShipmentFilter{Search: p.Filter("q"), Number: p.Filter("number"), TrackingStopped: stopped}
		pg, err := s.res.Shipments(ctx, who(r), resolve.ShipmentQuery{Filter: filter, Order: p.Order(), Page: p.pageArgs(), Plan: p.plan})
		if err != nil {
			return listPage[*model.Shipment]{}, p.CursorError(err)
		}
		return fromPage(pg, func(ctx context.Context) (int, error) { return s.res.CountShipments(ctx, who(r), filter) }), nil
	}, withIncludes)
}

func (s *server) getShipment(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, shipmentItem, (s.res.Shipment), withIncludes)
}
