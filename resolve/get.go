package resolve

import (
	"context"
	"strings"

	"shipgraph/catalog"
	"shipgraph/load"
	"shipgraph/model"
)

// Reads of one record: by id through the request's by-id loader (deduped
// and cached with every other read of the request), scoped to the account
// for account data. An unknown, malformed or another account's id is the
// same not found; the caller's plan runs on what was found.

// get reads one record by id through loader and runs plan on it.
func get[T any](ctx context.Context, p *model.Principal, loader func(*load.Loaders) *load.Loader[*T], what, id string, plan *load.Plan) (*T, error) {
	_, l, err := begin(ctx, p, plan)
	if err != nil {
		return nil, err
	}
	v, err := loadByID(ctx, loader(l), id)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, model.NotFound(what)
	}
	return withPlan(ctx, v, plan)
}

// withPlan runs plan below one record.
func withPlan[T any](ctx context.Context, v *T, plan *load.Plan) (*T, error) {
	if err := load.Load(ctx, []*T{v}, plan); err != nil {
		return nil, err
	}
	return v, nil
}

// Shipment reads one of the account's shipments.
func (r *Resolver) Shipment(ctx context.Context, p *model.Principal, id string, plan *load.Plan) (*model.Shipment, error) {
	return get(ctx, p, func(l *load.Loaders) *load.Loader[*model.Shipment] { return l.ShipmentByID }, "shipment", id, plan)
}

// Container reads one of the account's containers.
func (r *Resolver) Container(ctx context.Context, p *model.Principal, id string, plan *load.Plan) (*model.Container, error) {
	return get(ctx, p, func(l *load.Loaders) *load.Loader[*model.Container] { return l.ContainerByID }, "container", id, plan)
}

// Document reads one of the account's documents.
func (r *Resolver) Document(ctx context.Context, p *model.Principal, id string, plan *load.Plan) (*model.Document, error) {
	return get(ctx, p, func(l *load.Loaders) *load.Loader[*model.Document] { return l.DocumentByID }, "document", id, plan)
}

// Definition reads one of the account's custom field definitions.
func (r *Resolver) Definition(ctx context.Context, p *model.Principal, id string, plan *load.Plan) (*model.CustomFieldDefinition, error) {
	return get(ctx, p, func(l *load.Loaders) *load.Loader[*model.CustomFieldDefinition] { return l.DefinitionByID }, "custom field definition", id, plan)
}

// EmailSubmission reads one of the account's email submissions.
func (r *Resolver) EmailSubmission(ctx context.Context, p *model.Principal, id string, plan *load.Plan) (*model.EmailSubmission, error) {
	return get(ctx, p, func(l *load.Loaders) *load.Loader[*model.EmailSubmission] { return l.EmailSubmissionByID }, "email submission", id, plan)
}

// Terminal reads a terminal (reference data).
func (r *Resolver) Terminal(ctx context.Context, p *model.Principal, id string, plan *load.Plan) (*model.Terminal, error) {
	return get(ctx, p, func(l *load.Loaders) *load.Loader[*model.Terminal] { return l.TerminalByID }, "terminal", id, plan)
}

// Port reads a port by id or by UN/LOCODE (clients of /v2/ports/{id} send
// either).
func (r *Resolver) Port(ctx context.Context, p *model.Principal, id string, plan *load.Plan) (*model.Port, error) {
	if validID(id) {
		return get(ctx, p, func(l *load.Loaders) *load.Loader[*model.Port] { return l.PortByID }, "port", id, plan)
	}
	_, l, err := principal(ctx, p)
	if err != nil {
		return nil, err
	}
	port, err := r.DB.FindPortByCode(ctx, id)
	if model.ErrorCode(err) == model.ENOTFOUND {
		return nil, model.NotFound("port")
	} else if err != nil {
		return nil, err
	}
	l.PortByID.Prime(port.ID, port)
	return port, nil
}

// MetroArea reads a metro area by id or by UN/LOCODE: the OpenAPI
// document's /metro_areas/{id} takes "the un/locode or the id", and the
// SDK's metroAreas.get passes either.
func (r *Resolver) MetroArea(ctx context.Context, p *model.Principal, id string, plan *load.Plan) (*model.MetroArea, error) {
	if validID(id) {
		return get(ctx, p, func(l *load.Loaders) *load.Loader[*model.MetroArea] { return l.MetroAreaByID }, "metro area", id, plan)
	}
	_, l, err := principal(ctx, p)
	if err != nil {
		return nil, err
	}
	m, err := r.DB.FindMetroAreaByCode(ctx, id)
	if model.ErrorCode(err) == model.ENOTFOUND {
		return nil, model.NotFound("metro area")
	} else if err != nil {
		return nil, err
	}
	l.MetroAreaByID.Prime(m.ID, m)
	return m, nil
}

// ShippingLine reads a shipping line by id or by SCAC.
func (r *Resolver) ShippingLine(ctx context.Context, p *model.Principal, id string) (*model.ShippingLine, error) {
	if _, err := authenticated(p); err != nil {
		return nil, err
	}
	if validID(id) {
		ls, err := r.DB.ShippingLinesByIDs(ctx, []string{id})
		if err != nil {
			return nil, err
		}
		if len(ls) == 0 {
			return nil, model.NotFound("shipping line")
		}
		return ls[0], nil
	}
	l, err := r.DB.FindShippingLineBySCAC(ctx, id)
	if model.ErrorCode(err) == model.ENOTFOUND {
		return nil, model.NotFound("shipping line")
	}
	return l, err
}

