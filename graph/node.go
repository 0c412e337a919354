package graph

import (
	"context"

	"shipgraph/model"
)

// node resolves any id: one statement finds which table holds it (scoped to
// the account for account data), then the by-id loader of that type reads it.
func (r *queryResolver) node(ctx context.Context, id string) (model.Node, error) {
	p, l, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, nil
	}
	typ, err := r.DB.NodeType(ctx, p.AccountID, id)
	if model.ErrorCode(err) == model.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var n model.Node
	switch typ {
	case "account":
		n, err = asNode(loadByID(ctx, l.AccountByID, id))
	case "user":
		n, err = asNode(loadByID(ctx, l.UserByID, id))
	case "shipment":
		n, err = asNode(loadByID(ctx, l.ShipmentByID, id))
	case "container":
		n, err = asNode(loadByID(ctx, l.ContainerByID, id))
	case "port":
		n, err = asNode(loadByID(ctx, l.PortByID, id))
	case "metro_area":
		n, err = asNode(loadByID(ctx, l.MetroAreaByID, id))
	case "terminal":
		n, err = asNode(loadByID(ctx, l.TerminalByID, id))
	case "rail_terminal":
		n, err = asNode(loadByID(ctx, l.RailTerminalByID, id))
	case "document":
		n, err = asNode(loadByID(ctx, l.DocumentByID, id))
	case "email_submission":
		n, err = asNode(loadByID(ctx, l.EmailSubmissionByID, id))
	case "document_representation":
		n, err = asNode(loadByID(ctx, l.DocumentRepresentationByID, id))
	case "custom_field_definition":
		n, err = asNode(loadByID(ctx, l.DefinitionByID, id))
	case "shipping_line":
		n, err = first(r.DB.ShippingLinesByIDs(ctx, []string{id}))
	case "custom_field_option":
		n, err = first(r.DB.CustomFieldOptionsByIDs(ctx, p.AccountID, []string{id}))
	case "custom_field":
		n, err = first(r.DB.CustomFieldsByIDs(ctx, p.AccountID, []string{id}))
	}
	return n, err
}

// asNode converts a typed pointer to the Node interface, keeping nil nil
// (a typed nil inside an interface would render as an empty object).
func asNode[T any, PT interface {
	*T
	model.Node
}](v PT, err error) (model.Node, error) {
	if v == nil || err != nil {
		return nil, err
	}
	return v, nil
}

func first[T any, PT interface {
	*T
	model.Node
}](rows []PT, err error) (model.Node, error) {
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return rows[0], nil
}
