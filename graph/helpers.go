package graph

import (
	"context"
	"strings"

	"shipgraph/model"
	"shipgraph/resolve"
)

// The adapters' pieces: GraphQL arguments into the resolver layer's
// queries, its pages into connections, its not found into null.

// pages turns the pagination arguments every connection field takes into
// the resolver layer's.
func pages(first *int, after *string, last *int, before *string, page *model.PageInput) resolve.PageArgs {
	return resolve.PageArgs{First: first, After: after, Last: last, Before: before, Page: page}
}

// orderOf maps a GraphQL order input to a store order (the store's
// allow-list has the enum's values, lower-cased); nil means the list's
// default.
func orderOf[F ~string](field F, dir *model.OrderDirection) *model.Order {
	return &model.Order{Field: strings.ToLower(string(field)), Desc: dir != nil && *dir == model.OrderDirectionDesc}
}

// valueOf is *p, or the zero filter.
func valueOf[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// connection builds a connection's nodes, edges (when the field selects
// them: the page then has every row's cursor) and page info.
func connection[T, E any](pg *resolve.Page[T], edge func(cursor string, node T) E) ([]T, []E, *model.PageInfo) {
	info := &model.PageInfo{HasNextPage: pg.HasNext, HasPreviousPage: pg.HasPrevious}
	if pg.Start != "" {
		start, end := pg.Start, pg.End
		info.StartCursor, info.EndCursor = &start, &end
	}
	edges := make([]E, 0, len(pg.Cursors))
	for i, c := range pg.Cursors {
		edges = append(edges, edge(c, pg.Items[i]))
	}
	return pg.Items, edges, info
}

// selectsEdges reports whether the connection field being resolved selects
// its edges.
func selectsEdges(ctx context.Context) bool {
	_, fields := subfields(ctx)
	for _, f := range fields {
		if f.Name == "edges" {
			return true
		}
	}
	return false
}

// orNull answers a record that is not found (unknown, malformed or another
// account's id) with null, as GraphQL's root fields do.
func orNull[T any](v *T, err error) (*T, error) {
	if model.ErrorCode(err) == model.ENOTFOUND {
		return nil, nil
	}
	return v, err
}

// withPlan loads, below a record a write returned, what the field selects
// (plan.go).
func withPlan[T any](ctx context.Context, v *T, err error) (*T, error) {
	if v == nil || err != nil {
		return v, err
	}
	if err := resolve.Load(ctx, []*T{v}, fieldPlan(ctx)); err != nil {
		return nil, err
	}
	return v, nil
}

// who is the principal the transport authenticated the operation as (nil:
// anonymous), which every resolver passes to the resolver layer.
func who(ctx context.Context) *model.Principal { return model.PrincipalFrom(ctx) }
