package graph

import (
	"context"

	"shipgraph/model"
)

// Reference data reads of issue 8: shipping lines and metro areas, shared
// by every account (a key is still needed).

// shippingLineOrder lists shipping lines by SCAC: they are reference data
// created together, whose age says nothing.
var shippingLineOrder = model.Order{Field: "scac"}

func (r *queryResolver) listShippingLines(ctx context.Context, a pageArgs) (*model.ShippingLineConnection, error) {
	if _, err := model.RequirePrincipal(ctx); err != nil {
		return nil, err
	}
	req, empty, err := pageRequest(a, shippingLineOrder)
	if err != nil {
		return nil, err
	}
	conn := &model.ShippingLineConnection{Edges: []*model.ShippingLineEdge{}, Nodes: []*model.ShippingLine{}, PageInfo: &model.PageInfo{}}
	if empty {
		return conn, nil
	}
	page, err := r.DB.ListShippingLines(ctx, req)
	if err != nil {
		return nil, err
	}
	cursors, info := pageInfo(page, shippingLineOrder, func(l *model.ShippingLine) string { return l.ID }, selectsEdges(ctx))
	conn.PageInfo, conn.Nodes = info, page.Items
	for i, l := range page.Items {
		if cursors != nil {
			conn.Edges = append(conn.Edges, &model.ShippingLineEdge{Cursor: cursors[i], Node: l})
		}
	}
	return conn, nil
}

// shippingLine reads a line by id or by SCAC; not found is null.
func (r *queryResolver) shippingLine(ctx context.Context, id string) (*model.ShippingLine, error) {
	if _, err := model.RequirePrincipal(ctx); err != nil {
		return nil, err
	}
	if validID(id) {
		ls, err := r.DB.ShippingLinesByIDs(ctx, []string{id})
		if err != nil || len(ls) == 0 {
			return nil, err
		}
		return ls[0], nil
	}
	l, err := r.DB.FindShippingLineBySCAC(ctx, id)
	if model.ErrorCode(err) == model.ENOTFOUND {
		return nil, nil
	}
	return l, err
}
