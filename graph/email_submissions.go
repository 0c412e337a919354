package graph

import (
	"context"

	"shipgraph/load"
	"shipgraph/model"
)

// Email submissions as a list of their own (issue 8).

func (r *queryResolver) listEmailSubmissions(ctx context.Context, a pageArgs) (*model.EmailSubmissionConnection, error) {
	p, l, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	o := defaultOrder
	req, empty, err := pageRequest(a, o)
	if err != nil {
		return nil, err
	}
	conn := &model.EmailSubmissionConnection{Edges: []*model.EmailSubmissionEdge{}, Nodes: []*model.EmailSubmission{}, PageInfo: &model.PageInfo{}}
	if empty {
		return conn, nil
	}
	page, err := r.DB.ListEmailSubmissions(ctx, p.AccountID, req)
	if err != nil {
		return nil, err
	}
	cursors, info := pageInfo(page, o, func(e *model.EmailSubmission) string { return e.ID }, selectsEdges(ctx))
	conn.PageInfo, conn.Nodes = info, page.Items
	for i, e := range page.Items {
		l.EmailSubmissionByID.Prime(e.ID, e)
		if cursors != nil {
			conn.Edges = append(conn.Edges, &model.EmailSubmissionEdge{Cursor: cursors[i], Node: e})
		}
	}
	if err := load.Load(ctx, page.Items, nodesPlan(ctx, "EmailSubmission")); err != nil {
		return nil, err
	}
	return conn, nil
}
