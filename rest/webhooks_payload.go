package rest

import (
	"context"

	"shipgraph/model"
	"shipgraph/resolve"
)

// NotificationPayload renders one webhook notification of accountID as the
// body a webhook delivery sends: a JSON:API document whose primary data is
// the webhook_notification, with its webhook linkage and reference object
// (container_updated_event, transport_event or estimated_event) and, in
// included, the reference object and its related records (the container
// or shipment, its shipment, terminal, ports), rendered by the same code
// as /v2's other resources. Links are cfg.PublicBaseURL + path, relative
// (/v2/…) when it is empty, as the public service's payloads are.
//
// It needs no request: it reads as the account's admin with loaders of its
// own. An unknown notification (its webhook deleted) is model.ENOTFOUND.
// The delivery calls it through a func value wired in server.go, so it
// imports neither rest nor resolve (docs/webhooks.md).
func NotificationPayload(ctx context.Context, res *resolve.Resolver, cfg Config, accountID, notificationID string) ([]byte, error) {
	return nil, model.Errorf(model.EUNAVAILABLE, "webhook payloads are not rendered yet")
}
