package graph

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"shipgraph/graph/executor"
	"shipgraph/load"
)

// ---------------------------------------------------------------- GraphQL

// schemaTypes answers the two questions field collection asks of the
// schema: which type conditions a selection on a type satisfies, and
// which concrete types an abstract type stands for.
var schemaTypes = sync.OnceValue(func() (t struct{ satisfies, concrete map[string][]string }) {
	t.satisfies, t.concrete = map[string][]string{}, map[string][]string{}
	s := parsedSchema
	for name, def := range s.Types {
		switch def.Kind {
		case ast.Object:
			t.concrete[name] = []string{name}
			sat := []string{name}
			sat = append(sat, def.Interfaces...)
			for uname, u := range s.Types {
				if u.Kind == ast.Union && contains(u.Types, name) {
					sat = append(sat, uname)
				}
			}
			t.satisfies[name] = sat
		case ast.Interface, ast.Union:
			sat := []string{name}
			for _, p := range s.GetPossibleTypes(def) {
				t.concrete[name] = append(t.concrete[name], p.Name)
				sat = append(sat, p.Name)
			}
			t.satisfies[name] = sat
		}
	}
	return t
})

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// planOf builds the plan of a selection on typ (a type name) from the
// operation of ctx.
func planOf(ctx context.Context, typ string, set ast.SelectionSet) *load.Plan {
	if len(set) == 0 || !graphql.HasOperationContext(ctx) {
		return nil
	}
	return buildPlan(graphql.GetOperationContext(ctx), typ, set)
}

func buildPlan(op *graphql.OperationContext, typ string, set ast.SelectionSet) *load.Plan {
	p := &load.Plan{}
	types := schemaTypes()
	for _, f := range graphql.CollectFields(op, set, types.satisfies[typ]) {
		if !isRelation(types.concrete[typ], f.Name) || f.Definition == nil {
			continue
		}
		p.Child(f.Name).Merge(buildPlan(op, f.Definition.Type.Name(), f.Selections))
	}
	return p
}

func isRelation(types []string, field string) bool {
	for _, t := range types {
		if load.IsRelation(t, field) {
			return true
		}
	}
	return false
}

// fieldPlan is the plan of the selection of the field being resolved.
func fieldPlan(ctx context.Context) *load.Plan {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil || fc.Field.Definition == nil {
		return nil
	}
	return planOf(ctx, fc.Field.Definition.Type.Name(), fc.Field.Selections)
}

// subfields are the fields the field being resolved selects (fragments
// resolved), with the operation; nil outside a GraphQL field.
func subfields(ctx context.Context) (*graphql.OperationContext, []graphql.CollectedField) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil || fc.Field.Definition == nil || !graphql.HasOperationContext(ctx) {
		return nil, nil
	}
	op := graphql.GetOperationContext(ctx)
	return op, graphql.CollectFields(op, fc.Field.Selections, []string{fc.Field.Definition.Type.Name()})
}

// nodesPlan is the plan of the nodes of the connection field being
// resolved: what `nodes { … }` and `edges { node { … } }` select.
func nodesPlan(ctx context.Context, nodeType string) *load.Plan {
	op, fields := subfields(ctx)
	if op == nil {
		return nil
	}
	p := &load.Plan{}
	for _, f := range fields {
		switch f.Name {
		case "nodes":
			p.Merge(buildPlan(op, nodeType, f.Selections))
		case "edges":
			for _, e := range graphql.CollectFields(op, f.Selections, []string{f.Definition.Type.Name()}) {
				if e.Name == "node" {
					p.Merge(buildPlan(op, nodeType, e.Selections))
				}
			}
		}
	}
	return p
}

// FieldsOf collects the fields an operation selects on every type, through
// fragments, connections and abstract types.
func FieldsOf(op *graphql.OperationContext) load.Fields {
	root := "Query"
	switch op.Operation.Operation {
	case ast.Mutation:
		root = "Mutation"
	case ast.Subscription:
		root = "Subscription"
	}
	out := load.Fields{}
	var walk func(typ string, set ast.SelectionSet)
	walk = func(typ string, set ast.SelectionSet) {
		types := schemaTypes()
		for _, f := range graphql.CollectFields(op, set, types.satisfies[typ]) {
			for _, t := range types.concrete[typ] {
				if def := parsedSchema.Types[t]; def != nil && def.Fields.ForName(f.Name) != nil {
					if out[t] == nil {
						out[t] = map[string]bool{}
					}
					out[t][f.Name] = true
				}
			}
			if len(f.Selections) > 0 && f.Definition != nil {
				walk(f.Definition.Type.Name(), f.Selections)
			}
		}
	}
	walk(root, op.Operation.SelectionSet)
	return out
}

// parsedSchema is the schema the executor was generated from.
var parsedSchema = executor.NewExecutableSchema(executor.Config{}).Schema()
