package model

import (
	"time"

	"github.com/lib/pq"
)

// Search entity types: what a search result is (the OpenAPI's
// search result types; a container is a "cargo" there).
const (
	SearchShipment        = "shipment"
	SearchCargo           = "cargo"
	SearchTrackingRequest = "tracking_request"
)

// SearchLimit is the most results one search answers (the OpenAPI: "up to
// 25 results").
const SearchLimit = 25

// SearchQueryMaxLength is the longest search input, in characters.
const SearchQueryMaxLength = 200

// SearchResult is one record a search matched: a shipment, a container
// (cargo) or a tracking request, with what a result list shows of it.
// Fields that do not apply to the entity type are nil.
type SearchResult struct {
	ID                    string         `db:"id"`
	EntityType            string         `db:"entity_type" jsonapi:"entity_type"` // SearchShipment, SearchCargo, SearchTrackingRequest
	Number                string         `db:"number" jsonapi:"number"`
	ShipmentID            *string        `db:"shipment_id" jsonapi:"shipment_id"`
	Scac                  *string        `db:"scac" jsonapi:"scac"`
	PortOfLadingName      *string        `db:"port_of_lading_name" jsonapi:"port_of_lading_name"`
	PortOfDischargeName   *string        `db:"port_of_discharge_name" jsonapi:"port_of_discharge_name"`
	ContainersCount       *int           `db:"containers_count" jsonapi:"containers_count"`
	TrackingStopped       *bool          `db:"tracking_stopped" jsonapi:"tracking_stopped"`
	TrackingStoppedReason *string        `db:"tracking_stopped_reason" jsonapi:"tracking_stopped_reason"`
	Status                *string        `db:"status" jsonapi:"status"`
	FailedReason          *string        `db:"failed_reason" jsonapi:"failed_reason"`
	RefNumbers            pq.StringArray `db:"ref_numbers" jsonapi:"ref_numbers,nonnull"`
	CreatedAt             time.Time      `db:"created_at" jsonapi:"created_at"`
	UpdatedAt             time.Time      `db:"updated_at" jsonapi:"updated_at"`
}
