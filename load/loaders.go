package load

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vikstrous/dataloadgen"

	"shipgraph/db"
	"shipgraph/model"
)

// Loaders batch every relationship read of one request: one set per request,
// built after auth (the account scopes every fetch), stored in the context.
// Nested resolvers — under gqlgen or the /v2 adapter — load through them, so
// a page of N parents costs one statement per relationship and level.
type Loaders struct {
	AccountByID                *Loader[*model.Account]
	UserByID                   *Loader[*model.User]
	PortByID                   *Loader[*model.Port]
	MetroAreaByID              *Loader[*model.MetroArea]
	TerminalByID               *Loader[*model.Terminal]
	RailTerminalByID           *Loader[*model.RailTerminal]
	ShipmentByID               *Loader[*model.Shipment]
	ContainerByID              *Loader[*model.Container]
	DocumentByID               *Loader[*model.Document]
	EmailSubmissionByID        *Loader[*model.EmailSubmission]
	DocumentRepresentationByID *Loader[*model.DocumentRepresentation]
	DefinitionByID             *Loader[*model.CustomFieldDefinition]

	ContainersByShipmentID *Loader[[]*model.Container]
	ContainerIDsByShipment *Loader[[]string] // linkage alone
	ShipmentsByDocumentID  *Loader[[]*model.Shipment]
	ContainersByDocumentID *Loader[[]*model.Container]
	DocumentsByShipmentID  *Loader[[]*model.Document]
	DocumentsByContainerID *Loader[[]*model.Document]
	OptionsByDefinitionID  *Loader[[]*model.CustomFieldOption]
	CustomFieldsByEntityID *Loader[[]*model.CustomField]

	// DocumentsByEmailSubmissionID: the documents an email brought.
	DocumentsByEmailSubmissionID *Loader[[]*model.Document]

	// gen counts the writes of the request: a loader cleared after a
	// write starts a new generation, and the plan attaches relationships
	// again to records it had attached them to before.
	gen      atomic.Uint32
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

	gen *atomic.Uint32 // the request's write generation (NewLoaders)
}

// DefaultLoaderConfig: the wait only serves single loads of root fields (the
// load plan never waits, see Loader.LoadAll), so it is short; dataloadgen's
// default of 16 ms would add that to every such field. The batch cap keeps
// ANY($1) arrays reasonable.
var DefaultLoaderConfig = LoaderConfig{Wait: 250 * time.Microsecond, MaxBatch: 1000}

