package rest

import (
	"net/http"

	"shipgraph/model"
)

// GET /v2/search (the OpenAPI's searchAll): one ranked
// search over the account's shipments, containers ("cargo") and tracking
// requests, answered in the OpenAPI's shape: {"data": [{id, type,
// attributes}]}, application/json, no links or meta. resolve.Search holds
// the rules; the query parameter is required (400 without it).

var searchEndpoint = endpoint{serializer: "V2::SearchSerializer", filters: []string{"query"}}

// searchAttributes are a search result's attributes (hand-written: not a
// catalogue resource, so not generated from model tags).
type searchAttributes struct {
	EntityType            string    `json:"entity_type"`
	Number                string    `json:"number"`
	ShipmentID            *string   `json:"shipment_id"`
	Scac                  *string   `json:"scac"`
	PortOfLadingName      *string   `json:"port_of_lading_name"`
	PortOfDischargeName   *string   `json:"port_of_discharge_name"`
	ContainersCount       *int      `json:"containers_count"`
	TrackingStopped       *bool     `json:"tracking_stopped"`
	TrackingStoppedReason *string   `json:"tracking_stopped_reason"`
	Status                *string   `json:"status"`
	FailedReason          *string   `json:"failed_reason"`
	RefNumbers            []string  `json:"ref_numbers"`
	CreatedAt             timestamp `json:"created_at"`
	UpdatedAt             timestamp `json:"updated_at"`
}

type searchResource struct {
	ID         string           `json:"id"`
	Type       string           `json:"type"`
	Attributes searchAttributes `json:"attributes"`
}

func (s *server) search(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, searchEndpoint)
	var found []*model.SearchResult
	if err == nil {
		found, err = s.res.Search(r.Context(), who(r), p.filter("query"))
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	data := make([]searchResource, len(found))
	for i, x := range found {
		refs := []string(x.RefNumbers)
		if refs == nil {
			refs = []string{}
		}
		data[i] = searchResource{ID: x.ID, Type: x.EntityType, Attributes: searchAttributes{
			EntityType: x.EntityType, Number: x.Number, ShipmentID: x.ShipmentID, Scac: x.Scac,
			PortOfLadingName: x.PortOfLadingName, PortOfDischargeName: x.PortOfDischargeName,
			ContainersCount: x.ContainersCount, TrackingStopped: x.TrackingStopped,
			TrackingStoppedReason: x.TrackingStoppedReason, Status: x.Status, FailedReason: x.FailedReason,
			RefNumbers: refs, CreatedAt: ts(x.CreatedAt), UpdatedAt: ts(x.UpdatedAt)}}
	}
	writeJSON(w, http.StatusOK, struct {
		Data []searchResource `json:"data"`
	}{data})
}
