package graph

import (
	"context"
	"reflect"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"shipgraph/graph/executor"
	"shipgraph/model"
)

// The load plan of a request says what each level of its response needs:
// which relationships (Plan) and which attributes (the request's column
// selection). GraphQL builds it from the operation's selections, /v2 from
// `include` and `fields[type]`. It runs level by level: for every level the
// keys of every relationship are gathered across all its records, each
// loader gets its keys in one LoadAll — one statement per relationship and
// level, whatever the page size — and the results are attached to the
// records (model.*Rel), which the GraphQL executor and /v2 then read
// without further loading. Loaders still deduplicate and cache by id
// within the request.

// Plan is the relationships one level needs, by field name (GraphQL's), each
// with the plan of the level below it.
type Plan struct {
	Rels map[string]*Plan
}

// NewPlan returns the plan of dotted relationship paths, such as
// "containers.podTerminal.port"; a path may name a relationship the record
// type does not have (a plan over several types), which is skipped.
func NewPlan(paths ...string) *Plan {
	p := &Plan{}
	for _, path := range paths {
		at := p
		for _, name := range strings.Split(path, ".") {
			at = at.child(name)
		}
	}
	return p
}

func (p *Plan) child(name string) *Plan {
	if p.Rels == nil {
		p.Rels = map[string]*Plan{}
	}
	c, ok := p.Rels[name]
	if !ok {
		c = &Plan{}
		p.Rels[name] = c
	}
	return c
}

// merge adds q's relationships to p.
func (p *Plan) merge(q *Plan) {
	for name, sub := range q.Rels {
		p.child(name).merge(sub)
	}
}

// Prepare decides, before its first read, which fields of each type the
// request reads (nil: all of them); the store then reads only their
// columns. /v2 calls it with its sparse fieldsets; GraphQL decides from
// its operation.
func Prepare(ctx context.Context, fields Fields) error {
	l, err := For(ctx)
	if err != nil {
		return err
	}
	l.Select(fields)
	return nil
}

// Load attaches to rows the relationships plan names, and theirs below
// them. rows are records of the model (*model.Shipment, …); records of a
// type without relationships are left alone. Load may be called several
// times on the same records: what is attached stays.
func Load[T any](ctx context.Context, rows []T, plan *Plan) error {
	if plan == nil || len(plan.Rels) == 0 || len(rows) == 0 {
		return nil
	}
	l, err := For(ctx)
	if err != nil {
		return err
	}
	recs := make([]any, len(rows))
	for i, r := range rows {
		recs[i] = r
	}
	return l.run(ctx, recs, plan)
}

// level is the records of one level that share a plan.
type level struct {
	rows []any
	plan *Plan
}

// step is one relationship of one level: the relation, the records it
// applies to, and the plan of the level it leads to.
type step struct {
	rel     *relation
	parents []any
	plan    *Plan
}

