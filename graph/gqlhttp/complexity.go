package gqlhttp

import (
	"context"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// complexityLimit is gqlgen's FixedComplexityLimit with the complexity of
// an operation that declares no variables kept by its text: such an
// operation's complexity is a function of the document alone, and
// walking its selection with every argument of every field is a few per
// cent of a dashboard's CPU, the same on every request. It records its
// result under gqlgen's name, so extension.GetComplexityStats reads it.
type complexityLimit struct {
	limit int
	es    graphql.ExecutableSchema
	known *lru.LRU[int]
}

func newComplexityLimit(limit, size int) *complexityLimit {
	return &complexityLimit{limit: limit, known: lru.New[int](max(size, 1))}
}

var _ interface {
	graphql.OperationContextMutator
	graphql.HandlerExtension
} = &complexityLimit{}

// ExtensionName is gqlgen's: one complexity extension per server.
func (c *complexityLimit) ExtensionName() string { return "ComplexityLimit" }

func (c *complexityLimit) Validate(schema graphql.ExecutableSchema) error {
	c.es = schema
	return nil
}

func (c *complexityLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	op := opCtx.Doc.Operations.ForName(opCtx.OperationName)
	var n int
	var key string
	if op != nil && len(op.VariableDefinitions) == 0 {
		key = opCtx.OperationName + "\x00" + opCtx.RawQuery
	}
	if v, ok := c.known.Get(ctx, key); ok && key != "" {
		n = v
	} else {
		n = complexity.Calculate(ctx, c.es, op, opCtx.Variables)
		if key != "" {
			c.known.Add(ctx, key, n)
		}
	}
	opCtx.Stats.SetExtension("ComplexityLimit", &extension.ComplexityStats{Complexity: n, ComplexityLimit: c.limit})
	if n > c.limit {
		err := gqlerror.Errorf("operation has complexity %d, which exceeds the limit of %d", n, c.limit)
		errcode.Set(err, "COMPLEXITY_LIMIT_EXCEEDED")
		return err
	}
	return nil
}
