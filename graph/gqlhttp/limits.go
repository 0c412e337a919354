package gqlhttp

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// ShapeLimit refuses operations nested deeper than MaxDepth or using more
// than MaxAliases aliases, before any resolver (and so any SQL) runs.
// Introspection fields are not counted: GraphiQL's introspection query nests
// ofType many levels deep and must keep working.
type ShapeLimit struct {
	MaxDepth   int
	MaxAliases int
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = ShapeLimit{}

func (ShapeLimit) ExtensionName() string { return "ShapeLimit" }

func (l ShapeLimit) Validate(graphql.ExecutableSchema) error {
	if l.MaxDepth < 1 || l.MaxAliases < 0 {
		return errors.New("ShapeLimit needs MaxDepth >= 1 and MaxAliases >= 0")
	}
	return nil
}

func (l ShapeLimit) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	depth, aliases := measure(opCtx.Operation.SelectionSet, 0, map[string]bool{})
	if depth > l.MaxDepth {
		return limitError("DEPTH_LIMIT_EXCEEDED", "operation is nested %d levels deep, which exceeds the limit of %d", depth, l.MaxDepth)
	}
	if aliases > l.MaxAliases {
		return limitError("ALIAS_LIMIT_EXCEEDED", "operation uses %d aliases, which exceeds the limit of %d", aliases, l.MaxAliases)
	}
	return nil
}

// measure returns the depth of a selection set and the aliases in it,
// following fragments (visiting guards against fragment cycles, which
// validation already refuses).
func measure(set ast.SelectionSet, depth int, visiting map[string]bool) (maxDepth, aliases int) {
	maxDepth = depth
	for _, sel := range set {
		var d, a int
		switch s := sel.(type) {
		case *ast.Field:
			if len(s.Name) > 1 && s.Name[:2] == "__" {
				continue
			}
			if s.Alias != "" && s.Alias != s.Name {
				aliases++
			}
			d, a = measure(s.SelectionSet, depth+1, visiting)
		case *ast.InlineFragment:
			d, a = measure(s.SelectionSet, depth, visiting)
		case *ast.FragmentSpread:
			if s.Definition == nil || visiting[s.Name] {
				continue
			}
			visiting[s.Name] = true
			d, a = measure(s.Definition.SelectionSet, depth, visiting)
			delete(visiting, s.Name)
		}
		aliases += a
		if d > maxDepth {
			maxDepth = d
		}
	}
	return maxDepth, aliases
}

func limitError(code, format string, args ...any) *gqlerror.Error {
	e := gqlerror.Errorf(format, args...)
	e.Extensions = map[string]any{"code": code}
	return e
}
