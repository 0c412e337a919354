package gqlhttp

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// @defer on root fields. gqlgen's executor defers fragments inside objects
// but runs every field of the root Query at once, deferred or not, so
// `... @defer { containerStats(…) { … } }` on a dashboard would still hold
// the first answer back until the count is done. deferRootFields splits an
// operation's root-level deferred fragments off: the rest runs as the
// initial answer (its own nested @defer left to gqlgen), each deferred
// fragment runs at the same time as one more execution of the operation
// with that fragment alone, and its answer follows as an incremental
// result at the root path with the fragment's label. The executions share
// the request's loaders and principal; the limits were checked on the
// whole operation.
func deferRootFields(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Query || !strings.Contains(oc.RawQuery, "@defer") {
		return next(ctx)
	}
	now, later := splitRootDefers(oc)
	if len(later) == 0 {
		return next(ctx)
	}
	with := func(set ast.SelectionSet) context.Context {
		op := *oc.Operation
		op.SelectionSet = set
		// Each execution its own operation context (its own field
		// collection cache), the same request otherwise.
		return graphql.WithOperationContext(ctx, &graphql.OperationContext{
			RawQuery: oc.RawQuery, Variables: oc.Variables, OperationName: oc.OperationName, Doc: oc.Doc,
			Extensions: oc.Extensions, Headers: oc.Headers, Operation: &op,
			DisableIntrospection: oc.DisableIntrospection, RecoverFunc: oc.RecoverFunc,
			ResolverMiddleware: oc.ResolverMiddleware, RootResolverMiddleware: oc.RootResolverMiddleware,
			Stats: oc.Stats,
		})
	}
	initial := next(with(now))
	done := make(chan []*graphql.Response, len(later))
	for _, d := range later {
		go func() {
			dctx := with(ast.SelectionSet{d.sel})
			h := next(dctx)
			var out []*graphql.Response
			for r := h(dctx); r != nil; r = h(dctx) {
				if len(out) == 0 {
					r.Label, r.Path = d.label, ast.Path{}
				}
				out = append(out, r)
			}
			done <- out
		}()
	}
	pending, initialDone := len(later), false
	var queue []*graphql.Response
	return func(ctx context.Context) *graphql.Response {
		for {
			if !initialDone {
				if r := initial(ctx); r != nil {
					more := true
					r.HasNext = &more
					return r
				}
				initialDone = true
			}
			if len(queue) > 0 {
				r := queue[0]
				queue = queue[1:]
				more := len(queue) > 0 || pending > 0
				r.HasNext = &more
				return r
			}
			if pending == 0 {
				return nil
			}
			select {
			case rs := <-done:
				pending--
				queue = append(queue, rs...)
			case <-ctx.Done():
				return nil
			}
		}
	}
}

// rootDefer is one deferred root-level fragment: the selection without
// its @defer, and its label.
type rootDefer struct {
	sel   ast.Selection
	label string
}

// splitRootDefers splits the operation's root selections into those of the
// initial answer and the deferred fragments (@defer without if: false).
func splitRootDefers(oc *graphql.OperationContext) (now ast.SelectionSet, later []rootDefer) {
	for _, sel := range oc.Operation.SelectionSet {
		var dirs ast.DirectiveList
		switch s := sel.(type) {
		case *ast.InlineFragment:
			dirs = s.Directives
		case *ast.FragmentSpread:
			dirs = s.Directives
		}
		d := dirs.ForName("defer")
		if d == nil {
			now = append(now, sel)
			continue
		}
		args := d.ArgumentMap(oc.Variables)
		if on, ok := args["if"].(bool); ok && !on {
			now = append(now, sel)
			continue
		}
		label, _ := args["label"].(string)
		rest := make(ast.DirectiveList, 0, len(dirs)-1)
		for _, x := range dirs {
			if x != d {
				rest = append(rest, x)
			}
		}
		switch s := sel.(type) {
		case *ast.InlineFragment:
			c := *s
			c.Directives = rest
			later = append(later, rootDefer{&c, label})
		case *ast.FragmentSpread:
			c := *s
			c.Directives = rest
			later = append(later, rootDefer{&c, label})
		}
	}
	return now, later
}
