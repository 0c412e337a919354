package graph

import (
	"context"

	"shipgraph/model"
	"shipgraph/resolve"
)

// Tracking requests: thin adapters over
// resolve/tracking_requests.go, whose rules answer for both APIs.

func (r *queryResolver) trackingRequests(ctx context.Context, first *int, after *string, last *int, before *string, page *model.PageInput, filter *model.TrackingRequestFilter, orderBy *model.TrackingRequestOrder) (*model.TrackingRequestConnection, error) {
	q := resolve.TrackingRequestQuery{Filter: valueOf(filter), Page: pages(first, after, last, before, page), Plan: nodesPlan(ctx, "TrackingRequest"), Cursors: selectsEdges(ctx)}
	if orderBy != nil {
		q.Order = orderOf(orderBy.Field, orderBy.Direction)
	}
	pg, err := r.Res.TrackingRequests(ctx, who(ctx), q)
	if err != nil {
		return nil, err
	}
	c := &model.TrackingRequestConnection{Filter: q.Filter}
	c.Nodes, c.Edges, c.PageInfo = connection(pg, func(cursor string, n *model.TrackingRequest) *model.TrackingRequestEdge {
		return &model.TrackingRequestEdge{Cursor: cursor, Node: n}
	})
	return c, nil
}

func (r *mutationResolver) createTrackingRequest(ctx context.Context, input model.TrackingRequestInput) (*model.TrackingRequest, error) {
	v, err := r.Res.CreateTrackingRequest(ctx, who(ctx), resolve.CreateTrackingRequest{Input: input})
	return withPlan(ctx, v, err)
}

func (r *mutationResolver) updateTrackingRequest(ctx context.Context, id string, input model.TrackingRequestPatch) (*model.TrackingRequest, error) {
	v, err := r.Res.UpdateTrackingRequest(ctx, who(ctx), resolve.UpdateTrackingRequest{ID: id, Patch: input})
	return withPlan(ctx, v, err)
}

// orEmptyList is a list that is never null.
func orEmptyList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
