package rest

import (
	"context"
	"net/http"

	"shipgraph/catalog"
	"shipgraph/model"
	"shipgraph/resolve"
)

// GET /v2/containers and GET /v2/containers/{id}.

// containerIncludes are the relationships of the container resource.
// transport_events and raw_events are relationships of the spec whose
// records Shipgraph does not hold: they are accepted, their linkage is
// always [] and they add nothing to included.
var containerIncludes = includes(catalog.Container)

var (
	containerList = endpoint{
		serializer: "V2::ContainerSerializer",
		includes:   containerIncludes,
		// Not in the OpenAPI document, but the resolvers order by these.
		sorts: []string{"created_at", "pickup_lfd", "number"},
		// filter[number] is the lookup the shipments list's "number"
		// parameter refers clients to.
		filters: []string{"filter[number]"},
		paged:   true,
		cursors: true,
	}
	containerItem = endpoint{serializer: "V2::ContainerSerializer", includes: containerIncludes}
)

func (s *server) listContainers(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, containerList, func(ctx context.Context, p *params) (listPage[*model.Container], error) {
		filter := model.ContainerFilter{Number: p.filter("filter[number]")}
		pg, err := s.res.Containers(ctx, who(r), resolve.ContainerQuery{Filter: filter, Order: p.sortOrder(), Page: p.pageArgs(), Plan: p.plan})
		if err != nil {
			return listPage[*model.Container]{}, p.cursorError(err)
		}
		return fromPage(pg, func(ctx context.Context) (int, error) { return s.res.CountContainers(ctx, who(r), filter) }), nil
	}, (*builder).containers)
}

func (s *server) getContainer(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, containerItem, (s.res.Container), (*builder).containers)
}

// containers renders containers and the includes of p. Their own linkage
// needs no statement (foreign keys); an included shipment needs its
// containers linkage (one statement for all).
func (b *builder) containers(ctx context.Context, cs []*model.Container, p *params) ([]*Resource, error) {
	return renderAll(b, ctx, cs, p, containerShape)
}

type containerAttributes struct {
	Number                        string                 `json:"number"`
	RefNumbers                    []string               `json:"ref_numbers"`
	EquipmentType                 *model.EquipmentType   `json:"equipment_type"`
	EquipmentLength               *int                   `json:"equipment_length"`
	EquipmentHeight               *model.EquipmentHeight `json:"equipment_height"`
	WeightInLbs                   *float64               `json:"weight_in_lbs"`
	CreatedAt                     timestamp              `json:"created_at"`
	SealNumber                    *string                `json:"seal_number"`
	PickupLfd                     *timestamp             `json:"pickup_lfd"`
	PickupAppointmentAt           *timestamp             `json:"pickup_appointment_at"`
	AvailabilityKnown             bool                   `json:"availability_known"`
	AvailableForPickup            *bool                  `json:"available_for_pickup"`
	PodArrivedAt                  *timestamp             `json:"pod_arrived_at"`
	PodDischargedAt               *timestamp             `json:"pod_discharged_at"`
	PodFullOutAt                  *timestamp             `json:"pod_full_out_at"`
	TerminalCheckedAt             *timestamp             `json:"terminal_checked_at"`
	PodFullOutChassisNumber       *string                `json:"pod_full_out_chassis_number"`
	LocationAtPodTerminal         *string                `json:"location_at_pod_terminal"`
	FinalDestinationFullOutAt     *timestamp             `json:"final_destination_full_out_at"`
	EmptyTerminatedAt             *timestamp             `json:"empty_terminated_at"`
	HoldsAtPodTerminal            []model.TerminalHold   `json:"holds_at_pod_terminal"`
	FeesAtPodTerminal             []model.TerminalFee    `json:"fees_at_pod_terminal"`
	PodTimezone                   *string                `json:"pod_timezone"`
	FinalDestinationTimezone      *string                `json:"final_destination_timezone"`
	EmptyTerminatedTimezone       *string                `json:"empty_terminated_timezone"`
	PodRailCarrierScac            *string                `json:"pod_rail_carrier_scac"`
	IndRailCarrierScac            *string                `json:"ind_rail_carrier_scac"`
	PodLastTrackingRequestAt      *timestamp             `json:"pod_last_tracking_request_at"`
	ShipmentLastTrackingRequestAt *timestamp             `json:"shipment_last_tracking_request_at"`
	PodRailLoadedAt               *timestamp             `json:"pod_rail_loaded_at"`
	PodRailDepartedAt             *timestamp             `json:"pod_rail_departed_at"`
	IndEtaAt                      *timestamp             `json:"ind_eta_at"`
	IndAtaAt                      *timestamp             `json:"ind_ata_at"`
	IndRailUnloadedAt             *timestamp             `json:"ind_rail_unloaded_at"`
	IndFacilityLfdOn              *timestamp             `json:"ind_facility_lfd_on"`
	ImportDeadlines               *importDeadlines       `json:"import_deadlines"`
	CurrentStatus                 model.ContainerStatus  `json:"current_status"`
}

