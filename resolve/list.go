package resolve

import (
	"context"

	"shipgraph/db"
	"shipgraph/load"
	"shipgraph/model"
)

// Lists: one generic resolver over a small descriptor per resource (Kind).
// A list reads one page through the store, primes the by-id loader with
// what came back, and runs the caller's load plan on the page; the count
// of the whole (filtered) list is a separate call, so it costs a statement
// only when asked for.

// PageArgs are a list's page arguments, named as both APIs' page inputs
// are: a numbered page, or first/last rows after/before a keyset cursor.
// Errors name the argument in Parameter ("first", "page[size]" …).
type PageArgs struct {
	First, Last   *int
	After, Before *string
	Page          *model.PageInput
}

// Query is a list query: the filter, the order (nil: the list's default),
// the page, and the load plan to run on the page (nil: none). With
// Cursors, the page carries every row's cursor, not only the first's and
// last's (each costs an encoding).
type Query[F any] struct {
	Filter  F
	Order   *model.Order
	Page    PageArgs
	Plan    *load.Plan
	Cursors bool
}

// The queries of each list.
type (
	ShipmentQuery        = Query[model.ShipmentFilter]
	ContainerQuery       = Query[model.ContainerFilter]
	DocumentQuery        = Query[model.DocumentFilter]
	DefinitionQuery      = Query[model.CustomFieldDefinitionFilter]
	CustomFieldQuery     = Query[model.CustomFieldFilter]
	EmailSubmissionQuery = Query[NoFilter]
	ShippingLineQuery    = Query[NoFilter]
)

// NoFilter is the filter of a list that takes none.
type NoFilter struct{}

// Page is one page of a list, in list order.
type Page[T any] struct {
	Items                []T
	HasNext, HasPrevious bool
	// Start and End are the cursors of the first and last rows ("" when
	// the page is empty); Cursors has every row's when the query asked.
	Start, End string
	Cursors    []string
}

// Kind describes one list: how the store reads and counts it, its default
// order, the id of a record and the by-id loader its pages prime.
type Kind[T, F any] struct {
	order model.Order
	// narrow reads through the request's store narrowed to the columns
	// it selects (load.Loaders.Store); otherwise every column is read.
	narrow bool
	list   func(*db.DB, context.Context, string, F, model.PageRequest) (*model.Page[T], error)
	count  func(*db.DB, context.Context, string, F) (int, error)
	id     func(T) string
	// prime, when set, is the by-id loader the rows of a page prime.
	prime func(*load.Loaders) *load.Loader[T]
}

// defaultOrder is the order of lists when the client gives none: newest
// first, ties broken by id.
var defaultOrder = model.Order{Field: "created_at", Desc: true}

var (
	shipments = Kind[*model.Shipment, model.ShipmentFilter]{
		order: defaultOrder, narrow: true,
		list: (*db.DB).ListShipments, count: (*db.DB).CountShipments,
		id:    func(s *model.Shipment) string { return s.ID },
		prime: func(l *load.Loaders) *load.Loader[*model.Shipment] { return l.ShipmentByID },
	}
	containers = Kind[*model.Container, model.ContainerFilter]{
		order: defaultOrder, narrow: true,
		list: (*db.DB).ListContainers, count: (*db.DB).CountContainers,
		id:    func(c *model.Container) string { return c.ID },
		prime: func(l *load.Loaders) *load.Loader[*model.Container] { return l.ContainerByID },
	}
	documents = Kind[*model.Document, model.DocumentFilter]{
		order: defaultOrder, narrow: true,
		list: (*db.DB).ListDocuments, count: (*db.DB).CountDocuments,
		id:    func(d *model.Document) string { return d.ID },
		prime: func(l *load.Loaders) *load.Loader[*model.Document] { return l.DocumentByID },
	}
	definitions = Kind[*model.CustomFieldDefinition, model.CustomFieldDefinitionFilter]{
		order: defaultOrder, narrow: true,
		list: (*db.DB).ListCustomFieldDefinitions, count: (*db.DB).CountCustomFieldDefinitions,
		id:    func(d *model.CustomFieldDefinition) string { return d.ID },
		prime: func(l *load.Loaders) *load.Loader[*model.CustomFieldDefinition] { return l.DefinitionByID },
	}
	customFields = Kind[*model.CustomField, model.CustomFieldFilter]{
		order: defaultOrder,
		list:  (*db.DB).ListCustomFields, count: (*db.DB).CountCustomFields,
		id: func(c *model.CustomField) string { return c.ID },
	}
	emailSubmissions = Kind[*model.EmailSubmission, NoFilter]{
		order: defaultOrder,
		list: func(s *db.DB, ctx context.Context, account string, _ NoFilter, req model.PageRequest) (*model.Page[*model.EmailSubmission], error) {
			return s.ListEmailSubmissions(ctx, account, req)
		},
		count: func(s *db.DB, ctx context.Context, account string, _ NoFilter) (int, error) {
			return s.CountEmailSubmissions(ctx, account)
		},
		id:    func(e *model.EmailSubmission) string { return e.ID },
		prime: func(l *load.Loaders) *load.Loader[*model.EmailSubmission] { return l.EmailSubmissionByID },
	}
	// Shipping lines are reference data created together, whose age says
	// nothing: they are listed by SCAC.
	shippingLines = Kind[*model.ShippingLine, NoFilter]{
		order: model.Order{Field: "scac"},
		list: func(s *db.DB, ctx context.Context, _ string, _ NoFilter, req model.PageRequest) (*model.Page[*model.ShippingLine], error) {
			return s.ListShippingLines(ctx, req)
		},
		count: func(s *db.DB, ctx context.Context, _ string, _ NoFilter) (int, error) {
			return s.CountShippingLines(ctx)
		},
		id: func(l *model.ShippingLine) string { return l.ID },
	}
)

