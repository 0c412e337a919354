package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vikstrous/dataloadgen"

	"shipgraph/catalog"
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

	// Webhooks, their notifications and the notifications' reference
	// objects.
	WebhookByID               *Loader[*model.Webhook]
	WebhookNotificationByID   *Loader[*model.WebhookNotification]
	ContainerUpdatedEventByID *Loader[*model.ContainerUpdatedEvent]
	TransportEventByID        *Loader[*model.TransportEvent]
	EstimatedEventByID        *Loader[*model.EstimatedEvent]
	TrackingRequestByID       *Loader[*model.TrackingRequest]
	PartyByID                 *Loader[*model.Party]
	// TrackingRequestsByShipmentID: a shipment's tracking requests.
	TrackingRequestsByShipmentID *Loader[[]*model.TrackingRequest]

	// The journey.
	VesselByID                   *Loader[*model.Vessel]
	TransportEventsByContainerID *Loader[[]*model.TransportEvent]
	RawEventsByContainerID       *Loader[[]*model.RawEvent]
	TransportEventIDsByContainer *Loader[[]string] // linkage alone
	RawEventIDsByContainer       *Loader[[]string] // linkage alone

	reads   []anyLoader // by catalog.Read.Index
	account string      // the account every read is scoped to

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

// NewLoaders builds the loaders of one request for one account: one per
// batch read of the catalogue (catalog.Reads), each reading through the
// store narrowed to the request's columns (plan.go), decided before the
// first read.
func NewLoaders(store *db.DB, accountID string, cfg LoaderConfig) *Loaders {
	l := &Loaders{store: store, account: accountID, reads: make([]anyLoader, len(catalog.Reads()))}
	cfg.gen = &l.gen
	for _, b := range bindings {
		b(l, accountID, cfg)
	}
	return l
}

// bindings fill the typed fields of Loaders, one per read of the catalogue
// (TestEveryReadHasALoader).
var bindings = []func(*Loaders, string, LoaderConfig){
	bind(catalog.AccountByID, func(l *Loaders) **Loader[*model.Account] { return &l.AccountByID }),
	bind(catalog.UserByID, func(l *Loaders) **Loader[*model.User] { return &l.UserByID }),
	bind(catalog.PortByID, func(l *Loaders) **Loader[*model.Port] { return &l.PortByID }),
	bind(catalog.MetroAreaByID, func(l *Loaders) **Loader[*model.MetroArea] { return &l.MetroAreaByID }),
	bind(catalog.TerminalByID, func(l *Loaders) **Loader[*model.Terminal] { return &l.TerminalByID }),
	bind(catalog.RailTerminalByID, func(l *Loaders) **Loader[*model.RailTerminal] { return &l.RailTerminalByID }),
	bind(catalog.ShipmentByID, func(l *Loaders) **Loader[*model.Shipment] { return &l.ShipmentByID }),
	bind(catalog.ContainerByID, func(l *Loaders) **Loader[*model.Container] { return &l.ContainerByID }),
	bind(catalog.DocumentByID, func(l *Loaders) **Loader[*model.Document] { return &l.DocumentByID }),
	bind(catalog.EmailSubmissionByID, func(l *Loaders) **Loader[*model.EmailSubmission] { return &l.EmailSubmissionByID }),
	bind(catalog.DocumentRepresentationByID, func(l *Loaders) **Loader[*model.DocumentRepresentation] { return &l.DocumentRepresentationByID }),
	bind(catalog.DefinitionByID, func(l *Loaders) **Loader[*model.CustomFieldDefinition] { return &l.DefinitionByID }),
	bind(catalog.ContainersByShipmentID, func(l *Loaders) **Loader[[]*model.Container] { return &l.ContainersByShipmentID }),
	bind(catalog.ContainerIDsByShipment, func(l *Loaders) **Loader[[]string] { return &l.ContainerIDsByShipment }),
	bind(catalog.ShipmentsByDocumentID, func(l *Loaders) **Loader[[]*model.Shipment] { return &l.ShipmentsByDocumentID }),
	bind(catalog.ContainersByDocumentID, func(l *Loaders) **Loader[[]*model.Container] { return &l.ContainersByDocumentID }),
	bind(catalog.DocumentsByShipmentID, func(l *Loaders) **Loader[[]*model.Document] { return &l.DocumentsByShipmentID }),
	bind(catalog.DocumentsByContainerID, func(l *Loaders) **Loader[[]*model.Document] { return &l.DocumentsByContainerID }),
	bind(catalog.OptionsByDefinitionID, func(l *Loaders) **Loader[[]*model.CustomFieldOption] { return &l.OptionsByDefinitionID }),
	bind(catalog.CustomFieldsByEntityID, func(l *Loaders) **Loader[[]*model.CustomField] { return &l.CustomFieldsByEntityID }),
	bind(catalog.DocumentsByEmailSubmissionID, func(l *Loaders) **Loader[[]*model.Document] { return &l.DocumentsByEmailSubmissionID }),
	bind(catalog.WebhookByID, func(l *Loaders) **Loader[*model.Webhook] { return &l.WebhookByID }),
	bind(catalog.WebhookNotificationByID, func(l *Loaders) **Loader[*model.WebhookNotification] { return &l.WebhookNotificationByID }),
	bind(catalog.ContainerUpdatedEventByID, func(l *Loaders) **Loader[*model.ContainerUpdatedEvent] { return &l.ContainerUpdatedEventByID }),
	bind(catalog.TransportEventByID, func(l *Loaders) **Loader[*model.TransportEvent] { return &l.TransportEventByID }),
	bind(catalog.EstimatedEventByID, func(l *Loaders) **Loader[*model.EstimatedEvent] { return &l.EstimatedEventByID }),
	bind(catalog.TrackingRequestByID, func(l *Loaders) **Loader[*model.TrackingRequest] { return &l.TrackingRequestByID }),
	bind(catalog.PartyByID, func(l *Loaders) **Loader[*model.Party] { return &l.PartyByID }),
	bind(catalog.TrackingRequestsByShipmentID, func(l *Loaders) **Loader[[]*model.TrackingRequest] {
		return &l.TrackingRequestsByShipmentID
	}),
	bind(catalog.VesselByID, func(l *Loaders) **Loader[*model.Vessel] { return &l.VesselByID }),
	bind(catalog.TransportEventsByContainerID, func(l *Loaders) **Loader[[]*model.TransportEvent] { return &l.TransportEventsByContainerID }),
	bind(catalog.RawEventsByContainerID, func(l *Loaders) **Loader[[]*model.RawEvent] { return &l.RawEventsByContainerID }),
	bind(catalog.TransportEventIDsByContainer, func(l *Loaders) **Loader[[]string] { return &l.TransportEventIDsByContainer }),
	bind(catalog.RawEventIDsByContainer, func(l *Loaders) **Loader[[]string] { return &l.RawEventIDsByContainer }),
}

