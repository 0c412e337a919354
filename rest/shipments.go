package rest

import (
	"context"
	"net/http"

	"shipgraph/catalog"
	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
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

// Shipment writes:
//
//	PATCH /v2/shipments/{id}                  ref_numbers, tags
//	PATCH /v2/shipments/{id}/stop_tracking    no body
//	PATCH /v2/shipments/{id}/resume_tracking  no body
//
// Each answers 200 with the shipment, and takes include like GET.

// shipmentEditable are the attributes PATCH /v2/shipments/{id} may set (the
// OpenAPI document's); any other is a 422 rather than silently ignored.
var shipmentEditable = []string{"ref_numbers", "tags"}

func (s *server) updateShipment(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.writeShipment(w, r, func(ctx context.Context) (*model.Shipment, error) {
		attrs, bad := writeBody(r, "shipment")
		// An attribute error is answered once the shipment is found (404
		// first), as the resolver layer orders it.
		patch, invalid := shipmentPatch(attrs)
		return s.res.UpdateShipment(ctx, who(r), resolve.UpdateShipment{ID: id, RefNumbers: patch.RefNumbers, Tags: patch.Tags, Invalid: firstErr(bad, invalid)})
	})
}

func (s *server) stopTracking(w http.ResponseWriter, r *http.Request) {
	s.writeShipment(w, r, func(ctx context.Context) (*model.Shipment, error) {
		return s.res.StopTracking(ctx, who(r), r.PathValue("id"))
	})
}

func (s *server) resumeTracking(w http.ResponseWriter, r *http.Request) {
	s.writeShipment(w, r, func(ctx context.Context) (*model.Shipment, error) {
		return s.res.ResumeTracking(ctx, who(r), r.PathValue("id"))
	})
}

// writeShipment runs a shipment write and answers with the shipment and
// the includes asked for.
func (s *server) writeShipment(w http.ResponseWriter, r *http.Request, write func(context.Context) (*model.Shipment, error)) {
	p, err := parseParams(r, shipmentItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	sh, err := write(r.Context())
	serveWritten(s, w, r, p, sh, err, withIncludes)
}

// shipmentPatch reads ref_numbers and tags: lists of strings, or null to
// clear them.
func shipmentPatch(attrs jsonapi.Attributes) (p model.ShipmentPatch, err error) {
	if err := attrs.Only("%s cannot be changed; a shipment's editable attributes are ref_numbers and tags", shipmentEditable...); err != nil {
		return p, err
	}
	if p.RefNumbers, err = attrs.OptionalList("ref_numbers"); err != nil {
		return p, err
	}
	p.Tags, err = attrs.OptionalList("tags")
	return p, err
}
