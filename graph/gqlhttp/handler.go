package gqlhttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"shipgraph/catalog"
	"shipgraph/graph"
	"shipgraph/graph/executor"
	"shipgraph/load"
	"shipgraph/model"
)

// HandlerConfig holds the GraphQL limits and switches; every one is configurable
// from the environment (see app/serve.go and the README).
type HandlerConfig struct {
	Introspection bool
	// NoFastPath runs every query on gqlgen's executor alone (see
	// fastpath.go); the default writes queries on the fast path.
	NoFastPath      bool
	ComplexityLimit int
	DepthLimit      int
	AliasLimit      int
	TokenLimit      int
	// FieldLimit is the most fields an operation may select once its
	// fragments are expanded (cost.go); 0 means DefaultFieldLimit.
	FieldLimit     int
	QueryCacheSize int
	APQCacheSize   int
	// KnownDocuments are documents the server serves pages of its own
	// with (the operations page's), by their persisted-query id: a
	// request sending only such an id is answered at once, not refused
	// as an unknown persisted query until the page sends the body.
	KnownDocuments map[string]string
	Logger         *slog.Logger
	// RequestID returns the id of the request in ctx, for error logs.
	RequestID func(context.Context) string
	// Authenticate resolves an API key sent in a WebSocket's
	// connection_init payload (the chain's key cache).
	Authenticate func(ctx context.Context, key string) (*model.Principal, error)
	// RateLimit, when set, takes one request of the principal's rate
	// limit for an operation sent on a WebSocket (HTTP requests are
	// limited by the chain); an error refuses the operation.
	RateLimit func(ctx context.Context, p *model.Principal) error
	// FieldMiddleware runs around every field after the handler's own
	// (fieldmiddleware.go); any that is not ErrorsOnly turns the fast path off.
	FieldMiddleware []FieldMiddleware
	// Tracing gives every operation of a traced request a span
	// (tracing.go); the chain sets it when tracing is on.
	Tracing bool
	// MaxUploadSize is the largest multipart request (files) in bytes.
	MaxUploadSize int64
	// Trusted, when set, serves the operations of a trusted documents
	// manifest by id and, with its Only, refuses every other (trusted.go).
	Trusted *TrustedDocuments
	// CostBudget, when set, charges every operation's complexity against
	// its key's budget (budget.go); the chain counts it.
	CostBudget func(ctx context.Context, p *model.Principal, cost int) Charge
}

// DefaultHandlerConfig: the dashboard query at first: 100 (complexity 11,701
// with the weights below, measured by TestSeeded/Limits) passes; two such
// pages in one request (23,402) already do not.
var DefaultHandlerConfig = HandlerConfig{
	Introspection:   true,
	ComplexityLimit: 20000,
	DepthLimit:      12,
	AliasLimit:      15,
	TokenLimit:      10000,
	FieldLimit:      DefaultFieldLimit,
	QueryCacheSize:  1000,
	APQCacheSize:    1000,
	MaxUploadSize:   64 << 20,
}

// manyWeight is the expected size of a nested to-many relation (containers
// of a shipment, custom fields of a shipment …) for the complexity estimate.
const manyWeight = 5

// NewHandler builds the gqlgen server with explicit transports, caches,
// limits and error presentation (gqlgen's NewDefaultServer leaves the
// limits off and answers validation errors with 422).
func NewHandler(r *graph.Resolver, cfg HandlerConfig) *handler.Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RequestID == nil {
		cfg.RequestID = func(context.Context) string { return "" }
	}
	es := executor.NewExecutableSchema(execConfig(r))
	srv := handler.New(es)
	addLiveTransports(srv, r, cfg) // live_transport.go
	// The GraphQL multipart request (file uploads, createDocument); the
	// chain's body limit applies (httpapi raises it to the file size limit
	// for multipart requests when files are served).
	srv.AddTransport(transport.MultipartForm{MaxUploadSize: cfg.MaxUploadSize, MaxMemory: 1 << 20})
	srv.AddTransport(MultipartMixed{}) // multipart.go: @defer, before Transport (which takes every request)
	srv.AddTransport(Transport{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](cfg.QueryCacheSize))
	srv.SetParserTokenLimit(cfg.TokenLimit)
	srv.SetDisableSuggestion(true)
	useCost(srv, cfg) // cost.go: the fragment-expansion budget, before validation
	if cfg.Introspection {
		srv.Use(extension.Introspection{})
	}
	if cfg.Trusted != nil {
		srv.Use(cfg.Trusted) // before APQ: the manifest answers its ids
	}
	srv.Use(extension.AutomaticPersistedQuery{Cache: knownFirst{cfg.KnownDocuments, lru.New[string](cfg.APQCacheSize)}})
	// Shape before complexity: a query too deep is refused as such (the
	// clearer error), not as too complex, which any deep query through a
	// list also is.
	srv.Use(ShapeLimit{MaxDepth: cfg.DepthLimit, MaxAliases: cfg.AliasLimit})
	srv.Use(newComplexityLimit(cfg.ComplexityLimit, cfg.QueryCacheSize)) // complexity.go
	if cfg.CostBudget != nil {
		srv.Use(costBudget{cfg.CostBudget}) // after the complexity is known
	}
	fastPathSafe := aroundFields(srv, cfg)
	presenter := errorPresenter(cfg)
	srv.SetErrorPresenter(presenter)
	srv.SetRecoverFunc(recoverPanic)
	if cfg.Tracing {
		srv.AroundOperations(traceOperation)
	}
	srv.AroundOperations(selectColumns)
	srv.AroundOperations(deferRootFields) // defer.go
	if !cfg.NoFastPath && fastPathSafe {
		srv.AroundOperations(executor.FastQueries(es, presenter, recoverPanic))
	}
	return srv
}

