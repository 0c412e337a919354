package gqlhttp

import (
	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
)

// FieldMiddleware is a field middleware of the GraphQL handler (gqlgen's
// AroundFields), registered through HandlerConfig.FieldMiddleware so that
// the fast path knows about it.
//
// The fast path (graph/executor/fastpath.go) writes a query without gqlgen's
// per-field machinery, so no field middleware runs on it. That is safe for a
// middleware that only changes the error a field returns: the fast path
// reports no errors (any error hands the operation to gqlgen's executor,
// which runs every field middleware), so such a middleware cannot change
// what the fast path writes. Any other middleware (tracing, field metrics,
// authorization by field) must see every field, and while one is registered
// the fast path is off and gqlgen's executor answers every query.
//
// gqlgen's handler.Server does not expose its field middleware, so the
// fence holds only if field middleware goes through here: do not call
// AroundFields, or Use with a graphql.FieldInterceptor, on the server
// NewHandler returns (TestFieldMiddlewareRegisteredHere checks the code).
type FieldMiddleware struct {
	Func graphql.FieldMiddleware
	// ErrorsOnly says that Func returns what the resolver returned and
	// only replaces or marks its error.
	ErrorsOnly bool
}

// builtinFieldMiddleware is what NewHandler registers on its own.
var builtinFieldMiddleware = []FieldMiddleware{
	{Func: markInternal, ErrorsOnly: true},
}

// aroundFields registers the handler's own field middleware, then the
// configuration's, in that order (the first is the outermost), and says
// whether the fast path may run alongside them: only when every one is
// errors-only.
func aroundFields(srv *handler.Server, cfg HandlerConfig) (fastPathSafe bool) {
	fastPathSafe = true
	for _, list := range [][]FieldMiddleware{builtinFieldMiddleware, cfg.FieldMiddleware} {
		for _, m := range list {
			srv.AroundFields(m.Func)
			fastPathSafe = fastPathSafe && m.ErrorsOnly
		}
	}
	return fastPathSafe
}