// NewLoaders builds the loaders of one request for one account.
func NewLoaders(store *db.DB, accountID string, cfg LoaderConfig) *Loaders {
	l := &Loaders{store: store}
	cfg.gen = &l.gen
	// Every read goes through the store narrowed to the columns the
	// request needs (plan.go), decided before the first read.
	s := l.Store
	l.AccountByID = one(func(ctx context.Context, ids []string) ([]*model.Account, error) {
		return s(ctx).AccountsByIDs(ctx, accountID, ids)
	}, func(x *model.Account) string { return x.ID }, cfg)
	l.UserByID = one(func(ctx context.Context, ids []string) ([]*model.User, error) {
		return s(ctx).UsersByIDs(ctx, accountID, ids)
	}, func(x *model.User) string { return x.ID }, cfg)
	l.PortByID = one(func(ctx context.Context, ids []string) ([]*model.Port, error) {
		return s(ctx).PortsByIDs(ctx, ids)
	}, func(x *model.Port) string { return x.ID }, cfg)
	l.MetroAreaByID = one(func(ctx context.Context, ids []string) ([]*model.MetroArea, error) {
		return s(ctx).MetroAreasByIDs(ctx, ids)
	}, func(x *model.MetroArea) string { return x.ID }, cfg)
	l.TerminalByID = one(func(ctx context.Context, ids []string) ([]*model.Terminal, error) {
		return s(ctx).TerminalsByIDs(ctx, ids)
	}, func(x *model.Terminal) string { return x.ID }, cfg)
	l.RailTerminalByID = one(func(ctx context.Context, ids []string) ([]*model.RailTerminal, error) {
		return s(ctx).RailTerminalsByIDs(ctx, ids)
	}, func(x *model.RailTerminal) string { return x.ID }, cfg)
	l.ShipmentByID = one(func(ctx context.Context, ids []string) ([]*model.Shipment, error) {
		return s(ctx).ShipmentsByIDs(ctx, accountID, ids)
	}, func(x *model.Shipment) string { return x.ID }, cfg)
	l.ContainerByID = one(func(ctx context.Context, ids []string) ([]*model.Container, error) {
		return s(ctx).ContainersByIDs(ctx, accountID, ids)
	}, func(x *model.Container) string { return x.ID }, cfg)
	l.DocumentByID = one(func(ctx context.Context, ids []string) ([]*model.Document, error) {
		return s(ctx).DocumentsByIDs(ctx, accountID, ids)
	}, func(x *model.Document) string { return x.ID }, cfg)
	l.EmailSubmissionByID = one(func(ctx context.Context, ids []string) ([]*model.EmailSubmission, error) {
		return s(ctx).EmailSubmissionsByIDs(ctx, accountID, ids)
	}, func(x *model.EmailSubmission) string { return x.ID }, cfg)
	l.DocumentRepresentationByID = one(func(ctx context.Context, ids []string) ([]*model.DocumentRepresentation, error) {
		return s(ctx).DocumentRepresentationsByIDs(ctx, accountID, ids)
	}, func(x *model.DocumentRepresentation) string { return x.ID }, cfg)
	l.DefinitionByID = one(func(ctx context.Context, ids []string) ([]*model.CustomFieldDefinition, error) {
		return s(ctx).CustomFieldDefinitionsByIDs(ctx, accountID, ids)
	}, func(x *model.CustomFieldDefinition) string { return x.ID }, cfg)

	l.ContainersByShipmentID = many(func(ctx context.Context, ids []string) ([]*model.Container, error) {
		return s(ctx).ContainersByShipmentIDs(ctx, accountID, ids)
	}, func(x *model.Container) string { return x.ShipmentID }, cfg)
	l.ContainerIDsByShipment = linked(func(ctx context.Context, ids []string) ([]db.Linked[string], error) {
		return s(ctx).ContainerIDsByShipmentIDs(ctx, accountID, ids)
	}, cfg)
	l.ShipmentsByDocumentID = linked(func(ctx context.Context, ids []string) ([]db.Linked[*model.Shipment], error) {
		return s(ctx).ShipmentsByDocumentIDs(ctx, accountID, ids)
	}, cfg)
	l.ContainersByDocumentID = linked(func(ctx context.Context, ids []string) ([]db.Linked[*model.Container], error) {
		return s(ctx).ContainersByDocumentIDs(ctx, accountID, ids)
	}, cfg)
	l.DocumentsByShipmentID = linked(func(ctx context.Context, ids []string) ([]db.Linked[*model.Document], error) {
		return s(ctx).DocumentsByShipmentIDs(ctx, accountID, ids)
	}, cfg)
	l.DocumentsByContainerID = linked(func(ctx context.Context, ids []string) ([]db.Linked[*model.Document], error) {
		return s(ctx).DocumentsByContainerIDs(ctx, accountID, ids)
	}, cfg)
	l.DocumentsByEmailSubmissionID = linked(func(ctx context.Context, ids []string) ([]db.Linked[*model.Document], error) {
		return s(ctx).DocumentsByEmailSubmissionIDs(ctx, accountID, ids)
	}, cfg)
	l.OptionsByDefinitionID = many(func(ctx context.Context, ids []string) ([]*model.CustomFieldOption, error) {
		return s(ctx).CustomFieldOptionsByDefinitionIDs(ctx, accountID, ids)
	}, func(x *model.CustomFieldOption) string { return x.DefinitionID }, cfg)
	l.CustomFieldsByEntityID = many(func(ctx context.Context, ids []string) ([]*model.CustomField, error) {
		return s(ctx).CustomFieldsByEntityIDs(ctx, accountID, ids)
	}, func(x *model.CustomField) string { return x.EntityID }, cfg)
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

// Store is the store narrowed to the request's columns: those Select was
// given (GraphQL selects from its operation as it starts, /v2 from its
// sparse fieldsets), or every column when nothing selected before the
// first read.
func (l *Loaders) Store(ctx context.Context) *db.DB {
	l.selOnce.Do(func() { l.narrowed = l.store })
	return l.narrowed
}

// one builds a to-one loader over a batch read: missing keys become
// dataloadgen.ErrNotFound (mapped loader), which resolvers turn into null.
func one[T any](fetch func(context.Context, []string) ([]T, error), key func(T) string, cfg LoaderConfig) *Loader[T] {
	return newLoader(func(ctx context.Context, ids []string) (map[string]T, error) {
		rows, err := fetch(ctx, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[string]T, len(rows))
		for _, r := range rows {
			m[key(r)] = r
		}
		return m, nil
	}, cfg)
}

// many builds a to-many loader: rows are grouped by parent key, and a parent
// with no rows gets an empty (non-nil) list rather than not-found.
func many[T any](fetch func(context.Context, []string) ([]T, error), parent func(T) string, cfg LoaderConfig) *Loader[[]T] {
	return newLoader(func(ctx context.Context, ids []string) (map[string][]T, error) {
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
	}, cfg)
}

// linked is many over a join table, whose rows carry the parent key.
func linked[T any](fetch func(context.Context, []string) ([]db.Linked[T], error), cfg LoaderConfig) *Loader[[]T] {
	return newLoader(func(ctx context.Context, ids []string) (map[string][]T, error) {
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
	}, cfg)
}

// Loader is a dataloadgen loader of one relationship or record type, with
// the batch read behind it. Load batches the keys that reach it within the
// loader's wait; the load plan, which knows every key of a level at once,
// does not wait: LoadAll reads the keys the loader has not seen in one
// statement of that same read and primes them, and answers the rest from
// the loader's cache. Both dedupe and cache by key for the request.
type Loader[V any] struct {
	*dataloadgen.Loader[string, V]
	fetch    func(context.Context, []string) (map[string]V, error)
	maxBatch int
	gen      *atomic.Uint32

	mu     sync.Mutex
	seen   map[string]bool // keys read through LoadAll, found or not
	absent map[string]bool // of those, the ones not found
}

func newLoader[V any](fetch func(context.Context, []string) (map[string]V, error), cfg LoaderConfig) *Loader[V] {
	return &Loader[V]{
		Loader:   dataloadgen.NewMappedLoader(fetch, dataloadgen.WithWait(cfg.Wait), dataloadgen.WithBatchCapacity(cfg.MaxBatch)),
		fetch:    fetch,
		maxBatch: max(cfg.MaxBatch, 1),
		gen:      cfg.gen,
		seen:     map[string]bool{},
		absent:   map[string]bool{},
	}
}

// LoadAll returns the values of keys (a key that does not exist is left
// out) with at most one statement, whatever the loader's wait.
func (x *Loader[V]) LoadAll(ctx context.Context, keys []string) (map[string]V, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var todo []string
	for _, k := range keys {
		if !x.seen[k] {
			todo = append(todo, k)
		}
	}
	for len(todo) > 0 {
		chunk := todo[:min(len(todo), x.maxBatch)]
		todo = todo[len(chunk):]
		got, err := x.fetch(ctx, chunk)
		if err != nil {
			return nil, err
		}
		for _, k := range chunk {
			x.seen[k] = true
			if v, ok := got[k]; ok {
				x.Loader.Prime(k, v) // a value cached before (a root read) stays
			} else {
				x.absent[k] = true
			}
		}
	}
	out := make(map[string]V, len(keys))
	for _, k := range keys {
		if x.absent[k] {
			continue
		}
		v, err := x.Loader.Load(ctx, k) // cached: returns at once
		if err != nil && !errors.Is(err, dataloadgen.ErrNotFound) {
			return nil, err
		}
		if err == nil {
			out[k] = v
		}
	}
	return out, nil
}

func (x *Loader[V]) newGeneration() {
	if x.gen != nil {
		x.gen.Add(1)
	}
}

// Prime caches a value read elsewhere (a root page), so LoadAll does not
// read it again.
func (x *Loader[V]) Prime(key string, v V) {
	x.mu.Lock()
	x.seen[key] = true
	delete(x.absent, key)
	x.mu.Unlock()
	x.Loader.Prime(key, v)
}

// Clear forgets key, after a write changed what it reads; relationships
// attached before the write are attached again when next asked for.
func (x *Loader[V]) Clear(key string) {
	x.newGeneration()
	x.mu.Lock()
	delete(x.seen, key)
	delete(x.absent, key)
	x.mu.Unlock()
	x.Loader.Clear(key)
}

// ClearAll forgets every key.
func (x *Loader[V]) ClearAll() {
	x.newGeneration()
	x.mu.Lock()
	clear(x.seen)
	clear(x.absent)
	x.mu.Unlock()
	x.Loader.ClearAll()
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
