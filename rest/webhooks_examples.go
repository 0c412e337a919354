package rest

import (
	"net/http"

	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// GET /v2/webhook_notifications/examples?event=… and GET /v2/webhooks/ips:
// the two remaining webhook paths the official SDK calls
// (webhookNotifications.examples, webhooks.ips). Any key may read them.
//
// An example is the notification document a delivery of the event would
// send (the records: resolve.WebhookExamples): a webhook_notification and
// its reference object in included; related records are null. Without
// event, one example per event Shipgraph raises; an event it does not
// raise is a 400.
//
// Shipgraph sends webhooks from wherever it runs and does not know its
// egress addresses: /v2/webhooks/ips lists none.

func (s *server) notificationExamples(w http.ResponseWriter, r *http.Request) {
	if _, err := parseParams(r, webhookEventList); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	want := r.URL.Query().Get("event")
	examples, err := s.res.WebhookExamples(r.Context(), who(r), want)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	if want != "" && !model.ValidWebhookEvent(want) {
		jsonapi.WriteError(w, r, jsonapi.BadParam("event", "event: %q is not an event Shipgraph raises (GET /v2/webhooks/events lists them)", want))
		return
	}
	b := s.newBuilder(s.baseURL(r), nil)
	b.withIncluded = true
	var data []*Resource
	for _, x := range examples {
		res, ref := exampleNotification(b, x)
		data = append(data, res)
		b.include(ref)
	}
	jsonapi.WriteDocument(w, r, http.StatusOK, b.document(data, nil, nil))
}

// exampleNotification renders an example: its notification and its
// reference object, to include.
func exampleNotification(b *builder, x resolve.WebhookExample) (res, ref *Resource) {
	switch v := x.Reference.(type) {
	case *model.ContainerUpdatedEvent:
		ref = containerUpdatedEventResource(b, v)
	case *model.TransportEvent:
		ref = transportEventResource(b, v)
	case *model.Document:
		ref = documentResource(b, v)
	case *model.TrackingRequest:
		ref = trackingRequestResource(b, v)
	case *model.EstimatedEvent:
		ref = estimatedEventResource(b, v)
	}
	res = notificationResource(b, x.Notification)
	res.Links = nil // nothing to fetch
	return res, ref
}

// webhookIPs answers the addresses webhooks are sent from: none known.
func (s *server) webhookIPs(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.eventCategories(w, r); !ok { // any key
		return
	}
	w.Header().Set("Content-Type", jsonapi.MediaType)
	_, _ = w.Write([]byte(`{"webhook_notification_ips":[]}` + "\n"))
}