// selectColumns narrows the store of the operation's loaders to the columns
// its selection reads, before the first read (load.Loaders.Select).
func selectColumns(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if l, err := load.For(ctx); err == nil {
		l.Select(graph.FieldsOf(graphql.GetOperationContext(ctx)))
	}
	return next(ctx)
}

// recoverPanic turns a panic in a resolver into an internal error.
func recoverPanic(ctx context.Context, p any) error {
	return internalError{fmt.Errorf("panic in resolver: %v", p)}
}

// internalError marks an error that came out of resolver code (a store or
// loader failure, a panic) rather than from gqlgen's own parsing,
// validation or argument coercion. gqlgen wraps every resolver error in a
// *gqlerror.Error on its way to the presenter, so without the mark a
// driver error would look like one of gqlgen's client-safe messages.
type internalError struct{ err error }

func (e internalError) Error() string { return e.err.Error() }
func (e internalError) Unwrap() error { return e.err }

// markInternal runs around every field resolver and marks the errors that
// are neither application errors (*model.Error, shown by code) nor
// gqlgen's (*gqlerror.Error). Introspection fields (and federation's
// _service, the schema) have one error only, gqlgen's "introspection
// disabled": it becomes a forbidden for the client.
func markInternal(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	if err == nil {
		return res, nil
	}
	if _, ok := model.AsError(err); ok {
		return res, err
	}
	var gerr *gqlerror.Error
	if errors.As(err, &gerr) {
		return res, err
	}
	if fc := graphql.GetFieldContext(ctx); fc != nil && (strings.HasPrefix(fc.Field.Name, "__") || fc.Field.Name == "_service") {
		return res, model.Errorf(model.EFORBIDDEN, "introspection is disabled on this server")
	}
	return res, internalError{err}
}

// suggestion matches the "Did you mean …?" tails gqlparser adds to
// validation messages. gqlgen's SetDisableSuggestion only covers unknown
// fields; arguments, input fields, enum values and type names still get
// suggestions, which would map the schema for anyone when introspection is
// off.
var suggestion = regexp.MustCompile(`\s*Did you mean [^?]*\?`)

// execConfig returns the executable schema config with complexity weights:
// list fields multiply what they select by the page size asked for.
func execConfig(r *graph.Resolver) executor.Config {
	c := executor.Config{Resolvers: r}
	conn := func(child int, first, last *int, page *model.PageInput) int {
		n := model.DefaultPageSize
		switch {
		case first != nil:
			n = *first
		case last != nil:
			n = *last
		case page != nil:
			n = page.Size
		}
		if n < 1 {
			n = 1
		}
		return 1 + child*n
	}
	many := func(child int) int { return 1 + child*manyWeight }
	weighConnections(&c.Complexity, conn)
	weighRelations(&c.Complexity, many)
	weighStats(&c.Complexity) // stats_cost.go
	return c
}

// weighConnections weighs every paginated list of the schema (every field
// whose arguments begin first, after, last, before, page: the connections
// the catalogue's resources are listed by) by its page size, whatever
// filters follow.
func weighConnections(root *executor.ComplexityRoot, conn func(child int, first, last *int, page *model.PageInput) int) {
	var (
		intT  = reflect.TypeFor[int]()
		pintT = reflect.TypeFor[*int]()
		pstrT = reflect.TypeFor[*string]()
		pageT = reflect.TypeFor[*model.PageInput]()
	)
	v := reflect.ValueOf(root).Elem()
	for i := range v.NumField() {
		obj := v.Field(i)
		if obj.Kind() != reflect.Struct {
			continue
		}
		for j := range obj.NumField() {
			f := obj.Field(j)
			t := f.Type()
			if t.Kind() != reflect.Func || t.NumIn() < 6 || t.NumOut() != 1 || t.Out(0) != intT ||
				t.In(0) != intT || t.In(1) != pintT || t.In(2) != pstrT || t.In(3) != pintT || t.In(4) != pstrT || t.In(5) != pageT {
				continue
			}
			f.Set(reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value {
				n := conn(int(args[0].Int()), args[1].Interface().(*int), args[3].Interface().(*int), args[5].Interface().(*model.PageInput))
				return []reflect.Value{reflect.ValueOf(n)}
			}))
		}
	}
}