// CustomField reads one of the account's custom field values.
func (r *Resolver) CustomField(ctx context.Context, p *model.Principal, id string, plan *load.Plan) (*model.CustomField, error) {
	p, err := authenticated(p)
	if err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, model.NotFound("custom field")
	}
	cfs, err := r.DB.CustomFieldsByIDs(ctx, p.AccountID, []string{id})
	if err != nil {
		return nil, err
	}
	if len(cfs) == 0 {
		return nil, model.NotFound("custom field")
	}
	return withPlan(ctx, cfs[0], plan)
}

// CustomFieldsOf reads the values set on a shipment, container or tracking
// request (kind), with the users reference values name (display values)
// of the account, in display name order; not found when it is not one.
func (r *Resolver) CustomFieldsOf(ctx context.Context, p *model.Principal, kind model.CustomFieldEntityType, id string) ([]*model.CustomField, error) {
	switch kind {
	case "Container":
		c, err := r.Container(ctx, p, id, load.NewPlan(catalog.Container, "customFields.referencedUser"))
		if err != nil {
			return nil, err
		}
		return c.CustomFields(), nil
	case "TrackingRequest":
		t, err := r.TrackingRequest(ctx, p, id, load.NewPlan(catalog.TrackingRequest, "customFields.referencedUser"))
		if err != nil {
			return nil, err
		}
		return t.CustomFields(), nil
	}
	s, err := r.Shipment(ctx, p, id, load.NewPlan(catalog.Shipment, "customFields.referencedUser"))
	if err != nil {
		return nil, err
	}
	return s.CustomFields(), nil
}

// EntityCustomField reads the value of the definition api_slug set on a
// shipment, container or tracking request (kind): not found when the
// entity is not the account's or the value is not set.
func (r *Resolver) EntityCustomField(ctx context.Context, p *model.Principal, kind model.CustomFieldEntityType, id, slug string) (*model.CustomField, error) {
	all, err := r.CustomFieldsOf(ctx, p, kind, id)
	if err != nil {
		return nil, err
	}
	for _, cf := range all {
		if cf.APISlug == slug {
			return cf, nil
		}
	}
	return nil, model.Errorf(model.ENOTFOUND, "custom field %q is not set", slug)
}

// EntityCustomFields reads the values set on the entity id (a shipment or
// container id), whatever its kind: none for an unknown one.
func (r *Resolver) EntityCustomFields(ctx context.Context, p *model.Principal, id string) ([]*model.CustomField, error) {
	_, l, err := principal(ctx, p)
	if err != nil {
		return nil, err
	}
	return loadMany(ctx, l.CustomFieldsByEntityID, id)
}

// Options reads the options of one of the account's definitions, in
// position order (one statement for all: they are few).
func (r *Resolver) Options(ctx context.Context, p *model.Principal, definitionID string) ([]*model.CustomFieldOption, error) {
	def, err := r.Definition(ctx, p, definitionID, load.NewPlan(catalog.CustomFieldDefinition, "options"))
	if err != nil {
		return nil, err
	}
	return def.Options(), nil
}

// Option reads one option of one of the account's definitions (an id in
// any case): not found when either is unknown.
func (r *Resolver) Option(ctx context.Context, p *model.Principal, definitionID, optionID string) (*model.CustomFieldOption, error) {
	all, err := r.Options(ctx, p, definitionID)
	if err != nil {
		return nil, err
	}
	optionID = strings.ToLower(optionID)
	for _, o := range all {
		if o.ID == optionID {
			return o, nil
		}
	}
	return nil, model.NotFound("custom field option")
}

// DocumentTypes lists the document types a document may be set to.
func (r *Resolver) DocumentTypes(ctx context.Context, p *model.Principal) ([]*model.DocumentTypeInfo, error) {
	if _, err := authenticated(p); err != nil {
		return nil, err
	}
	return model.DocumentTypes, nil
}

// Viewer reads the account and user of the request's key.
func (r *Resolver) Viewer(ctx context.Context, p *model.Principal) (*model.Viewer, error) {
	p, l, err := principal(ctx, p)
	if err != nil {
		return nil, err
	}
	a, err := loadOne(ctx, l.AccountByID, &p.AccountID)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, model.Errorf(model.EUNAUTHENTICATED, "the account of this API key no longer exists")
	}
	u, err := loadOne(ctx, l.UserByID, p.UserID)
	if err != nil {
		return nil, err
	}
	return &model.Viewer{Account: a, User: u, Role: model.Role(p.Role)}, nil
}

// Node reads any record by id: one statement finds which table holds it
// (scoped to the account for account data), then the by-id loader of that
// type reads it, and plan runs on it; not found for an unknown id.
func (r *Resolver) Node(ctx context.Context, p *model.Principal, id string, plan *load.Plan) (model.Node, error) {
	p, l, err := begin(ctx, p, plan)
	if err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, model.NotFound("node")
	}
	typ, err := r.DB.NodeType(ctx, p.AccountID, id)
	if err != nil {
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
	case "tracking_request":
		n, err = asNode(loadByID(ctx, l.TrackingRequestByID, id))
	case "custom_field":
		n, err = first(r.DB.CustomFieldsByIDs(ctx, p.AccountID, []string{id}))
	}
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, model.NotFound("node")
	}
	if err := load.Load(ctx, []model.Node{n}, plan); err != nil {
		return nil, err
	}
	return n, nil
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