type importDeadlines struct {
	PickupLfdTerminal *timestamp `json:"pickup_lfd_terminal"`
	PickupLfdRail     *timestamp `json:"pickup_lfd_rail"`
	PickupLfdLine     *timestamp `json:"pickup_lfd_line"`
}

func (b *builder) containerResource(c *model.Container) *Resource {
	var deadlines *importDeadlines
	if d := c.ImportDeadlines(); d != nil {
		deadlines = &importDeadlines{PickupLfdTerminal: tsp(d.PickupLfdTerminal), PickupLfdRail: tsp(d.PickupLfdRail), PickupLfdLine: tsp(d.PickupLfdLine)}
	}
	holds := []model.TerminalHold(c.HoldsAtPodTerminal)
	if holds == nil {
		holds = []model.TerminalHold{}
	}
	fees := []model.TerminalFee(c.FeesAtPodTerminal)
	if fees == nil {
		fees = []model.TerminalFee{}
	}
	return &Resource{
		ID:   c.ID,
		Type: "container",
		Attributes: containerAttributes{
			Number:                        c.Number,
			RefNumbers:                    strs(c.RefNumbers),
			EquipmentType:                 c.EquipmentType,
			EquipmentLength:               c.EquipmentLength,
			EquipmentHeight:               c.EquipmentHeight,
			WeightInLbs:                   c.WeightInLbs,
			CreatedAt:                     ts(c.CreatedAt),
			SealNumber:                    c.SealNumber,
			PickupLfd:                     tsp(c.PickupLfd),
			PickupAppointmentAt:           tsp(c.PickupAppointmentAt),
			AvailabilityKnown:             c.AvailabilityKnown,
			AvailableForPickup:            c.AvailableForPickup,
			PodArrivedAt:                  tsp(c.PodArrivedAt),
			PodDischargedAt:               tsp(c.PodDischargedAt),
			PodFullOutAt:                  tsp(c.PodFullOutAt),
			TerminalCheckedAt:             tsp(c.TerminalCheckedAt),
			PodFullOutChassisNumber:       c.PodFullOutChassisNumber,
			LocationAtPodTerminal:         c.LocationAtPodTerminal,
			FinalDestinationFullOutAt:     tsp(c.FinalDestinationFullOutAt),
			EmptyTerminatedAt:             tsp(c.EmptyTerminatedAt),
			HoldsAtPodTerminal:            holds,
			FeesAtPodTerminal:             fees,
			PodTimezone:                   c.PodTimezone,
			FinalDestinationTimezone:      c.FinalDestinationTimezone,
			EmptyTerminatedTimezone:       c.EmptyTerminatedTimezone,
			PodRailCarrierScac:            c.PodRailCarrierScac,
			IndRailCarrierScac:            c.IndRailCarrierScac,
			PodLastTrackingRequestAt:      tsp(c.PodLastTrackingRequestAt),
			ShipmentLastTrackingRequestAt: tsp(c.ShipmentLastTrackingRequestAt),
			PodRailLoadedAt:               tsp(c.PodRailLoadedAt),
			PodRailDepartedAt:             tsp(c.PodRailDepartedAt),
			IndEtaAt:                      tsp(c.IndEtaAt),
			IndAtaAt:                      tsp(c.IndAtaAt),
			IndRailUnloadedAt:             tsp(c.IndRailUnloadedAt),
			IndFacilityLfdOn:              tsp(c.IndFacilityLfdOn),
			ImportDeadlines:               deadlines,
			CurrentStatus:                 c.CurrentStatus,
		},
		Relationships: b.linkage(c, containerShape.members),
		Links:         &Links{Self: b.base + "/v2/containers/" + c.ID},
	}
}
