package graph

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/vikstrous/dataloadgen"

	"shipgraph/load"
	"shipgraph/model"
)

// validID reports whether id is a UUID; anything else can never exist, so
// callers answer not-found without a query.
func validID(id string) bool {
	_, err := uuid.Parse(id)
	return err == nil && len(id) == 36
}

// loadOne loads a to-one relation: a missing or empty id is null, and so is
// a record the loader did not find (deleted, or not visible to the account).
func loadOne[T any](ctx context.Context, l *load.Loader[*T], id *string) (*T, error) {
	if id == nil || *id == "" {
		return nil, nil
	}
	v, err := l.Load(ctx, *id)
	if errors.Is(err, dataloadgen.ErrNotFound) {
		return nil, nil
	}
	return v, err
}

// loadByID is loadOne for root lookups by a client-supplied id.
func loadByID[T any](ctx context.Context, l *load.Loader[*T], id string) (*T, error) {
	if !validID(id) {
		return nil, nil
	}
	return loadOne(ctx, l, &id)
}

// loadMany loads a to-many relation; the loader always has an entry.
func loadMany[T any](ctx context.Context, l *load.Loader[[]T], id string) ([]T, error) {
	v, err := l.Load(ctx, id)
	if errors.Is(err, dataloadgen.ErrNotFound) {
		return []T{}, nil
	}
	return v, err
}

// principal returns the request's principal and loaders.
func principal(ctx context.Context) (*model.Principal, *load.Loaders, error) {
	p, err := model.RequirePrincipal(ctx)
	if err != nil {
		return nil, nil, err
	}
	l, err := load.For(ctx)
	if err != nil {
		return nil, nil, err
	}
	return p, l, nil
}

// writer returns the principal of a request that may write, and its
// loaders (which writes clear).
func writer(ctx context.Context) (*model.Principal, *load.Loaders, error) {
	if _, err := model.RequireWrite(ctx); err != nil {
		return nil, nil, err
	}
	return principal(ctx)
}

// writeTarget checks what a write on one record checks first: the key may
// write, and the record (read through loader) is the account's.
func writeTarget[T any](ctx context.Context, loader func(*load.Loaders) *load.Loader[*T], id, what string) (*model.Principal, *load.Loaders, *T, error) {
	p, l, err := writer(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	v, err := loadByID(ctx, loader(l), id)
	if err != nil {
		return nil, nil, nil, err
	}
	if v == nil {
		return nil, nil, nil, model.NotFound(what)
	}
	return p, l, v, nil
}

// pageArgs are the pagination arguments every connection field takes.
type pageArgs struct {
	First, Last   *int
	After, Before *string
	Page          *model.PageInput
}

// pageRequest validates pagination arguments against the limits and turns
// them into a store page request. The zero-row case (first: 0) is reported
// by empty, so callers can answer with totalCount alone.
func pageRequest(a pageArgs, order model.Order) (req model.PageRequest, empty bool, err error) {
	req.Order = order
	bad := func(arg, format string, args ...any) (model.PageRequest, bool, error) {
		e := model.Errorf(model.EINVALID, format, args...)
		e.Parameter = arg
		return req, false, e
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

// pageInfo builds the cursors and PageInfo of a page.
//
// The cursor of every row (edges) is built only when edges is true: a
// dashboard reading nodes needs none, and each costs an encoding.
func pageInfo[T any](p *model.Page[T], order model.Order, id func(T) string, edges bool) ([]string, *model.PageInfo) {
	info := &model.PageInfo{HasNextPage: p.HasNext, HasPreviousPage: p.HasPrevious}
	n := len(p.Items)
	if n == 0 {
		return nil, info
	}
	var cursors []string
	if edges {
		cursors = make([]string, n)
		for i, it := range p.Items {
			cursors[i] = p.Cursor(i, order, id(it)).Encode()
		}
		info.StartCursor, info.EndCursor = &cursors[0], &cursors[n-1]
		return cursors, info
	}
	start, end := p.Cursor(0, order, id(p.Items[0])).Encode(), p.Cursor(n-1, order, id(p.Items[n-1])).Encode()
	info.StartCursor, info.EndCursor = &start, &end
	return nil, info
}

// selectsEdges reports whether the connection field being resolved selects
// its edges (GraphQL); outside GraphQL nothing reads them.
func selectsEdges(ctx context.Context) bool {
	_, fields := subfields(ctx)
	for _, f := range fields {
		if f.Name == "edges" {
			return true
		}
	}
	return false
}

// order maps a GraphQL order input to an allow-listed store order; nil means
// newest first.
func order(field string, dir *model.OrderDirection) model.Order {
	return model.Order{Field: field, Desc: dir != nil && *dir == model.OrderDirectionDesc}
}

// defaultOrder is the order of lists when the client gives none: newest
// first, ties broken by id.
var defaultOrder = model.Order{Field: "created_at", Desc: true}

// portByCode looks a port up by UN/LOCODE (clients of /v2/ports/{id} send
// either); not found is null, like an unknown id.
func (r *queryResolver) portByCode(ctx context.Context, l *load.Loaders, code string) (*model.Port, error) {
	p, err := r.DB.FindPortByCode(ctx, code)
	if model.ErrorCode(err) == model.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	l.PortByID.Prime(p.ID, p)
	return p, nil
}

// metroAreaByCode looks a metro area up by UN/LOCODE: the OpenAPI
// document's /metro_areas/{id} takes "the un/locode or the id", and the
// SDK's metroAreas.get passes either; not found is null.
func (r *queryResolver) metroAreaByCode(ctx context.Context, l *load.Loaders, code string) (*model.MetroArea, error) {
	m, err := r.DB.FindMetroAreaByCode(ctx, code)
	if model.ErrorCode(err) == model.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	l.MetroAreaByID.Prime(m.ID, m)
	return m, nil
}

// withPlan loads, below a record a root field resolved, what the field
// selects (plan.go); the record's id came from the client or a write.
func withPlan[T any](ctx context.Context, v *T, err error) (*T, error) {
	if v == nil || err != nil {
		return v, err
	}
	if err := load.Load(ctx, []*T{v}, fieldPlan(ctx)); err != nil {
		return nil, err
	}
	return v, nil
}
