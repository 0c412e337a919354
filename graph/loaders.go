package graph

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vikstrous/dataloadgen"

	"shipgraph/db"
	"shipgraph/graph/model"
)

// Loaders batch every relationship read of one request: one set per request,
// built after auth (the account scopes every fetch), stored in the context.
// Nested resolvers — under gqlgen or the /v2 adapter — load through them, so
// a page of N parents costs one statement per relationship and level.
type Loaders struct {
	AccountByID                *dataloadgen.Loader[string, *model.Account]
	UserByID                   *dataloadgen.Loader[string, *model.User]
	PortByID                   *dataloadgen.Loader[string, *model.Port]
	MetroAreaByID              *dataloadgen.Loader[string, *model.MetroArea]
	TerminalByID               *dataloadgen.Loader[string, *model.Terminal]
	RailTerminalByID           *dataloadgen.Loader[string, *model.RailTerminal]
	ShipmentByID               *dataloadgen.Loader[string, *model.Shipment]
	ContainerByID              *dataloadgen.Loader[string, *model.Container]
	DocumentByID               *dataloadgen.Loader[string, *model.Document]
	EmailSubmissionByID        *dataloadgen.Loader[string, *model.EmailSubmission]
	DocumentRepresentationByID *dataloadgen.Loader[string, *model.DocumentRepresentation]
	DefinitionByID             *dataloadgen.Loader[string, *model.CustomFieldDefinition]

	ContainersByShipmentID *dataloadgen.Loader[string, []*model.Container]
	ShipmentsByDocumentID  *dataloadgen.Loader[string, []*model.Shipment]
	ContainersByDocumentID *dataloadgen.Loader[string, []*model.Container]
	DocumentsByShipmentID  *dataloadgen.Loader[string, []*model.Document]
	DocumentsByContainerID *dataloadgen.Loader[string, []*model.Document]
	OptionsByDefinitionID  *dataloadgen.Loader[string, []*model.CustomFieldOption]
	CustomFieldsByEntityID *dataloadgen.Loader[string, []*model.CustomField]

	store    *db.DB
	selOnce  sync.Once
	narrowed *db.DB     // store narrowed to the request's columns
	mu       sync.Mutex // held while the plan attaches relationships
}

// LoaderConfig tunes batching: Wait is how long a batch collects keys after
// its first Load; MaxBatch caps the keys of one statement.
type LoaderConfig struct {
	Wait     time.Duration
	MaxBatch int
}

// DefaultLoaderConfig is about a millisecond of wait (dataloadgen's default
// of 16 ms would add that to every level of every request) and a batch cap
// that keeps ANY($1) arrays reasonable.
var DefaultLoaderConfig = LoaderConfig{Wait: time.Millisecond, MaxBatch: 1000}

