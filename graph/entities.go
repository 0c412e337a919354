package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"shipgraph/load"
)

// Apollo Federation's _entities (docs/federation.md): gqlgen's federation
// plugin groups the representations by type and calls one resolver per
// type and key with all of them (entity.resolvers.go); each passes the keys
// to the resolver layer's batch reads with the plan of what the operation
// selects on that type.

// keys are the key values of representations, in their order.
func keys[R any](reps []*R, key func(*R) string) []string {
	out := make([]string, len(reps))
	for i, r := range reps {
		out[i] = key(r)
	}
	return out
}

// entityPlan is the plan of what the _entities field being resolved
// selects on the entity type typ.
func entityPlan(ctx context.Context, typ string) *load.Plan {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil {
		return nil
	}
	return planOf(ctx, typ, fc.Field.Selections)
}