// bind is the one loader constructor: the loader of read, stored in its
// typed field and by the read's index (which the plan uses).
func bind[V any](read *catalog.ReadOf[V], field func(*Loaders) **Loader[V]) func(*Loaders, string, LoaderConfig) {
	return func(l *Loaders, accountID string, cfg LoaderConfig) {
		ld := newLoader(func(ctx context.Context, ids []string) (map[string]V, error) {
			return read.Fetch(ctx, l.Store(ctx), accountID, ids)
		}, cfg)
		ld.part = read.Part
		*field(l) = ld
		l.reads[read.Index()] = ld
	}
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

// Loader is the loader of one relationship or record type, with the batch
// read behind it. The load plan, which knows every key of a level at once,
// does not wait: LoadAll reads the keys the loader has not seen in one
// statement of that read and keeps the values. Load answers from those
// values, or batches the keys that reach it within the loader's wait
// through a dataloadgen loader made at its first such key (most requests
// make none: a loader per read and request, with its closures and maps,
// was a tenth of a dashboard's allocations). Both dedupe and cache by key
// for the request.
type Loader[V any] struct {
	fetch    func(context.Context, []string) (map[string]V, error)
	part     func(ids []string) (db.JointPart, func() map[string]V) // the read as a part of a joint read
	maxBatch int
	wait     time.Duration
	gen      *atomic.Uint32

	mu     sync.Mutex
	vals   map[string]V    // values read or primed, by key
	absent map[string]bool // keys read through LoadAll and not found
	dl     *dataloadgen.Loader[string, V]
}

func newLoader[V any](fetch func(context.Context, []string) (map[string]V, error), cfg LoaderConfig) *Loader[V] {
	return &Loader[V]{fetch: fetch, maxBatch: max(cfg.MaxBatch, 1), wait: cfg.Wait, gen: cfg.gen}
}

// Load returns the value of key, dataloadgen.ErrNotFound when there is
// none. A key not seen before is read in a batch with the keys that reach
// the loader within its wait.
func (x *Loader[V]) Load(ctx context.Context, key string) (V, error) {
	x.mu.Lock()
	if v, ok := x.vals[key]; ok {
		x.mu.Unlock()
		return v, nil
	}
	if x.absent[key] {
		x.mu.Unlock()
		var zero V
		return zero, dataloadgen.ErrNotFound
	}
	if x.dl == nil {
		x.dl = dataloadgen.NewMappedLoader(x.fetch, dataloadgen.WithWait(x.wait), dataloadgen.WithBatchCapacity(x.maxBatch))
	}
	dl := x.dl
	x.mu.Unlock()
	v, err := dl.Load(ctx, key)
	if err == nil {
		x.mu.Lock()
		if _, ok := x.vals[key]; !ok { // a value kept meanwhile stays
			x.keep(key, v, 1)
		} else {
			v = x.vals[key]
		}
		x.mu.Unlock()
	}
	return v, err
}

// keep stores a value (x.mu held), making the map for about n keys.
func (x *Loader[V]) keep(key string, v V, n int) {
	if x.vals == nil {
		x.vals = make(map[string]V, n)
	}
	x.vals[key] = v
}

// LoadAll returns the values of keys (a key that does not exist is left
// out) with at most one statement, whatever the loader's wait.
func (x *Loader[V]) LoadAll(ctx context.Context, keys []string) (map[string]V, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	todo := keys
	for i, k := range keys {
		if _, ok := x.vals[k]; ok || x.absent[k] {
			// Some keys are known: read only the others.
			todo = append(make([]string, 0, len(keys)), keys[:i]...)
			for _, k := range keys[i+1:] {
				if _, ok := x.vals[k]; !ok && !x.absent[k] {
					todo = append(todo, k)
				}
			}
			break
		}
	}
	fresh := len(todo) == len(keys) && len(keys) <= x.maxBatch
	var got map[string]V
	// A batch read is keyed by ids the request already holds (index
	// probes, bounded by its keys): it runs without the two goroutines
	// database/sql and lib/pq start to watch a cancellable context for
	// every statement, and the request's context is checked before each
	// statement instead (docs/decisions.md).
	reads := context.WithoutCancel(ctx)
	for len(todo) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		chunk := todo[:min(len(todo), x.maxBatch)]
		todo = todo[len(chunk):]
		var err error
		got, err = x.fetch(reads, chunk)
		if err != nil {
			return nil, err
		}
		x.remember(chunk, got, len(keys))
	}
	if fresh && allIn(got, keys) {
		// One read of every key: its answer is the result (a map of
		// this call's own; the kept values are a copy).
		return got, nil
	}
	return x.kept(keys), nil
}