// List reads one page of the list k describes.
func List[T, F any](ctx context.Context, r *Resolver, p *model.Principal, k *Kind[T, F], q Query[F]) (*Page[T], error) {
	p, l, err := begin(ctx, p, q.Plan)
	if err != nil {
		return nil, err
	}
	o := k.order
	if q.Order != nil {
		o = *q.Order
	}
	req, empty, err := pageRequest(q.Page, o)
	if err != nil {
		return nil, err
	}
	if empty {
		return &Page[T]{Items: []T{}}, nil
	}
	store := r.DB
	if k.narrow {
		store = l.Store(ctx)
	}
	page, err := k.list(store, ctx, p.AccountID, q.Filter, req)
	if err != nil {
		return nil, err
	}
	out := &Page[T]{Items: page.Items, HasNext: page.HasNext, HasPrevious: page.HasPrevious}
	if n := len(page.Items); n > 0 {
		if q.Cursors {
			out.Cursors = make([]string, n)
			for i, it := range page.Items {
				out.Cursors[i] = page.Cursor(i, o, k.id(it)).Encode()
			}
			out.Start, out.End = out.Cursors[0], out.Cursors[n-1]
		} else {
			out.Start = page.Cursor(0, o, k.id(page.Items[0])).Encode()
			out.End = page.Cursor(n-1, o, k.id(page.Items[n-1])).Encode()
		}
	}
	if k.prime != nil {
		by := k.prime(l)
		for _, it := range page.Items {
			by.Prime(k.id(it), it)
		}
	}
	if err := load.Load(ctx, page.Items, q.Plan); err != nil {
		return nil, err
	}
	return out, nil
}

// Count counts the records of the list k describes that filter keeps.
func Count[T, F any](ctx context.Context, r *Resolver, p *model.Principal, k *Kind[T, F], filter F) (int, error) {
	p, err := authenticated(p)
	if err != nil {
		return 0, err
	}
	return k.count(r.DB, ctx, p.AccountID, filter)
}

// Shipments lists the account's shipments.
func (r *Resolver) Shipments(ctx context.Context, p *model.Principal, q ShipmentQuery) (*Page[*model.Shipment], error) {
	return List(ctx, r, p, &shipments, q)
}

// CountShipments counts the account's shipments that f keeps.
func (r *Resolver) CountShipments(ctx context.Context, p *model.Principal, f model.ShipmentFilter) (int, error) {
	return Count(ctx, r, p, &shipments, f)
}

// Containers lists the account's containers.
func (r *Resolver) Containers(ctx context.Context, p *model.Principal, q ContainerQuery) (*Page[*model.Container], error) {
	return List(ctx, r, p, &containers, q)
}

// CountContainers counts the account's containers that f keeps.
func (r *Resolver) CountContainers(ctx context.Context, p *model.Principal, f model.ContainerFilter) (int, error) {
	return Count(ctx, r, p, &containers, f)
}

// Documents lists the account's documents.
func (r *Resolver) Documents(ctx context.Context, p *model.Principal, q DocumentQuery) (*Page[*model.Document], error) {
	return List(ctx, r, p, &documents, q)
}

