package resolve

import (
	"context"
	"time"

	"shipgraph/model"
)

// Webhook notification examples: the notification a delivery of an event
// would send, made up rather than read, with fixed ids and times, and its
// reference object in the state the event leaves it in. What
// GET /v2/webhook_notifications/examples lists and POST /v2/webhooks/trigger
// sends; any key may read them.

// WebhookExample is the example of one event: its notification and its
// reference object, one of *model.ContainerUpdatedEvent,
// *model.TransportEvent, *model.EstimatedEvent, *model.Document or
// *model.TrackingRequest. Related records are empty.
type WebhookExample struct {
	Notification *model.WebhookNotification
	Reference    any
}

// WebhookExamples returns one example per event Shipgraph raises, in the
// order of WebhookEvents; event, when not "", keeps that event's only.
func (r *Resolver) WebhookExamples(ctx context.Context, p *model.Principal, event string) ([]WebhookExample, error) {
	cats, err := r.WebhookEvents(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []WebhookExample
	i := 0
	for _, c := range cats {
		for _, e := range c.Events {
			i++
			if event == "" || e.Name == event {
				out = append(out, webhookExample(i, e.Name, e.ObjectType))
			}
		}
	}
	return out, nil
}

var exampleTime = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// exampleID is the fixed id of the i-th example.
func exampleID(i int) string {
	const base = "00000000-0000-4000-8000-0000000000"
	return base + string(rune('0'+i/10)) + string(rune('0'+i%10))
}

// exampleAttributes are the reference object's attributes of an example
// whose reference is an event payload, by object type.
var exampleAttributes = map[string]model.JSON{
	model.ContainerUpdatedEventType: model.JSON(`{"changeset":{"pickup_lfd":[null,"2026-01-05T00:00:00Z"]},"data_source":"terminal","timestamp":"2026-01-01T12:00:00Z","timezone":"America/Los_Angeles"}`),
	model.TransportEventType:        model.JSON(`{"created_at":"2026-01-01T12:00:00Z","data_source":"terminal","location_locode":"USLAX","timestamp":"2026-01-01T12:00:00Z","timezone":"America/Los_Angeles","voyage_number":null}`),
	model.EstimatedEventType:        model.JSON(`{"created_at":"2026-01-01T12:00:00Z","data_source":"shipping_line","estimated_timestamp":"2026-01-09T06:00:00Z","location_locode":"USLAX","timezone":"America/Los_Angeles","voyage_number":null}`),
}

// webhookExample is the example of the i-th event (name, whose reference
// object is of objectType).
func webhookExample(i int, name, objectType string) WebhookExample {
	n := &model.WebhookNotification{ID: exampleID(i), Event: name, DeliveryStatus: model.DeliveryPending, CreatedAt: exampleTime}
	ev := model.WebhookEvent{ID: model.WebhookEventID(n.ID), NotificationID: n.ID, Event: name, Payload: exampleAttributes[objectType], CreatedAt: exampleTime}
	x := WebhookExample{Notification: n}
	switch objectType {
	case model.ContainerUpdatedEventType:
		x.Reference = &model.ContainerUpdatedEvent{WebhookEvent: ev}
	case model.TransportEventType:
		x.Reference = &model.TransportEvent{WebhookEvent: ev}
	case model.DocumentObjectType:
		d := exampleDocument(i, name)
		n.ReferenceType, n.ReferenceID = model.DocumentObjectType, d.ID
		x.Reference = d
	case model.TrackingRequestType:
		t := exampleTrackingRequest(i, name)
		n.ReferenceType, n.ReferenceID = model.TrackingRequestType, t.ID
		x.Reference = t
	default:
		x.Reference = &model.EstimatedEvent{WebhookEvent: ev}
	}
	return x
}

// exampleShipment is the shipment of the i-th example: the tracking
// request examples' (one each, so that each shows its own status).
func exampleShipment(i int) *model.Shipment {
	return &model.Shipment{ID: "00000000-0000-4000-8000-0000000001" + exampleID(i)[34:], BillOfLadingNumber: "MEDUXA123456",
		ShippingLineScac: "MSCU", CreatedAt: exampleTime.Add(-72 * time.Hour), UpdatedAt: exampleTime}
}

// exampleTrackingRequest is the request of example i in the state event
// leaves it in: created (succeeded) or tracking_stopped with its shipment,
// failed (not found) or awaiting_manifest without one.
func exampleTrackingRequest(i int, event string) *model.TrackingRequest {
	t := model.TrackingRequestOf(exampleShipment(i))
	t.UpdatedAt = exampleTime
	switch event {
	case "tracking_request.tracking_stopped":
		t.Status = model.TrackingStopped
	case "tracking_request.failed":
		reason := "not_found"
		t.Status, t.FailedReason, t.ShipmentID = model.TrackingFailed, &reason, nil
	case "tracking_request.awaiting_manifest":
		t.Status, t.ShipmentID = model.TrackingAwaitingManifest, nil
	}
	return t
}

// exampleDocument is the document of example i as event leaves it:
// classified (extracted) or as uploaded (extraction_failed). Its
// relationships are empty.
func exampleDocument(i int, event string) *model.Document {
	ct, size := "application/pdf", int64(48213)
	d := &model.Document{ID: "00000000-0000-4000-8000-0000000002" + exampleID(i)[34:], Name: "Bill of lading MEDUXA123456",
		DocumentType: "bill_of_lading", Source: "api", FileName: "BL_MEDUXA123456.pdf", FileContentType: &ct, FileSizeBytes: &size,
		CreatedAt: exampleTime.Add(-time.Minute), UpdatedAt: exampleTime}
	notes := "rules: bill_of_lading scored 14 (title \"bill of lading\", \"shipper\", \"consignee\")"
	d.ClassificationNotes = &notes
	d.Rel.Shipments, d.Rel.Cargos = []*model.Shipment{}, []*model.Container{}
	if event == "document.extraction_failed" {
		ct = "image/jpeg"
		d.DocumentType, d.ClassificationNotes, d.FileName = "other", nil, "scan.jpg"
	}
	return d
}
