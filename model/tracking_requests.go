package model

import (
	"io"
	"time"
)

// TrackingRequestType is the JSON:API type of tracking requests.
const TrackingRequestType = "tracking_request"

// TrackingRequest is the request that tracks a shipment: the reference
// object of the tracking_request.* webhook events (docs/webhooks.md,
// "Tracking requests"). Shipgraph stores no tracking requests of its own;
// every shipment is tracked by exactly one, read from the shipment's row:
//
//   - its id is TrackingRequestID(shipment id): stable, so every
//     notification about one shipment's tracking names the same request,
//     and distinct from the shipment's;
//   - request_number is the bill of lading number, request_type
//     "bill_of_lading", scac the shipping line's;
//   - status is "tracking_stopped" while the shipment's tracking is
//     stopped, "created" otherwise (the shipment exists, so the request
//     succeeded); updated_at is when tracking stopped, else the shipment's
//     updated_at.
type TrackingRequest struct {
	ID            string
	AccountID     string
	ShipmentID    string
	RequestNumber string
	Scac          string
	RefNumbers    []string
	Tags          []string
	Status        TrackingRequestStatus
	CreatedAt     time.Time
	UpdatedAt     time.Time

	Rel TrackingRequestRel
}

// TrackingRequestRel holds the tracking request's relationships.
type TrackingRequestRel struct {
	Loaded
	Shipment *Shipment
}

func (t *TrackingRequest) Loads() *Loaded { return &t.Rel.Loaded }

// TrackedObject is the shipment the request tracks (null when the plan
// did not load it).
func (t *TrackingRequest) TrackedObject() *Shipment { return t.Rel.Shipment }

func (TrackingRequest) IsWebhookReferenceObject() {}

// TrackingRequestOf is the tracking request of shipment s.
func TrackingRequestOf(s *Shipment) *TrackingRequest {
	t := &TrackingRequest{
		ID:            TrackingRequestID(s.ID),
		AccountID:     s.AccountID,
		ShipmentID:    s.ID,
		RequestNumber: s.BillOfLadingNumber,
		Scac:          s.ShippingLineScac,
		RefNumbers:    s.RefNumbers,
		Tags:          orEmpty([]string(s.Tags)),
		Status:        TrackingCreated,
		CreatedAt:     s.CreatedAt,
		UpdatedAt:     s.UpdatedAt,
	}
	if s.LineTrackingStoppedAt != nil {
		t.Status = TrackingStopped
		t.UpdatedAt = *s.LineTrackingStoppedAt
	}
	return t
}

// trackingRequestIDMask turns a shipment id into its tracking request's id
// and back (XOR is its own inverse), keeping the UUID's version and
// variant bits; it differs from eventIDMask, so the ids of tracking
// requests, events, notifications and shipments never meet.
var trackingRequestIDMask = [16]byte{0x3b, 0xe4, 0x71, 0xc9, 0x52, 0x0d, 0x0a, 0x8e, 0x0f, 0x26, 0xd8, 0x93, 0x6c, 0x17, 0x4f, 0xa2}

// TrackingRequestID is the id of the tracking request of shipment id, and
// the shipment id of a tracking request's id. An id that is not a UUID is
// returned as is.
func TrackingRequestID(id string) string { return maskID(id, &trackingRequestIDMask) }

// TrackingRequestStatus is a tracking request's state (the public values;
// Shipgraph's requests are only ever created or tracking_stopped).
type TrackingRequestStatus string

const (
	TrackingCreated TrackingRequestStatus = "created"
	TrackingStopped TrackingRequestStatus = "tracking_stopped"
)

// TrackingRequestStatuses are the public tracking request states.
var TrackingRequestStatuses = newEnumSet("TrackingRequestStatus", "pending", "awaiting_manifest", "created", "failed", "tracking_stopped")

func (e TrackingRequestStatus) MarshalGQL(w io.Writer) { TrackingRequestStatuses.marshal(w, string(e)) }
func (e *TrackingRequestStatus) UnmarshalGQL(v any) error {
	s, err := TrackingRequestStatuses.unmarshal(v)
	*e = TrackingRequestStatus(s)
	return err
}

// RequestType is always "bill_of_lading": shipments are tracked by their
// bill of lading.
func (t *TrackingRequest) RequestType() string { return "bill_of_lading" }