// run executes plan over rows level by level.
func (l *Loaders) run(ctx context.Context, rows []any, plan *Plan) error {
	levels := []level{{rows, plan}}
	for len(levels) > 0 {
		// Gather every relationship of the level with its keys, by loader.
		var steps []step
		type batch struct {
			fetch func(context.Context, *Loaders, []string) (map[string]any, error)
			keys  []string
			seen  map[string]bool
			got   map[string]any
		}
		batches := map[any]*batch{}
		var order []any
		for _, lv := range levels {
			byType := map[string][]any{}
			for _, r := range lv.rows {
				t := typeName(r)
				byType[t] = append(byType[t], r)
			}
			for name, sub := range lv.plan.Rels {
				for t, recs := range byType {
					for _, rel := range relations[t][name] {
						steps = append(steps, step{rel, recs, sub})
						id := rel.loader(l)
						b, ok := batches[id]
						if !ok {
							b = &batch{fetch: rel.fetch, seen: map[string]bool{}}
							batches[id] = b
							order = append(order, id)
						}
						for _, r := range recs {
							if k := rel.key(r); k != "" && !b.seen[k] {
								b.seen[k] = true
								b.keys = append(b.keys, k)
							}
						}
					}
				}
			}
		}
		// One LoadAll per loader, all loaders of the level at once.
		var wg sync.WaitGroup
		errs := make([]error, len(order))
		for i, id := range order {
			b := batches[id]
			if len(b.keys) == 0 {
				continue
			}
			if len(order) == 1 {
				b.got, errs[i] = b.fetch(ctx, l, b.keys)
				continue
			}
			wg.Go(func() { b.got, errs[i] = b.fetch(ctx, l, b.keys) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		// Attach, and collect the next level.
		levels = levels[:0:0]
		l.mu.Lock()
		gen := l.gen.Load()
		for _, s := range steps {
			b := batches[s.rel.loader(l)]
			var next []any
			seen := map[any]bool{}
			for _, p := range s.parents {
				k := s.rel.key(p)
				v, ok := b.got[k]
				if k == "" || !ok {
					continue
				}
				if p.(model.Related).Loads().Mark(gen, s.rel.bit) {
					s.rel.attach(p, v)
				}
				if len(s.plan.Rels) > 0 {
					for _, c := range s.rel.children(v, nil) {
						if !seen[c] {
							seen[c] = true
							next = append(next, c)
						}
					}
				}
			}
			if len(next) > 0 {
				levels = append(levels, level{next, s.plan})
			}
		}
		l.mu.Unlock()
	}
	return nil
}

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
func planOf(ctx context.Context, typ string, set ast.SelectionSet) *Plan {
	if len(set) == 0 || !graphql.HasOperationContext(ctx) {
		return nil
	}
	return buildPlan(graphql.GetOperationContext(ctx), typ, set)
}

func buildPlan(op *graphql.OperationContext, typ string, set ast.SelectionSet) *Plan {
	p := &Plan{}
	types := schemaTypes()
	for _, f := range graphql.CollectFields(op, set, types.satisfies[typ]) {
		if !isRelation(types.concrete[typ], f.Name) || f.Definition == nil {
			continue
		}
		p.child(f.Name).merge(buildPlan(op, f.Definition.Type.Name(), f.Selections))
	}
	return p
}

func isRelation(types []string, field string) bool {
	for _, t := range types {
		if len(relations[t][field]) > 0 {
			return true
		}
	}
	return false
}

// fieldPlan is the plan of the selection of the field being resolved.
func fieldPlan(ctx context.Context) *Plan {
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
func nodesPlan(ctx context.Context, nodeType string) *Plan {
	op, fields := subfields(ctx)
	if op == nil {
		return nil
	}
	p := &Plan{}
	for _, f := range fields {
		switch f.Name {
		case "nodes":
			p.merge(buildPlan(op, nodeType, f.Selections))
		case "edges":
			for _, e := range graphql.CollectFields(op, f.Selections, []string{f.Definition.Type.Name()}) {
				if e.Name == "node" {
					p.merge(buildPlan(op, nodeType, e.Selections))
				}
			}
		}
	}
	return p
}

// ---------------------------------------------------------------- columns

// Fields names, by GraphQL type, the fields a request reads of each type;
// a type it does not name is read whole.
type Fields map[string]map[string]bool

// fieldsOf collects the fields an operation selects on every type, through
// fragments, connections and abstract types.
func fieldsOf(op *graphql.OperationContext) Fields {
	root := "Query"
	switch op.Operation.Operation {
	case ast.Mutation:
		root = "Mutation"
	case ast.Subscription:
		root = "Subscription"
	}
	out := Fields{}
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

// derivedColumns are the fields read from columns other than their own
// (fields whose column is the snake case of their name need no entry).
var derivedColumns = map[string]map[string][]string{
	"Container": {
		"importDeadlines": {"pickup_lfd_terminal", "pickup_lfd_rail", "pickup_lfd_line"},
		// /v2's relationships of events Shipgraph does not track: their
		// linkage is always [], from no column.
		"transportEvents": nil,
		"rawEvents":       nil,
	},
	"CustomField": {
		"displayValue": {"value", "data_type", "option_labels"},
	},
}

// columnTags are the db columns of the model types whose reads the store
// can narrow, from their struct tags.
var columnTags = sync.OnceValue(func() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for name, v := range map[string]any{
		"Shipment": model.Shipment{}, "Container": model.Container{}, "Document": model.Document{},
		"Terminal": model.Terminal{}, "Port": model.Port{}, "CustomField": model.CustomField{},
	} {
		t := reflect.TypeOf(v)
		out[name] = map[string]bool{}
		for i := range t.NumField() {
			if tag := t.Field(i).Tag.Get("db"); tag != "" && tag != "-" {
				out[name][tag] = true
			}
		}
	}
	return out
})

// Selection turns the fields of a request into the columns the store reads:
// each field's column (or derived columns), and the key column of each
// relationship. A type with a field the mapping does not know is read whole.
func (fs Fields) Selection() model.Selection {
	sel := model.Selection{}
	tags := columnTags()
	for typ, fields := range fs {
		cols, ok := tags[typ]
		if !ok {
			continue
		}
		var want []string
		whole := false
		for f := range fields {
			if f == "__typename" || f == "id" {
				continue
			}
			if rels := relations[typ][f]; len(rels) > 0 {
				for _, r := range rels {
					want = append(want, r.keyCol)
				}
				continue
			}
			if d, ok := derivedColumns[typ][f]; ok {
				want = append(want, d...)
				continue
			}
			if c := snake(f); cols[c] {
				want = append(want, c)
				continue
			}
			whole = true
			break
		}
		if !whole {
			sel[typ] = append(want, "id")
		}
	}
	return sel
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
