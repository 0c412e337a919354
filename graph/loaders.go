package graph

import (
	"context"
	"net/http"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
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
	l := &Loaders{}
	// Every batch that reads rows with relationships queues the keys of
	// the relationships the operation selects on them (prefetch.go).
	shipments := then(l.prefetchShipments, "Shipment")
	containers := then(l.prefetchContainers, "Container")
	documents := then(l.prefetchDocuments, "Document")
	terminals := then(l.prefetchTerminals, "Terminal")
	railTerminals := then(l.prefetchRailTerminals, "RailTerminal")
	definitions := then(l.prefetchDefinitions, "CustomFieldDefinition")
	options := then(l.prefetchOptions, "CustomFieldOption")
	customFields := then(l.prefetchCustomFields, "CustomField")
	*l = Loaders{
		AccountByID: one(func(ctx context.Context, ids []string) ([]*model.Account, error) {
			return store.AccountsByIDs(ctx, accountID, ids)
		}, func(x *model.Account) string { return x.ID }, nil, opts),
		UserByID: one(func(ctx context.Context, ids []string) ([]*model.User, error) {
			return store.UsersByIDs(ctx, accountID, ids)
		}, func(x *model.User) string { return x.ID }, nil, opts),
		PortByID:         one(store.PortsByIDs, func(x *model.Port) string { return x.ID }, nil, opts),
		MetroAreaByID:    one(store.MetroAreasByIDs, func(x *model.MetroArea) string { return x.ID }, nil, opts),
		TerminalByID:     one(store.TerminalsByIDs, func(x *model.Terminal) string { return x.ID }, terminals, opts),
		RailTerminalByID: one(store.RailTerminalsByIDs, func(x *model.RailTerminal) string { return x.ID }, railTerminals, opts),
		ShipmentByID: one(func(ctx context.Context, ids []string) ([]*model.Shipment, error) {
			return store.ShipmentsByIDs(ctx, accountID, ids)
		}, func(x *model.Shipment) string { return x.ID }, shipments, opts),
		ContainerByID: one(func(ctx context.Context, ids []string) ([]*model.Container, error) {
			return store.ContainersByIDs(ctx, accountID, ids)
		}, func(x *model.Container) string { return x.ID }, containers, opts),
		DocumentByID: one(func(ctx context.Context, ids []string) ([]*model.Document, error) {
			return store.DocumentsByIDs(ctx, accountID, ids)
		}, func(x *model.Document) string { return x.ID }, documents, opts),
		EmailSubmissionByID: one(func(ctx context.Context, ids []string) ([]*model.EmailSubmission, error) {
			return store.EmailSubmissionsByIDs(ctx, accountID, ids)
		}, func(x *model.EmailSubmission) string { return x.ID }, nil, opts),
		DocumentRepresentationByID: one(func(ctx context.Context, ids []string) ([]*model.DocumentRepresentation, error) {
			return store.DocumentRepresentationsByIDs(ctx, accountID, ids)
		}, func(x *model.DocumentRepresentation) string { return x.ID }, nil, opts),
		DefinitionByID: one(func(ctx context.Context, ids []string) ([]*model.CustomFieldDefinition, error) {
			return store.CustomFieldDefinitionsByIDs(ctx, accountID, ids)
		}, func(x *model.CustomFieldDefinition) string { return x.ID }, definitions, opts),

		ContainersByShipmentID: many(func(ctx context.Context, ids []string) ([]*model.Container, error) {
			return store.ContainersByShipmentIDs(ctx, accountID, ids)
		}, func(x *model.Container) string { return x.ShipmentID }, containers, opts),
		ShipmentsByDocumentID: linked(func(ctx context.Context, ids []string) ([]db.Linked[*model.Shipment], error) {
			return store.ShipmentsByDocumentIDs(ctx, accountID, ids)
		}, shipments, opts),
		ContainersByDocumentID: linked(func(ctx context.Context, ids []string) ([]db.Linked[*model.Container], error) {
			return store.ContainersByDocumentIDs(ctx, accountID, ids)
		}, containers, opts),
		DocumentsByShipmentID: linked(func(ctx context.Context, ids []string) ([]db.Linked[*model.Document], error) {
			return store.DocumentsByShipmentIDs(ctx, accountID, ids)
		}, documents, opts),
		DocumentsByContainerID: linked(func(ctx context.Context, ids []string) ([]db.Linked[*model.Document], error) {
			return store.DocumentsByContainerIDs(ctx, accountID, ids)
		}, documents, opts),
		OptionsByDefinitionID: many(func(ctx context.Context, ids []string) ([]*model.CustomFieldOption, error) {
			return store.CustomFieldOptionsByDefinitionIDs(ctx, accountID, ids)
		}, func(x *model.CustomFieldOption) string { return x.DefinitionID }, options, opts),
		CustomFieldsByEntityID: many(func(ctx context.Context, ids []string) ([]*model.CustomField, error) {
			return store.CustomFieldsByEntityIDs(ctx, accountID, ids)
		}, func(x *model.CustomField) string { return x.EntityID }, customFields, opts),
	}
	return l
}

// then adapts a prefetcher to a batch: it runs on the rows a batch read,
// with the selection they are read under.
func then[T any](prefetch func(context.Context, ast.SelectionSet, []T), typ string) func(context.Context, []T) {
	return func(ctx context.Context, rows []T) {
		if set := selectionFor(ctx, typ); len(set) > 0 {
			prefetch(ctx, set, rows)
		}
	}
}

// one builds a to-one loader over a batch read: missing keys become
// dataloadgen.ErrNotFound (mapped loader), which resolvers turn into null.
// after, if not nil, sees the rows of every batch.
func one[T any](fetch func(context.Context, []string) ([]T, error), key func(T) string, after func(context.Context, []T), opts []dataloadgen.Option) *dataloadgen.Loader[string, T] {
	return dataloadgen.NewMappedLoader(func(ctx context.Context, ids []string) (map[string]T, error) {
		rows, err := fetch(ctx, ids)
		if err != nil {
			return nil, err
		}
		if after != nil {
			after(ctx, rows)
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
func many[T any](fetch func(context.Context, []string) ([]T, error), parent func(T) string, after func(context.Context, []T), opts []dataloadgen.Option) *dataloadgen.Loader[string, []T] {
	return dataloadgen.NewMappedLoader(func(ctx context.Context, ids []string) (map[string][]T, error) {
		rows, err := fetch(ctx, ids)
		if err != nil {
			return nil, err
		}
		if after != nil {
			after(ctx, rows)
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
func linked[T any](fetch func(context.Context, []string) ([]db.Linked[T], error), after func(context.Context, []T), opts []dataloadgen.Option) *dataloadgen.Loader[string, []T] {
	return dataloadgen.NewMappedLoader(func(ctx context.Context, ids []string) (map[string][]T, error) {
		rows, err := fetch(ctx, ids)
		if err != nil {
			return nil, err
		}
		if after != nil {
			items := make([]T, len(rows))
			for i, r := range rows {
				items[i] = r.Item
			}
			after(ctx, items)
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
