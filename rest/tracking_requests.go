package rest

import (
	"shipgraph/catalog"
	"shipgraph/model"
)

// Tracking requests are the reference objects of the tracking_request.*
// webhook events: one per shipment, read from it (model.TrackingRequest,
// docs/webhooks.md "Tracking requests"). They appear in notifications'
// included only; Shipgraph serves no /v2/tracking_requests path, so they
// carry no links.

var trackingRequestShape *shape

func init() {
	trackingRequestShape = shapeOf(catalog.TrackingRequest, (*builder).trackingRequestResource)
	includedShapes[trackingRequestShape.res] = trackingRequestShape
}

// trackingRequestAttributes are the public tracking_request attributes,
// in the OpenAPI document's order.
type trackingRequestAttributes struct {
	RequestNumber string                      `json:"request_number"`
	RefNumbers    []string                    `json:"ref_numbers"`
	Tags          []string                    `json:"tags"`
	Status        model.TrackingRequestStatus `json:"status"`
	FailedReason  *string                     `json:"failed_reason"`
	RequestType   string                      `json:"request_type"`
	Scac          string                      `json:"scac"`
	CreatedAt     timestamp                   `json:"created_at"`
	UpdatedAt     timestamp                   `json:"updated_at"`
	IsRetrying    bool                        `json:"is_retrying"`
	RetryCount    *int                        `json:"retry_count"`
}

func (b *builder) trackingRequestResource(t *model.TrackingRequest) *Resource {
	return &Resource{
		ID:   t.ID,
		Type: model.TrackingRequestType,
		Attributes: trackingRequestAttributes{
			RequestNumber: t.RequestNumber, RefNumbers: t.RefNumbers, Tags: strs(t.Tags), Status: t.Status,
			RequestType: t.RequestType, Scac: t.Scac, CreatedAt: ts(t.CreatedAt), UpdatedAt: ts(t.UpdatedAt),
		},
		Relationships: b.linkage(t, trackingRequestShape.members),
	}
}