// NewLoaders builds the loaders of one request for one account.
func NewLoaders(store *db.DB, accountID string, cfg LoaderConfig) *Loaders {
	opts := []dataloadgen.Option{dataloadgen.WithWait(cfg.Wait), dataloadgen.WithBatchCapacity(cfg.MaxBatch)}
	l := &Loaders{store: store}
	// Every read goes through the store narrowed to the columns the
	// request needs (plan.go), decided before the first read.
	s := l.Store
	l.AccountByID = one(func(ctx context.Context, ids []string) ([]*model.Account, error) {
		return s(ctx).AccountsByIDs(ctx, accountID, ids)
	}, func(x *model.Account) string { return x.ID }, opts)
	l.UserByID = one(func(ctx context.Context, ids []string) ([]*model.User, error) {
		return s(ctx).UsersByIDs(ctx, accountID, ids)
	}, func(x *model.User) string { return x.ID }, opts)
	l.PortByID = one(func(ctx context.Context, ids []string) ([]*model.Port, error) {
		return s(ctx).PortsByIDs(ctx, ids)
	}, func(x *model.Port) string { return x.ID }, opts)
	l.MetroAreaByID = one(func(ctx context.Context, ids []string) ([]*model.MetroArea, error) {
		return s(ctx).MetroAreasByIDs(ctx, ids)
	}, func(x *model.MetroArea) string { return x.ID }, opts)
	l.TerminalByID = one(func(ctx context.Context, ids []string) ([]*model.Terminal, error) {
		return s(ctx).TerminalsByIDs(ctx, ids)
	}, func(x *model.Terminal) string { return x.ID }, opts)
	l.RailTerminalByID = one(func(ctx context.Context, ids []string) ([]*model.RailTerminal, error) {
		return s(ctx).RailTerminalsByIDs(ctx, ids)
	}, func(x *model.RailTerminal) string { return x.ID }, opts)
	l.ShipmentByID = one(func(ctx context.Context, ids []string) ([]*model.Shipment, error) {
		return s(ctx).ShipmentsByIDs(ctx, accountID, ids)
	}, func(x *model.Shipment) string { return x.ID }, opts)
	l.ContainerByID = one(func(ctx context.Context, ids []string) ([]*model.Container, error) {
		return s(ctx).ContainersByIDs(ctx, accountID, ids)
	}, func(x *model.Container) string { return x.ID }, opts)
	l.DocumentByID = one(func(ctx context.Context, ids []string) ([]*model.Document, error) {
		return s(ctx).DocumentsByIDs(ctx, accountID, ids)
	}, func(x *model.Document) string { return x.ID }, opts)
	l.EmailSubmissionByID = one(func(ctx context.Context, ids []string) ([]*model.EmailSubmission, error) {
		return s(ctx).EmailSubmissionsByIDs(ctx, accountID, ids)
	}, func(x *model.EmailSubmission) string { return x.ID }, opts)
	l.DocumentRepresentationByID = one(func(ctx context.Context, ids []string) ([]*model.DocumentRepresentation, error) {
		return s(ctx).DocumentRepresentationsByIDs(ctx, accountID, ids)
	}, func(x *model.DocumentRepresentation) string { return x.ID }, opts)
	l.DefinitionByID = one(func(ctx context.Context, ids []string) ([]*model.CustomFieldDefinition, error) {
		return s(ctx).CustomFieldDefinitionsByIDs(ctx, accountID, ids)
	}, func(x *model.CustomFieldDefinition) string { return x.ID }, opts)

	l.ContainersByShipmentID = many(func(ctx context.Context, ids []string) ([]*model.Container, error) {
		return s(ctx).ContainersByShipmentIDs(ctx, accountID, ids)
	}, func(x *model.Container) string { return x.ShipmentID }, opts)
	l.ShipmentsByDocumentID = linked(func(ctx context.Context, ids []string) ([]db.Linked[*model.Shipment], error) {
		return s(ctx).ShipmentsByDocumentIDs(ctx, accountID, ids)
	}, opts)
	l.ContainersByDocumentID = linked(func(ctx context.Context, ids []string) ([]db.Linked[*model.Container], error) {
		return s(ctx).ContainersByDocumentIDs(ctx, accountID, ids)
	}, opts)
	l.DocumentsByShipmentID = linked(func(ctx context.Context, ids []string) ([]db.Linked[*model.Document], error) {
		return s(ctx).DocumentsByShipmentIDs(ctx, accountID, ids)
	}, opts)
	l.DocumentsByContainerID = linked(func(ctx context.Context, ids []string) ([]db.Linked[*model.Document], error) {
		return s(ctx).DocumentsByContainerIDs(ctx, accountID, ids)
	}, opts)
	l.OptionsByDefinitionID = many(func(ctx context.Context, ids []string) ([]*model.CustomFieldOption, error) {
		return s(ctx).CustomFieldOptionsByDefinitionIDs(ctx, accountID, ids)
	}, func(x *model.CustomFieldOption) string { return x.DefinitionID }, opts)
	l.CustomFieldsByEntityID = many(func(ctx context.Context, ids []string) ([]*model.CustomField, error) {
		return s(ctx).CustomFieldsByEntityIDs(ctx, accountID, ids)
	}, func(x *model.CustomField) string { return x.EntityID }, opts)
	return l
}