// kept is the values x keeps of keys (x.mu held).
func (x *Loader[V]) kept(keys []string) map[string]V {
	out := make(map[string]V, len(keys))
	for _, k := range keys {
		if v, ok := x.vals[k]; ok {
			out[k] = v
		}
	}
	return out
}

// allIn reports whether every key of got is one of keys (a read may
// answer a key in another spelling: upper-case uuids come back lower-case).
// remember keeps what got has of keys and marks the rest absent (x.mu
// held); n is the request's key count (keep's bound).
func (x *Loader[V]) remember(keys []string, got map[string]V, n int) {
	for _, k := range keys {
		if v, ok := got[k]; ok {
			x.keep(k, v, n)
		} else {
			if x.absent == nil {
				x.absent = map[string]bool{}
			}
			x.absent[k] = true
		}
	}
}

func allIn[V any](got map[string]V, keys []string) bool {
	if len(got) > len(keys) {
		return false
	}
	n := 0
	for _, k := range keys {
		if _, ok := got[k]; ok {
			n++
		}
	}
	return n == len(got)
}

func (x *Loader[V]) newGeneration() {
	if x.gen != nil {
		x.gen.Add(1)
	}
}

// Prime caches a value read elsewhere (a root page), so LoadAll does not
// read it again; a value cached before stays.
func (x *Loader[V]) Prime(key string, v V) {
	x.mu.Lock()
	delete(x.absent, key)
	if _, ok := x.vals[key]; !ok {
		x.keep(key, v, 8)
	}
	x.mu.Unlock()
}

// Clear forgets key, after a write changed what it reads; relationships
// attached before the write are attached again when next asked for.
func (x *Loader[V]) Clear(key string) {
	x.newGeneration()
	x.mu.Lock()
	delete(x.vals, key)
	delete(x.absent, key)
	if x.dl != nil {
		x.dl.Clear(key)
	}
	x.mu.Unlock()
}

// ClearAll forgets every key.
func (x *Loader[V]) ClearAll() {
	x.newGeneration()
	x.mu.Lock()
	clear(x.vals)
	clear(x.absent)
	if x.dl != nil {
		x.dl.ClearAll()
	}
	x.mu.Unlock()
}

type loadersKey struct{}

// WithLoaders returns ctx carrying l.
func WithLoaders(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, l)
}

// For returns the loaders of the request, which resolve.Session put in its
// context; a request without them is a wiring bug (resolve's methods
// answer an anonymous request before asking).
func For(ctx context.Context) (*Loaders, error) {
	l, ok := ctx.Value(loadersKey{}).(*Loaders)
	if !ok {
		return nil, model.Errorf(model.EINTERNAL, "loaders missing from request context")
	}
	return l, nil
}
