package graph

import (
	"context"

	"shipgraph/model"
	"shipgraph/resolve"
)

// Parties: thin adapters over resolve/parties.go, whose rules
// answer for both APIs.

func (r *queryResolver) parties(ctx context.Context, first *int, after *string, last *int, before *string, page *model.PageInput) (*model.PartyConnection, error) {
	q := resolve.PartyQuery{Page: pages(first, after, last, before, page), Plan: nodesPlan(ctx, "Party"), Cursors: selectsEdges(ctx)}
	pg, err := r.Res.Parties(ctx, who(ctx), q)
	if err != nil {
		return nil, err
	}
	c := &model.PartyConnection{}
	c.Nodes, c.Edges, c.PageInfo = connection(pg, func(cursor string, n *model.Party) *model.PartyEdge {
		return &model.PartyEdge{Cursor: cursor, Node: n}
	})
	return c, nil
}

func (r *queryResolver) party(ctx context.Context, id string) (*model.Party, error) {
	return orNull(r.Res.Party(ctx, who(ctx), id))
}

func (r *mutationResolver) createParty(ctx context.Context, input model.PartyInput) (*model.Party, error) {
	return r.Res.CreateParty(ctx, who(ctx), resolve.CreateParty{Input: input})
}

func (r *partyConnectionResolver) totalCount(ctx context.Context) (int, error) {
	return r.Res.CountParties(ctx, who(ctx))
}
