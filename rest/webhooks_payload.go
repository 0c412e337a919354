package rest

import (
	"context"
	"encoding/json"
	"strings"

	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// payloadIncludes are what a webhook payload Includes: the reference
// object and its related records (the container and its shipment, or the
// shipment, the terminal and the port; for a tracking request, the
// shipment it tracks and its containers).
var payloadIncludes = map[string]bool{
	"reference_object":                           true,
	"reference_object.container":                 true,
	"reference_object.container.shipment":        true,
	"reference_object.shipment":                  true,
	"reference_object.terminal":                  true,
	"reference_object.location":                  true,
	"reference_object.port":                      true,
	"reference_object.tracked_object":            true,
	"reference_object.tracked_object.containers": true,
}

// NotificationPayload renders one webhook notification of accountID as the
// body a webhook delivery sends: a JSON:API document whose primary data is
// the webhook_notification, with its webhook linkage and reference object
// (container_updated_event, transport_event, estimated_event or
// tracking_request) and, in
// included, the reference object and its related records (the container
// or shipment, its shipment, terminal, port), rendered by the same code
// as /v2's other resources. Links are cfg.PublicBaseURL + path, relative
// (/v2/…) when it is empty, as the public service's payloads are.
//
// It needs no request: it reads as the account's admin with loaders of its
// own. An unknown notification (its webhook deleted) is model.ENOTFOUND.
// The delivery calls it through a func value wired in app/background.go, so it
// imports neither rest nor resolve (docs/webhooks.md).
func NotificationPayload(ctx context.Context, res *resolve.Resolver, cfg Config, accountID, notificationID string) ([]byte, error) {
	ctx, who := res.AsAccount(ctx, accountID)
	p := &params{Query: &jsonapi.Query{Include: payloadIncludes}}
	// The plan of the payload's relationships; every column is read.
	plan := &resolve.Plan{}
	planRels(plan, notificationShape, includesOf(p))
	n, err := res.WebhookNotification(ctx, who, model.NormalizeID(notificationID), plan)
	if err != nil {
		return nil, err
	}
	s := &server{res: res, cfg: cfg}
	b := s.newBuilder(strings.TrimRight(cfg.PublicBaseURL, "/"), p)
	data, err := renderAll(b, ctx, []*model.WebhookNotification{n}, p, notificationShape)
	if err != nil {
		return nil, err
	}
	asOfEvent(b.included, n)
	return b.document(data[0], &jsonapi.Links{Self: data[0].Links.Self}, nil).AppendJSON(nil)
}

// asOfEvent gives the tracking request a tracking_request.* notification
// is about the attributes its event froze (model.WebhookNotification's
// RefState): the request is read when the payload is rendered, maybe
// after later transitions (a request that succeeded and stopped in one
// poll is tracking_stopped by then, and its succeeded notification must
// still say created).
func asOfEvent(included []*Resource, n *model.WebhookNotification) {
	if len(n.RefState) == 0 {
		return
	}
	key := n.EventKey(model.TrackingRequestType)
	if key == nil {
		return
	}
	var state map[string]json.RawMessage
	if err := json.Unmarshal(n.RefState, &state); err != nil {
		return
	}
	for _, r := range included {
		if r.Type != model.TrackingRequestType || r.ID != *key {
			continue
		}
		a, ok := r.Attributes.(trackingRequestAttributes)
		if !ok {
			return
		}
		if v, ok := state["status"]; ok {
			var st string
			if json.Unmarshal(v, &st) == nil && st != "" {
				a.Status = model.TrackingRequestStatus(st)
			}
		}
		if v, ok := state["failed_reason"]; ok {
			var fr *string
			if json.Unmarshal(v, &fr) == nil {
				a.FailedReason = fr
			}
		}
		r.Attributes = a
		return
	}
}
