package graph

import (
	"context"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"shipgraph/catalog"
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
		if f.Definition == nil {
			continue
		}
		var sub *load.Plan
		for _, t := range types.concrete[typ] {
			if rel := relation(t, f.Name); rel != nil {
				if sub == nil {
					sub = buildPlan(op, f.Definition.Type.Name(), f.Selections)
				}
				p.Child(rel).Merge(sub)
			}
			for _, name := range derivedRels[t][f.Name] {
				p.Child(catalog.ByGraphQL(t).Rel(name))
			}
		}
	}
	return p
}

// derivedRels are the relationships a computed field reads (by plan
// name): a reference field's display value is its user's name.
var derivedRels = map[string]map[string][]string{
	"CustomField": {"displayValue": {"referencedUser"}},
}

// relation is the catalogue's relationship of the GraphQL field of typ, nil
// when the field is none (the catalogue's plan names are GraphQL's field
// names).
func relation(typ, field string) *catalog.Rel {
	return catalog.ByGraphQL(typ).Rel(field)
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
// fragments, connections and abstract types, as the columns they read
// (AddField).
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
			if typ == "Query" && (f.Name == "containerRoute" || f.Name == "containerMap") {
				// The route is drawn from whole records (resolve.ContainerRoute,
				// RouteMap), not from the columns the operation names.
				for _, res := range routeReads {
					out.AddAll(res)
				}
			}
			for _, t := range types.concrete[typ] {
				if def := parsedSchema.Types[t]; def != nil && def.Fields.ForName(f.Name) != nil {
					AddField(out, t, f.Name)
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

// routeReads are the records a container's route and map read whole.
var routeReads = []*catalog.Resource{catalog.Container, catalog.TransportEvent, catalog.Port, catalog.Vessel}

// AddField adds to fs what the GraphQL field of typ reads, in the
// catalogue's terms: a relationship's key columns, the columns a computed
// field derives from, or the column of the field's name (podEtaAt →
// pod_eta_at); a field that is none of those reads its type whole. Types
// the catalogue does not hold are not narrowed.
func AddField(fs load.Fields, typ, field string) {
	res := catalog.ByGraphQL(typ)
	switch {
	case res == nil:
	case field == "__typename" || field == "id":
		fs.AddColumn(res, "id")
	case res.Rel(field) != nil:
		fs.AddRel(res.Rel(field))
	case derivedColumns[typ][field] != nil:
		for _, c := range derivedColumns[typ][field] {
			fs.AddColumn(res, c)
		}
	case load.IsColumn(res, snake(field)):
		fs.AddColumn(res, snake(field))
	default:
		fs.AddAll(res)
	}
}

// derivedColumns are the fields read from columns other than their own
// (fields whose column is the snake case of their name need no entry).
var derivedColumns = map[string]map[string][]string{
	"Container": {
		"importDeadlines": {"pickup_lfd_terminal", "pickup_lfd_rail", "pickup_lfd_line"},
	},
	"CustomField": {
		"displayValue": {"value", "data_type", "reference_type", "option_labels"},
	},
}

// snake converts a GraphQL field name to its column: podEtaAt → pod_eta_at.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if 'A' <= r && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// parsedSchema is the schema the executor was generated from.
var parsedSchema = executor.NewExecutableSchema(executor.Config{}).Schema()
