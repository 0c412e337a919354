package graph

import (
	"context"

	"shipgraph/model"
)

// Search: a thin adapter over resolve.Search, the search of
// GET /v2/search.

func (r *queryResolver) search(ctx context.Context, query string) ([]*model.SearchResult, error) {
	return r.Res.Search(ctx, who(ctx), query)
}