// weighRelations gives every to-many relationship of the catalogue that is
// a list field without arguments the weight many. Internal relations
// (containerIDs) have no field; customField(apiSlug) reads the list of
// custom fields but returns one, and keeps the default weight.
func weighRelations(root *executor.ComplexityRoot, many func(child int) int) {
	v := reflect.ValueOf(root).Elem()
	weight := reflect.ValueOf(many)
	for typ, names := range catalog.ToManyFields() {
		for _, name := range names {
			obj := v.FieldByName(typ)
			if !obj.IsValid() {
				panic("weighRelations: no complexity for type " + typ)
			}
			f := obj.FieldByName(strings.ToUpper(name[:1]) + name[1:])
			if f.IsValid() && f.Type() == weight.Type() {
				f.Set(weight)
			}
		}
	}
}

// gqlCodes maps application error codes to GraphQL extensions.code.
var gqlCodes = map[string]string{
	model.EINVALID:         "BAD_USER_INPUT",
	model.EUNAUTHENTICATED: "UNAUTHENTICATED",
	model.EFORBIDDEN:       "FORBIDDEN",
	model.ENOTFOUND:        "NOT_FOUND",
	model.ECONFLICT:        "CONFLICT",
	model.ERATELIMITED:     "RATE_LIMITED",
	model.EUNAVAILABLE:     "UNAVAILABLE",
	model.EINTERNAL:        "INTERNAL_SERVER_ERROR",
	model.ETOOLARGE:        "TOO_LARGE",
}

// errorPresenter gives every error an extensions.code and never leaks
// internals: application errors keep their message; gqlgen's own errors
// (parsing, validation, input coercion) keep theirs; anything else is
// logged with the request id and shown as a generic internal error.
func errorPresenter(cfg HandlerConfig) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		var internal internalError
		if errors.As(err, &internal) {
			return internalServerError(ctx, cfg, internal.err)
		}
		if appErr, ok := model.AsError(err); ok {
			gerr := gqlerror.WrapPath(graphql.GetPath(ctx), err)
			gerr.Message = appErr.Message
			gerr.Extensions = map[string]any{"code": gqlCodes[appErr.Code]}
			switch appErr.Field {
			case "":
			case model.WholeInput:
				gerr.Extensions["field"] = "data"
			default:
				gerr.Extensions["field"] = appErr.Field
			}
			if appErr.Parameter != "" {
				gerr.Extensions["argument"] = appErr.Parameter
			}
			if dup, ok := errors.AsType[*model.DuplicateDocumentError](err); ok {
				gerr.Extensions["existingDocumentId"] = dup.ExistingID
				gerr.Extensions["existingDocumentName"] = dup.ExistingName
			}
			if appErr.Code != model.EINTERNAL {
				return gerr
			}
			return internalServerError(ctx, cfg, err)
		}
		// Resolver errors were marked internal above (markInternal); a
		// *gqlerror.Error here comes from gqlgen itself (parsing,
		// validation, argument coercion, APQ, limits) and its message is
		// meant for the client.
		if gerr, ok := err.(*gqlerror.Error); ok {
			if gerr.Extensions == nil {
				gerr.Extensions = map[string]any{}
			}
			if _, ok := gerr.Extensions["code"]; !ok {
				gerr.Extensions["code"] = "BAD_USER_INPUT"
			}
			if code := costCode(gerr); code != "" { // cost.go
				gerr.Extensions["code"] = code
			}
			gerr.Message = suggestion.ReplaceAllString(gerr.Message, "")
			return gerr
		}
		return internalServerError(ctx, cfg, err)
	}
}

// internalServerError logs err with the request id and path and returns
// the generic error the client sees.
func internalServerError(ctx context.Context, cfg HandlerConfig, err error) *gqlerror.Error {
	cfg.Logger.ErrorContext(ctx, "internal error", "request_id", cfg.RequestID(ctx), "path", graphql.GetPath(ctx).String(), "err", err)
	out := gqlerror.WrapPath(graphql.GetPath(ctx), errors.New("internal server error"))
	out.Message = "internal server error"
	out.Extensions = map[string]any{"code": "INTERNAL_SERVER_ERROR"}
	if id := cfg.RequestID(ctx); id != "" {
		out.Extensions["requestId"] = id
	}
	return out
}

// knownFirst is the persisted queries' cache: the server's own documents,
// then those clients registered.
type knownFirst struct {
	known map[string]string
	graphql.Cache[string]
}

func (c knownFirst) Get(ctx context.Context, key string) (string, bool) {
	if q, ok := c.known[key]; ok {
		return q, true
	}
	return c.Cache.Get(ctx, key)
}
