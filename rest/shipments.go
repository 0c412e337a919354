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
		serializer: "V2::ShipmentSerializer",
		includes:   shipmentIncludes,
		// Not in the OpenAPI document, but the resolvers order by these.
		sorts:   []string{"created_at", "pod_eta_at", "bill_of_lading_number"},
		filters: []string{"q", "number", "filter[tracking_stopped]"},
		paged:   true,
		cursors: true,
	}
	shipmentItem = endpoint{serializer: "V2::ShipmentSerializer", includes: shipmentIncludes}
)

func (s *server) listShipments(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, shipmentList, func(ctx context.Context, p *params) (listPage[*model.Shipment], error) {
		stopped, err := p.boolFilter("filter[tracking_stopped]")
		if err != nil {
			return listPage[*model.Shipment]{}, err
		}
		filter := model.ShipmentFilter{Search: p.filter("q"), Number: p.filter("number"), TrackingStopped: stopped}
		pg, err := s.res.Shipments(ctx, who(r), resolve.ShipmentQuery{Filter: filter, Order: p.sortOrder(), Page: p.pageArgs(), Plan: p.plan})
		if err != nil {
			return listPage[*model.Shipment]{}, p.cursorError(err)
		}
		return fromPage(pg, func(ctx context.Context) (int, error) { return s.res.CountShipments(ctx, who(r), filter) }), nil
	}, (*builder).shipments)
}

func (s *server) getShipment(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, shipmentItem, (s.res.Shipment), (*builder).shipments)
}

// shipments renders shipments with their containers linkage and the
// includes of p: one statement per relationship and level (plan.go).
func (b *builder) shipments(ctx context.Context, ships []*model.Shipment, p *params) ([]*Resource, error) {
	return renderAll(b, ctx, ships, p, shipmentShape)
}

type shipmentAttributes struct {
	BillOfLadingNumber          string                           `json:"bill_of_lading_number"`
	NormalizedNumber            string                           `json:"normalized_number"`
	RefNumbers                  []string                         `json:"ref_numbers"`
	CreatedAt                   timestamp                        `json:"created_at"`
	Tags                        []string                         `json:"tags"`
	PortOfLadingLocode          *string                          `json:"port_of_lading_locode"`
	PortOfLadingName            *string                          `json:"port_of_lading_name"`
	PortOfDischargeLocode       *string                          `json:"port_of_discharge_locode"`
	PortOfDischargeName         *string                          `json:"port_of_discharge_name"`
	DestinationLocode           *string                          `json:"destination_locode"`
	DestinationName             *string                          `json:"destination_name"`
	ShippingLineScac            string                           `json:"shipping_line_scac"`
	ShippingLineName            string                           `json:"shipping_line_name"`
	ShippingLineShortName       string                           `json:"shipping_line_short_name"`
	CustomerName                *string                          `json:"customer_name"`
	PodVesselName               *string                          `json:"pod_vessel_name"`
	PodVesselImo                *string                          `json:"pod_vessel_imo"`
	PodVoyageNumber             *string                          `json:"pod_voyage_number"`
	PolEtdAt                    *timestamp                       `json:"pol_etd_at"`
	PolAtdAt                    *timestamp                       `json:"pol_atd_at"`
	PodEtaAt                    *timestamp                       `json:"pod_eta_at"`
	PodOriginalEtaAt            *timestamp                       `json:"pod_original_eta_at"`
	PodAtaAt                    *timestamp                       `json:"pod_ata_at"`
	DestinationEtaAt            *timestamp                       `json:"destination_eta_at"`
	DestinationAtaAt            *timestamp                       `json:"destination_ata_at"`
	PolTimezone                 *string                          `json:"pol_timezone"`
	PodTimezone                 *string                          `json:"pod_timezone"`
	DestinationTimezone         *string                          `json:"destination_timezone"`
	LineTrackingLastAttemptedAt *timestamp                       `json:"line_tracking_last_attempted_at"`
	LineTrackingLastSucceededAt *timestamp                       `json:"line_tracking_last_succeeded_at"`
	LineTrackingStoppedAt       *timestamp                       `json:"line_tracking_stopped_at"`
	LineTrackingStoppedReason   *model.LineTrackingStoppedReason `json:"line_tracking_stopped_reason"`
}

// shipmentResource renders a shipment; its containers linkage must have
// been loaded (a plan with "containers" or "containerIDs").
func (b *builder) shipmentResource(s *model.Shipment) *Resource {
	// ref_numbers is nullable in the spec (null when never set, as in
	// GraphQL); tags is not.
	var refs []string
	if s.RefNumbers != nil {
		refs = strs(s.RefNumbers)
	}
	return &Resource{
		ID:   s.ID,
		Type: "shipment",
		Attributes: shipmentAttributes{
			BillOfLadingNumber:          s.BillOfLadingNumber,
			NormalizedNumber:            s.NormalizedNumber,
			RefNumbers:                  refs,
			CreatedAt:                   ts(s.CreatedAt),
			Tags:                        strs(s.Tags),
			PortOfLadingLocode:          s.PortOfLadingLocode,
			PortOfLadingName:            s.PortOfLadingName,
			PortOfDischargeLocode:       s.PortOfDischargeLocode,
			PortOfDischargeName:         s.PortOfDischargeName,
			DestinationLocode:           s.DestinationLocode,
			DestinationName:             s.DestinationName,
			ShippingLineScac:            s.ShippingLineScac,
			ShippingLineName:            s.ShippingLineName,
			ShippingLineShortName:       s.ShippingLineShortName,
			CustomerName:                s.CustomerName,
			PodVesselName:               s.PodVesselName,
			PodVesselImo:                s.PodVesselImo,
			PodVoyageNumber:             s.PodVoyageNumber,
			PolEtdAt:                    tsp(s.PolEtdAt),
			PolAtdAt:                    tsp(s.PolAtdAt),
			PodEtaAt:                    tsp(s.PodEtaAt),
			PodOriginalEtaAt:            tsp(s.PodOriginalEtaAt),
			PodAtaAt:                    tsp(s.PodAtaAt),
			DestinationEtaAt:            tsp(s.DestinationEtaAt),
			DestinationAtaAt:            tsp(s.DestinationAtaAt),
			PolTimezone:                 s.PolTimezone,
			PodTimezone:                 s.PodTimezone,
			DestinationTimezone:         s.DestinationTimezone,
			LineTrackingLastAttemptedAt: tsp(s.LineTrackingLastAttemptedAt),
			LineTrackingLastSucceededAt: tsp(s.LineTrackingLastSucceededAt),
			LineTrackingStoppedAt:       tsp(s.LineTrackingStoppedAt),
			LineTrackingStoppedReason:   s.LineTrackingStoppedReason,
		},
		Relationships: b.linkage(s, shipmentShape.members),
		Links:         &Links{Self: b.base + "/v2/shipments/" + s.ID},
	}
}
