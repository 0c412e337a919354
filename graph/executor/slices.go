package executor

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// marshalSlice marshals the elements of a list one after the other, in the
// request's goroutine. gqlgen's executor (graphql.MarshalSliceConcurrently)
// starts a goroutine per element so that blocking field resolvers of
// different elements overlap. No field of a list element blocks here: the
// load plan attached every relationship before marshalling starts, and
// relationship fields are plain methods. A goroutine per element would buy
// nothing and cost its start, its stack growth and the garbage collector's
// stack scans: a dashboard page started 300 to 650 of them.
//
// `make generate` (scripts/generate.sh) points the generated list
// marshallers here; it fails if gqlgen's output no longer has the call it
// rewrites, so a gqlgen upgrade cannot silently undo it.
func marshalSlice(ctx context.Context, n int, marshal func(ctx context.Context, i int) graphql.Marshaler) graphql.Array {
	ret := make(graphql.Array, n)
	for i := range n {
		ctx := graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &i})
		if !marshalElement(ctx, ret, i, marshal) {
			return nil
		}
	}
	return ret
}

// marshalElement marshals element i into ret; a panic is reported as the
// element's error (as gqlgen does) and makes the list null.
func marshalElement(ctx context.Context, ret graphql.Array, i int, marshal func(ctx context.Context, i int) graphql.Marshaler) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			graphql.AddError(ctx, graphql.Recover(ctx, r))
			ok = false
		}
	}()
	ret[i] = marshal(ctx, i)
	return true
}
