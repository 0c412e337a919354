package gqlhttp

import (
	"errors"
	"fmt"
	"sync"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// The cost of an operation, bounded before validation: gqlparser's
// validation (overlapping fields), the shape limit and the complexity
// estimate all expand fragment spreads, so a small document of fragments
// that each spread the next twice (F_i = { ...F_{i+1} ...F_{i+1} }) costs
// 2^levels of work before any limit answers. The budget is counted on the
// document with one pass per fragment (a fragment's size is computed once
// and multiplied, never expanded), so a request past it is refused in
// microseconds:
//
//   - at most FieldLimit fields after fragment expansion;
//   - aliases counted with introspection fields, against AliasLimit (the
//     shape limit leaves introspection out for depth only: GraphiQL's
//     introspection query nests ofType deeper than the depth limit);
//   - one __schema per operation (each is the whole schema).
//
// It runs as the first validation rule: at the first event of an operation
// the walk fires, before any selection is walked; past the budget, the
// error is reported and the document's selections are dropped, so the
// other rules have nothing left to expand.

// DefaultFieldLimit: the dashboard query expands to a few hundred fields,
// GraphiQL's introspection query to about 150.
const DefaultFieldLimit = 5000

// useCost registers the budget as a validation rule of srv (one line in
// NewHandler).
func useCost(srv *handler.Server, cfg HandlerConfig) {
	limit := cfg.FieldLimit
	if limit <= 0 {
		limit = DefaultFieldLimit
	}
	aliases := cfg.AliasLimit
	srv.SetValidationRulesFn(func() *rules.Rules {
		r := rules.NewDefaultRules()
		// gqlgen swaps in the no-suggestion rules after this; ours is
		// added under a name sorted first, as the rules run by name.
		r.AddRule(costRule, func(observers *core.Events, addError core.AddErrFunc) {
			checked := false
			observers.OnDirectiveList(func(w *core.Walker, _ []*ast.Directive) {
				if checked || w.CurrentOperation == nil {
					return
				}
				checked = true
				if err := checkCost(w.Document, limit, aliases); err != nil {
					addError(core.Message("%s", err.Error()), core.At(w.CurrentOperation.Position))
					dropSelections(w.Document)
				}
			})
		})
		return r
	})
}

// costRule names the budget's validation rule: sorted before the others.
const costRule = "!CostBudget"

// Refusals of the budget, by extensions.code.
var (
	errFields  = "FIELD_LIMIT_EXCEEDED"
	errAliases = "ALIAS_LIMIT_EXCEEDED"
	errSchemas = "INTROSPECTION_LIMIT_EXCEEDED"
)

// costCodes remembers the code of each message the budget produces (a
// few: the messages name limits, not counts). gqlgen gives every
// validation error GRAPHQL_VALIDATION_FAILED; the presenter puts the
// budget's own code back (costCode).
var costCodes sync.Map // message → code

// costCode returns the extensions.code of a refusal of the budget, or "".
func costCode(gerr *gqlerror.Error) string {
	if gerr.Rule != costRule {
		return ""
	}
	if c, ok := costCodes.Load(gerr.Message); ok {
		return c.(string)
	}
	return errFields
}

// checkCost measures every operation of doc.
func checkCost(doc *ast.QueryDocument, fieldLimit, aliasLimit int) error {
	c := coster{doc: doc, frags: map[string]*fragCost{}, limit: fieldLimit}
	for _, op := range doc.Operations {
		n := c.set(op.SelectionSet)
		switch {
		case n.fields > fieldLimit:
			return refuse(errFields, fmt.Sprintf("operation selects more than %d fields once its fragments are expanded", fieldLimit))
		case aliasLimit > 0 && n.aliases > aliasLimit:
			return refuse(errAliases, fmt.Sprintf("operation uses more than %d aliases (introspection fields included)", aliasLimit))
		case n.schemas > 1:
			return refuse(errSchemas, "operation selects __schema more than once")
		}
	}
	return nil
}

func refuse(code, msg string) error {
	costCodes.LoadOrStore(msg, code)
	return errors.New(msg)
}

type fragCost struct {
	cost
	busy bool // being measured: a cycle, which validation refuses anyway
}

type cost struct{ fields, aliases, schemas int }

// add adds o to c, each count saturating past limit.
func (c *cost) add(o cost, limit int) {
	c.fields = min(c.fields+o.fields, limit+1)
	c.aliases = min(c.aliases+o.aliases, limit+1)
	c.schemas = min(c.schemas+o.schemas, limit+1)
}

type coster struct {
	doc   *ast.QueryDocument
	frags map[string]*fragCost
	limit int
}

func (c *coster) set(set ast.SelectionSet) cost {
	var n cost
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			n.add(cost{fields: 1}, c.limit)
			if s.Alias != "" && s.Alias != s.Name {
				n.add(cost{aliases: 1}, c.limit)
			}
			if s.Name == "__schema" {
				n.add(cost{schemas: 1}, c.limit)
			}
			n.add(c.set(s.SelectionSet), c.limit)
		case *ast.InlineFragment:
			n.add(c.set(s.SelectionSet), c.limit)
		case *ast.FragmentSpread:
			n.add(c.fragment(s.Name), c.limit)
		}
		if n.fields > c.limit {
			return n
		}
	}
	return n
}

// fragment returns the cost of a named fragment, measured once.
func (c *coster) fragment(name string) cost {
	if f, ok := c.frags[name]; ok {
		if f.busy {
			return cost{}
		}
		return f.cost
	}
	f := &fragCost{busy: true}
	c.frags[name] = f
	if def := c.doc.Fragments.ForName(name); def != nil {
		f.cost = c.set(def.SelectionSet)
	}
	f.busy = false
	return f.cost
}

// dropSelections empties a refused document (operations without
// selections, no fragments), so that the validation rules after the
// budget have nothing to walk, nor anything to report.
func dropSelections(doc *ast.QueryDocument) {
	for _, op := range doc.Operations {
		op.SelectionSet = nil
	}
	doc.Fragments = nil
}
