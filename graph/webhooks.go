package graph

import (
	"context"

	"shipgraph/model"
	"shipgraph/resolve"
)

// The webhook admin queries and mutations: thin adapters over
// resolve/webhooks.go, whose rules (admin keys only, the URL, events and
// headers checks, the secret shown once) answer for both APIs.

func (r *queryResolver) webhooks(ctx context.Context, first *int, after *string, last *int, before *string, page *model.PageInput) (*model.WebhookConnection, error) {
	q := resolve.WebhookQuery{Page: pages(first, after, last, before, page), Plan: nodesPlan(ctx, "Webhook"), Cursors: selectsEdges(ctx)}
	pg, err := r.Res.Webhooks(ctx, who(ctx), q)
	if err != nil {
		return nil, err
	}
	c := &model.WebhookConnection{}
	c.Nodes, c.Edges, c.PageInfo = connection(pg, func(cursor string, n *model.Webhook) *model.WebhookEdge {
		return &model.WebhookEdge{Cursor: cursor, Node: n}
	})
	return c, nil
}

func (r *queryResolver) webhookNotifications(ctx context.Context, first *int, after *string, last *int, before *string, page *model.PageInput, filter *model.WebhookNotificationFilter) (*model.WebhookNotificationConnection, error) {
	q := resolve.WebhookNotificationQuery{Filter: valueOf(filter), Page: pages(first, after, last, before, page), Plan: nodesPlan(ctx, "WebhookNotification"), Cursors: selectsEdges(ctx)}
	pg, err := r.Res.WebhookNotifications(ctx, who(ctx), q)
	if err != nil {
		return nil, err
	}
	c := &model.WebhookNotificationConnection{Filter: q.Filter}
	c.Nodes, c.Edges, c.PageInfo = connection(pg, func(cursor string, n *model.WebhookNotification) *model.WebhookNotificationEdge {
		return &model.WebhookNotificationEdge{Cursor: cursor, Node: n}
	})
	return c, nil
}

func (r *queryResolver) webhookEvents(ctx context.Context) ([]*model.WebhookEventCategory, error) {
	cats, err := r.Res.WebhookEvents(ctx, who(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]*model.WebhookEventCategory, len(cats))
	for i := range cats {
		out[i] = &cats[i]
	}
	return out, nil
}
