package model

import (
	"strings"
	"time"
)

// The tracking request API's inputs: the list filter, and what
// a create and an update take.

// TrackingRequestFilter narrows a tracking request list. Zero values mean
// "no filter".
type TrackingRequestFilter struct {
	Statuses      []TrackingRequestStatus
	RequestTypes  []string
	Scacs         []string
	RequestNumber string   // the number exactly, compared normalised
	Search        string   // a request number prefix or a reference number (q)
	Tags          []string // all of these tags
	ShipmentIDs   []string
	CreatedFrom   *time.Time
	CreatedTo     *time.Time
	UpdatedFrom   *time.Time
	UpdatedTo     *time.Time
}

// The other tracking request states (TrackingCreated and TrackingStopped
// are beside the type).
const (
	TrackingPending          TrackingRequestStatus = "pending"
	TrackingAwaitingManifest TrackingRequestStatus = "awaiting_manifest"
	TrackingFailed           TrackingRequestStatus = "failed"
)

// TrackingRequestTypes are the kinds of number a request tracks.
var TrackingRequestTypes = []string{"bill_of_lading", "booking_number", "container"}

// NormalizeTrackingNumber is how request numbers are stored and compared:
// upper case, without spaces or dashes.
func NormalizeTrackingNumber(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '\t', '\n', '\r':
			return -1
		}
		return r
	}, strings.ToUpper(strings.TrimSpace(s)))
}

// TrackingRequestInput is a new tracking request (GraphQL's input; /v2
// builds the same).
type TrackingRequestInput struct {
	RequestType   string   `json:"requestType"`
	RequestNumber string   `json:"requestNumber"`
	Scac          string   `json:"scac"`
	RefNumbers    []string `json:"refNumbers"`
	Tags          []string `json:"tags"`
	CustomerID    *string  `json:"customerId"` // a party of the account
	// AutoDetectScac (/v2's auto_detect_vocc_scac): with no Scac, take the
	// shipping line infer_number selects for the number.
	AutoDetectScac bool `json:"autoDetectVoccScac"`
	// InitialCustomFields (/v2's initial_custom_fields): values for the
	// shipment and containers the request's poll creates.
	InitialCustomFields *InitialCustomFieldsInput `json:"initialCustomFields"`
}

// InitialCustomFieldsInput are custom field values staged on a tracking
// request: Shipment's for the shipment it finds, Containers' for its
// containers.
type InitialCustomFieldsInput struct {
	Shipment   []*InitialCustomFieldInput `json:"shipment"`
	Containers []*InitialCustomFieldInput `json:"containers"`
}

// InitialCustomFieldInput is one staged value: the definition's api_slug,
// the value, and for a container value the container's number (empty:
// every container of the shipment).
type InitialCustomFieldInput struct {
	APISlug string  `json:"apiSlug"`
	Value   JSON    `json:"value"`
	Number  *string `json:"number"`
}

// StagedCustomField is an InitialCustomFieldInput checked against the
// account's definitions, as the request stores it.
type StagedCustomField struct {
	DefinitionID string `json:"definition_id"`
	Entity       string `json:"entity"` // shipment or container
	Value        JSON   `json:"value"`
	Number       string `json:"number,omitempty"`
}

// TrackingRequestPatch changes a tracking request; an omitted member is
// kept.
type TrackingRequestPatch struct {
	RefNumbers Optional[[]string]
	Tags       Optional[[]string]
}

// InferredNumber is what infer_number tells of a number: its kind, whether
// it is valid, and the shipping lines it may belong to.
type InferredNumber struct {
	Number     string
	NumberType string // container, bill_of_lading, booking
	Validation NumberValidation
	Decision   string // auto_select, needs_confirmation, no_prediction
	Selected   *ScacCandidate
	Candidates []*ScacCandidate
}

// NumberValidation is infer_number's check of a number (json names: /v2's
// validation member).
type NumberValidation struct {
	IsValid          *bool   `json:"is_valid"`
	Type             string  `json:"type"` // container or shipment
	CheckDigitPassed *bool   `json:"check_digit_passed"`
	ParsedNumber     *string `json:"parsed_number"`
	Reason           *string `json:"reason"`
}

// ScacCandidate is a shipping line a number may belong to (json names:
// /v2's shipping_line candidates).
type ScacCandidate struct {
	Scac       string  `json:"scac"`
	Name       string  `json:"name"`
	Confidence float64 `json:"confidence"`
}

func (TrackingRequest) IsNode()         {}
func (t TrackingRequest) GetID() string { return t.ID }

// TrackingRequestConnection is a page of tracking requests.
type TrackingRequestConnection struct {
	Edges    []*TrackingRequestEdge
	Nodes    []*TrackingRequest
	PageInfo *PageInfo
	Filter   TrackingRequestFilter
}

type TrackingRequestEdge struct {
	Cursor string
	Node   *TrackingRequest
}
