package model

import (
	"io"
	"time"

	"github.com/lib/pq"
)

// TrackingRequestType is the JSON:API type of tracking requests.
const TrackingRequestType = "tracking_request"

// TrackingRequest is a number an account asked to track (migration
// 00013): its lifecycle is pending → created (TrackedObject the shipment
// it created or found) | awaiting_manifest | failed (FailedReason) |
// tracking_stopped. It is also the reference object of the
// tracking_request.* webhook events.
//
// Shipments tracked before requests were records each got one created
// request whose id is TrackingRequestID(shipment id), the id webhook
// payloads had already used for it.
type TrackingRequest struct {
	ID        string `db:"id"`
	AccountID string `db:"account_id"`

	// The /v2 attributes, in the order /v2 writes them, the OpenAPI
	// document's (jsonapi tags: tools/attrgen).
	RequestNumber string                `db:"request_number" jsonapi:"request_number"`
	RefNumbers    pq.StringArray        `db:"ref_numbers" jsonapi:"ref_numbers,nonnull"`
	Tags          pq.StringArray        `db:"tags" jsonapi:"tags,nonnull"`
	Status        TrackingRequestStatus `db:"status" jsonapi:"status"`
	FailedReason  *string               `db:"failed_reason" jsonapi:"failed_reason"`
	RequestType   string                `db:"request_type" jsonapi:"request_type"` // bill_of_lading, booking_number, container
	Scac          string                `db:"scac" jsonapi:"scac"`
	CreatedAt     time.Time             `db:"created_at" jsonapi:"created_at"`
	UpdatedAt     time.Time             `db:"updated_at" jsonapi:"updated_at"`
	IsRetrying    bool                  `db:"is_retrying" jsonapi:"is_retrying"`
	RetryCount    int                   `db:"retry_count" jsonapi:"retry_count"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	ShipmentID   *string    `db:"shipment_id"`
	UserID       *string    `db:"user_id"`
	CustomerID   *string    `db:"customer_id"` // a party (migration 00019)
	LastPolledAt *time.Time `db:"last_polled_at"`
	NextPollAt   *time.Time `db:"next_poll_at"`
	// Staged: the create's initial custom field values, checked; written
	// with the request, never read back into the record.
	Staged []StagedCustomField `db:"-"`

	Rel TrackingRequestRel `db:"-"`
}

// TrackingRequestRel holds the tracking request's relationships.
type TrackingRequestRel struct {
	Loaded
	Shipment     *Shipment
	CustomFields []*CustomField
	Customer     *Party
}

// CustomFields are the values set on the request, by definition display
// name; CustomField picks one by its definition's api slug (nil: unset).
func (t *TrackingRequest) CustomFields() []*CustomField { return orEmpty(t.Rel.CustomFields) }
func (t *TrackingRequest) CustomField(apiSlug string) *CustomField {
	for _, f := range t.Rel.CustomFields {
		if f.APISlug == apiSlug {
			return f
		}
	}
	return nil
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
		RequestType:   "bill_of_lading",
		ShipmentID:    &s.ID,
		RequestNumber: s.BillOfLadingNumber,
		Scac:          s.ShippingLineScac,
		RefNumbers:    s.RefNumbers,
		Tags:          pq.StringArray(orEmpty([]string(s.Tags))),
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
