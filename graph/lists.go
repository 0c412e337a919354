package graph

import (
	"context"
	"strings"

	"shipgraph/load"
	"shipgraph/model"
)

// Root list resolvers: read a page through the store, prime the by-id
// loaders with what came back, load the relationships the operation
// selects on the page (plan.go), and build the connection. totalCount is a
// separate resolver so it costs a statement only when asked for.

func orderOf[F ~string](field F, dir *model.OrderDirection) model.Order {
	return order(strings.ToLower(string(field)), dir)
}

func (r *queryResolver) listShipments(ctx context.Context, a pageArgs, filter *model.ShipmentFilter, orderBy *model.ShipmentOrder) (*model.ShipmentConnection, error) {
	p, l, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	o := defaultOrder
	if orderBy != nil {
		o = orderOf(orderBy.Field, orderBy.Direction)
	}
	var f model.ShipmentFilter
	if filter != nil {
		f = *filter
	}
	req, empty, err := pageRequest(a, o)
	if err != nil {
		return nil, err
	}
	conn := &model.ShipmentConnection{Filter: f, Edges: []*model.ShipmentEdge{}, Nodes: []*model.Shipment{}, PageInfo: &model.PageInfo{}}
	if empty {
		return conn, nil
	}
	page, err := l.Store(ctx).ListShipments(ctx, p.AccountID, f, req)
	if err != nil {
		return nil, err
	}
	cursors, info := pageInfo(page, o, func(s *model.Shipment) string { return s.ID }, selectsEdges(ctx))
	conn.PageInfo, conn.Nodes = info, page.Items
	for i, s := range page.Items {
		l.ShipmentByID.Prime(s.ID, s)
		if cursors != nil {
			conn.Edges = append(conn.Edges, &model.ShipmentEdge{Cursor: cursors[i], Node: s})
		}
	}
	if err := load.Load(ctx, page.Items, nodesPlan(ctx, "Shipment")); err != nil {
		return nil, err
	}
	return conn, nil
}

func (r *queryResolver) listContainers(ctx context.Context, a pageArgs, filter *model.ContainerFilter, orderBy *model.ContainerOrder) (*model.ContainerConnection, error) {
	p, l, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	o := defaultOrder
	if orderBy != nil {
		o = orderOf(orderBy.Field, orderBy.Direction)
	}
	var f model.ContainerFilter
	if filter != nil {
		f = *filter
	}
	req, empty, err := pageRequest(a, o)
	if err != nil {
		return nil, err
	}
	conn := &model.ContainerConnection{Filter: f, Edges: []*model.ContainerEdge{}, Nodes: []*model.Container{}, PageInfo: &model.PageInfo{}}
	if empty {
		return conn, nil
	}
	page, err := l.Store(ctx).ListContainers(ctx, p.AccountID, f, req)
	if err != nil {
		return nil, err
	}
	cursors, info := pageInfo(page, o, func(c *model.Container) string { return c.ID }, selectsEdges(ctx))
	conn.PageInfo, conn.Nodes = info, page.Items
	for i, c := range page.Items {
		l.ContainerByID.Prime(c.ID, c)
		if cursors != nil {
			conn.Edges = append(conn.Edges, &model.ContainerEdge{Cursor: cursors[i], Node: c})
		}
	}
	if err := load.Load(ctx, page.Items, nodesPlan(ctx, "Container")); err != nil {
		return nil, err
	}
	return conn, nil
}

func (r *queryResolver) listDocuments(ctx context.Context, a pageArgs, filter *model.DocumentFilter, orderBy *model.DocumentOrder) (*model.DocumentConnection, error) {
	p, l, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	o := defaultOrder
	if orderBy != nil {
		o = orderOf(orderBy.Field, orderBy.Direction)
	}
	var f model.DocumentFilter
	if filter != nil {
		f = *filter
	}
	req, empty, err := pageRequest(a, o)
	if err != nil {
		return nil, err
	}
	conn := &model.DocumentConnection{Filter: f, Edges: []*model.DocumentEdge{}, Nodes: []*model.Document{}, PageInfo: &model.PageInfo{}}
	if empty {
		return conn, nil
	}
	page, err := l.Store(ctx).ListDocuments(ctx, p.AccountID, f, req)
	if err != nil {
		return nil, err
	}
	cursors, info := pageInfo(page, o, func(d *model.Document) string { return d.ID }, selectsEdges(ctx))
	conn.PageInfo, conn.Nodes = info, page.Items
	for i, d := range page.Items {
		l.DocumentByID.Prime(d.ID, d)
		if cursors != nil {
			conn.Edges = append(conn.Edges, &model.DocumentEdge{Cursor: cursors[i], Node: d})
		}
	}
	if err := load.Load(ctx, page.Items, nodesPlan(ctx, "Document")); err != nil {
		return nil, err
	}
	return conn, nil
}

func (r *queryResolver) listCustomFieldDefinitions(ctx context.Context, a pageArgs, filter *model.CustomFieldDefinitionFilter) (*model.CustomFieldDefinitionConnection, error) {
	p, l, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	// Newest first, like every other list.
	o := defaultOrder
	var f model.CustomFieldDefinitionFilter
	if filter != nil {
		f = *filter
	}
	req, empty, err := pageRequest(a, o)
	if err != nil {
		return nil, err
	}
	conn := &model.CustomFieldDefinitionConnection{Filter: f, Edges: []*model.CustomFieldDefinitionEdge{}, Nodes: []*model.CustomFieldDefinition{}, PageInfo: &model.PageInfo{}}
	if empty {
		return conn, nil
	}
	page, err := l.Store(ctx).ListCustomFieldDefinitions(ctx, p.AccountID, f, req)
	if err != nil {
		return nil, err
	}
	cursors, info := pageInfo(page, o, func(d *model.CustomFieldDefinition) string { return d.ID }, selectsEdges(ctx))
	conn.PageInfo, conn.Nodes = info, page.Items
	for i, d := range page.Items {
		l.DefinitionByID.Prime(d.ID, d)
		if cursors != nil {
			conn.Edges = append(conn.Edges, &model.CustomFieldDefinitionEdge{Cursor: cursors[i], Node: d})
		}
	}
	if err := load.Load(ctx, page.Items, nodesPlan(ctx, "CustomFieldDefinition")); err != nil {
		return nil, err
	}
	return conn, nil
}