// CountDocuments counts the account's documents that f keeps.
func (r *Resolver) CountDocuments(ctx context.Context, p *model.Principal, f model.DocumentFilter) (int, error) {
	return Count(ctx, r, p, &documents, f)
}

// Definitions lists the account's custom field definitions, newest first.
func (r *Resolver) Definitions(ctx context.Context, p *model.Principal, q DefinitionQuery) (*Page[*model.CustomFieldDefinition], error) {
	return List(ctx, r, p, &definitions, q)
}

// CountDefinitions counts the account's definitions that f keeps.
func (r *Resolver) CountDefinitions(ctx context.Context, p *model.Principal, f model.CustomFieldDefinitionFilter) (int, error) {
	return Count(ctx, r, p, &definitions, f)
}

// CustomFields lists the account's custom field values, newest first.
func (r *Resolver) CustomFields(ctx context.Context, p *model.Principal, q CustomFieldQuery) (*Page[*model.CustomField], error) {
	return List(ctx, r, p, &customFields, q)
}

// CountCustomFields counts the account's values that f keeps.
func (r *Resolver) CountCustomFields(ctx context.Context, p *model.Principal, f model.CustomFieldFilter) (int, error) {
	return Count(ctx, r, p, &customFields, f)
}

// EmailSubmissions lists the account's email submissions, newest first.
func (r *Resolver) EmailSubmissions(ctx context.Context, p *model.Principal, q EmailSubmissionQuery) (*Page[*model.EmailSubmission], error) {
	return List(ctx, r, p, &emailSubmissions, q)
}

// CountEmailSubmissions counts the account's email submissions.
func (r *Resolver) CountEmailSubmissions(ctx context.Context, p *model.Principal) (int, error) {
	return Count(ctx, r, p, &emailSubmissions, NoFilter{})
}

// ShippingLines lists the shipping lines (reference data), by SCAC.
func (r *Resolver) ShippingLines(ctx context.Context, p *model.Principal, q ShippingLineQuery) (*Page[*model.ShippingLine], error) {
	return List(ctx, r, p, &shippingLines, q)
}

// CountShippingLines counts the shipping lines.
func (r *Resolver) CountShippingLines(ctx context.Context, p *model.Principal) (int, error) {
	return Count(ctx, r, p, &shippingLines, NoFilter{})
}

// pageRequest validates page arguments against the limits and turns them
// into a store page request. The zero-row case (first: 0) is reported by
// empty, so callers can answer with a count alone.
func pageRequest(a PageArgs, order model.Order) (req model.PageRequest, empty bool, err error) {
	req.Order = order
	bad := func(arg, format string, args ...any) (model.PageRequest, bool, error) {
		return req, false, model.Errorf(model.EINVALID, format, args...).AtParameter(arg)
	}
	if a.Page != nil {
		if a.First != nil || a.Last != nil || a.After != nil || a.Before != nil {
			return bad("page", "page cannot be combined with first, last, after or before")
		}
		if a.Page.Number < 1 {
			return bad("page[number]", "page number must be at least 1")
		}
		if a.Page.Size < 1 || a.Page.Size > model.MaxPageSize {
			return bad("page[size]", "page size must be between 1 and %d", model.MaxPageSize)
		}
		if a.Page.Number-1 > model.MaxPageOffset/a.Page.Size {
			return bad("page[number]", "page number is too large: a numbered page may start at most %d rows into the list (page %d at size %d); use first/after cursors to read further",
				model.MaxPageOffset, model.MaxPageOffset/a.Page.Size+1, a.Page.Size)
		}
		req.Limit = a.Page.Size
		req.Offset = (a.Page.Number - 1) * a.Page.Size
		return req, false, nil
	}
	if a.First != nil && a.Last != nil {
		return bad("first", "first and last cannot be used together")
	}
	limit := model.DefaultPageSize
	if a.First != nil {
		limit = *a.First
	}
	if a.Last != nil {
		limit = *a.Last
		req.FromEnd = true
	}
	if limit < 0 || limit > model.MaxPageSize {
		arg := "first"
		if a.Last != nil {
			arg = "last"
		}
		return bad(arg, "%s must be between 0 and %d", arg, model.MaxPageSize)
	}
	if a.After != nil {
		c, err := model.DecodeCursor(*a.After, order.Name())
		if err != nil {
			return req, false, err
		}
		req.After = c
	}
	if a.Before != nil {
		c, err := model.DecodeCursor(*a.Before, order.Name())
		if err != nil {
			return req, false, err
		}
		req.Before = c
	}
	req.Limit = limit
	return req, limit == 0, nil
}
