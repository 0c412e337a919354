package rest

import (
	"net/http"
	"time"

	"shipgraph/model"
)

// GET /v2/webhook_notifications/examples?event=… and GET /v2/webhooks/ips:
// the two remaining webhook paths the official SDK calls
// (webhookNotifications.examples, webhooks.ips). Any key may read them.
//
// An example is the notification document a delivery of the event would
// send, made up rather than read: a webhook_notification with fixed ids and
// times, and its reference object (with example attributes) in included;
// related records are null. Without event, one example per event
// Shipgraph raises; an event it does not raise is a 400.
//
// Shipgraph sends webhooks from wherever it runs and does not know its
// egress addresses: /v2/webhooks/ips lists none.

var exampleTime = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// exampleIDs are the fixed ids of the examples, by event.
func exampleID(i int) string {
	const base = "00000000-0000-4000-8000-0000000000"
	return base + string(rune('0'+i/10)) + string(rune('0'+i%10))
}

// exampleShipment is the shipment of the i-th example: the tracking
// request examples' (one each, so that each shows its own status).
func exampleShipment(i int) *model.Shipment {
	return &model.Shipment{ID: "00000000-0000-4000-8000-0000000001" + exampleID(i)[34:], BillOfLadingNumber: "MEDUXA123456",
		ShippingLineScac: "MSCU", CreatedAt: exampleTime.Add(-72 * time.Hour), UpdatedAt: exampleTime}
}

// exampleAttributes are the reference object's attributes of an example.
var exampleAttributes = map[string]model.JSON{
	model.ContainerUpdatedEventType: model.JSON(`{"changeset":{"pickup_lfd":[null,"2026-01-05T00:00:00Z"]},"data_source":"terminal","timestamp":"2026-01-01T12:00:00Z","timezone":"America/Los_Angeles"}`),
	model.TransportEventType:        model.JSON(`{"created_at":"2026-01-01T12:00:00Z","data_source":"terminal","location_locode":"USLAX","timestamp":"2026-01-01T12:00:00Z","timezone":"America/Los_Angeles","voyage_number":null}`),
	model.EstimatedEventType:        model.JSON(`{"created_at":"2026-01-01T12:00:00Z","data_source":"shipping_line","estimated_timestamp":"2026-01-09T06:00:00Z","location_locode":"USLAX","timezone":"America/Los_Angeles","voyage_number":null}`),
}

func (s *server) notificationExamples(w http.ResponseWriter, r *http.Request) {
	cats, ok := s.eventCategories(w, r)
	if !ok {
		return
	}
	want := r.URL.Query().Get("event")
	if want != "" && !model.ValidWebhookEvent(want) {
		WriteError(w, r, badParam("event", "event: %q is not an event Shipgraph raises (GET /v2/webhooks/events lists them)", want))
		return
	}
	b := s.newBuilder(s.baseURL(r), nil)
	b.withIncluded = true
	var data []*Resource
	i := 0
	for _, c := range cats {
		for _, e := range c.Events {
			i++
			if want != "" && e.Name != want {
				continue
			}
			res, ref := b.exampleNotification(i, e.Name, e.ObjectType)
			data = append(data, res)
			b.include(ref)
		}
	}
	writeDocument(w, r, http.StatusOK, b.document(data, nil, nil))
}

// exampleNotification is the example notification of the i-th event
// (name, whose reference object is of objectType) and its reference
// object, to include: what GET /v2/webhook_notifications/examples lists
// and what POST /v2/webhooks/trigger sends.
func (b *builder) exampleNotification(i int, name, objectType string) (res, ref *Resource) {
	n := &model.WebhookNotification{ID: exampleID(i), Event: name, DeliveryStatus: model.DeliveryPending, CreatedAt: exampleTime}
	ev := model.WebhookEvent{ID: model.WebhookEventID(n.ID), NotificationID: n.ID, Event: name, Payload: exampleAttributes[objectType], CreatedAt: exampleTime}
	switch objectType {
	case model.ContainerUpdatedEventType:
		ref = b.containerUpdatedEventResource(&model.ContainerUpdatedEvent{WebhookEvent: ev})
	case model.TransportEventType:
		ref = b.transportEventResource(&model.TransportEvent{WebhookEvent: ev})
	case model.DocumentObjectType:
		d := exampleDocument(i, name)
		n.ReferenceType, n.ReferenceID = model.DocumentObjectType, d.ID
		ref = b.documentResource(d)
	case model.TrackingRequestType:
		t := exampleTrackingRequest(i, name)
		n.ReferenceType, n.ReferenceID = model.TrackingRequestType, t.ID
		ref = b.trackingRequestResource(t)
	default:
		ref = b.estimatedEventResource(&model.EstimatedEvent{WebhookEvent: ev})
	}
	res = b.notificationResource(n)
	res.Links = nil // nothing to fetch
	return res, ref
}

// webhookIPs answers the addresses webhooks are sent from: none known.
func (s *server) webhookIPs(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.eventCategories(w, r); !ok { // any key
		return
	}
	w.Header().Set("Content-Type", MediaType)
	_, _ = w.Write([]byte(`{"webhook_notification_ips":[]}` + "\n"))
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