// Select decides the columns the request reads, by GraphQL type and field
// (nil: every column). It takes effect only before the first read of the
// request, which otherwise decides from its GraphQL operation (or reads
// every column outside GraphQL), so cached records always have the
// columns every part of the response needs.
func (l *Loaders) Select(fields Fields) {
	l.selOnce.Do(func() {
		l.narrowed = l.store
		if fields != nil {
			l.narrowed = l.store.Select(fields.Selection())
		}
	})
}

// Store is the store narrowed to the request's columns.
func (l *Loaders) Store(ctx context.Context) *db.DB {
	l.selOnce.Do(func() {
		l.narrowed = l.store
		if graphql.HasOperationContext(ctx) {
			l.narrowed = l.store.Select(fieldsOf(graphql.GetOperationContext(ctx)).Selection())
		}
	})
	return l.narrowed
}

// one builds a to-one loader over a batch read: missing keys become
// dataloadgen.ErrNotFound (mapped loader), which resolvers turn into null.
func one[T any](fetch func(context.Context, []string) ([]T, error), key func(T) string, opts []dataloadgen.Option) *dataloadgen.Loader[string, T] {
	return dataloadgen.NewMappedLoader(func(ctx context.Context, ids []string) (map[string]T, error) {
		rows, err := fetch(ctx, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[string]T, len(rows))
		for _, r := range rows {
			m[key(r)] = r
		}
		return m, nil
	}, opts...)
}

// many builds a to-many loader: rows are grouped by parent key, and a parent
// with no rows gets an empty (non-nil) list rather than not-found.
func many[T any](fetch func(context.Context, []string) ([]T, error), parent func(T) string, opts []dataloadgen.Option) *dataloadgen.Loader[string, []T] {
	return dataloadgen.NewMappedLoader(func(ctx context.Context, ids []string) (map[string][]T, error) {
		rows, err := fetch(ctx, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[string][]T, len(ids))
		for _, id := range ids {
			m[id] = []T{}
		}
		for _, r := range rows {
			m[parent(r)] = append(m[parent(r)], r)
		}
		return m, nil
	}, opts...)
}

// linked is many over a join table, whose rows carry the parent key.
func linked[T any](fetch func(context.Context, []string) ([]db.Linked[T], error), opts []dataloadgen.Option) *dataloadgen.Loader[string, []T] {
	return dataloadgen.NewMappedLoader(func(ctx context.Context, ids []string) (map[string][]T, error) {
		rows, err := fetch(ctx, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[string][]T, len(ids))
		for _, id := range ids {
			m[id] = []T{}
		}
		for _, r := range rows {
			m[r.ParentID] = append(m[r.ParentID], r.Item)
		}
		return m, nil
	}, opts...)
}

type loadersKey struct{}

// WithLoaders returns ctx carrying l.
func WithLoaders(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, l)
}

// For returns the loaders of the request. Middleware always installs them
// after auth; a request without them is a wiring bug.
func For(ctx context.Context) (*Loaders, error) {
	l, ok := ctx.Value(loadersKey{}).(*Loaders)
	if !ok {
		if model.PrincipalFrom(ctx) == nil {
			return nil, model.Errorf(model.EUNAUTHENTICATED, "a valid API key is required")
		}
		return nil, model.Errorf(model.EINTERNAL, "loaders missing from request context")
	}
	return l, nil
}

// Middleware builds a set of loaders per request for the authenticated
// principal (auth runs before it). Requests without a principal get none.
func Middleware(store *db.DB, cfg LoaderConfig, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := model.PrincipalFrom(r.Context()); p != nil {
			r = r.WithContext(WithLoaders(r.Context(), NewLoaders(store, p.AccountID, cfg)))
		}
		next.ServeHTTP(w, r)
	})
}
