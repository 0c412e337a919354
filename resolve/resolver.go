package resolve

import (
	"context"
	"errors"
	"sync"

	"github.com/google/uuid"
	"github.com/vikstrous/dataloadgen"

	"shipgraph/db"
	"shipgraph/files"
	"shipgraph/load"
	"shipgraph/model"
	"shipgraph/sharedlimit"
)

// Resolver is the handle of the resolver layer: the store and the
// dependencies New was given (read-only after it). Each method
// takes the request's principal explicitly (second parameter) and reads
// its loaders from the context, where Session put them (session.go).
type Resolver struct {
	DB *db.DB
	// Loaders tunes the loaders Session builds for each request.
	Loaders load.LoaderConfig
	// Files is the store of document files; nil answers file writes and
	// download URLs as unavailable.
	Files *files.Store
	// Webhooks are the webhook settings (webhooks.go).
	WebhookConfig WebhookConfig
	// Tracking is the tracking engine (tracking_engine.go); nil: none.
	Tracking Tracker
	// DocumentJobs is the document processing (document_processing.go);
	// nil: documents are not processed.
	DocumentJobs DocumentJobs
	// DataSync is the data sync (datasync.go); nil: destinations are
	// refused as unavailable.
	DataSync DataSync

	// Shared, when set (REDIS_URL), counts per-key limits over every
	// instance: the test deliveries' (webhook_trigger.go).
	Shared *sharedlimit.Limits

	// trials are the per-key limiters of test deliveries
	// (webhook_trigger.go): token id → *rate.Limiter; without Shared, or
	// while Redis does not answer.
	trials sync.Map
}

// Deps are the resolver layer's dependencies besides the store; each is
// optional (see the fields of Resolver for what nil means).
type Deps struct {
	// Loaders tunes the loaders of each request; zero is
	// load.DefaultLoaderConfig.
	Loaders      load.LoaderConfig
	Files        *files.Store
	Webhooks     WebhookConfig
	Tracking     Tracker
	DocumentJobs DocumentJobs
	Shared       *sharedlimit.Limits
	DataSync     DataSync
}

// New returns the resolver layer over store with its dependencies (the
// composition root, package app, builds the process' one).
func New(store *db.DB, d Deps) *Resolver {
	if d.Loaders == (load.LoaderConfig{}) {
		d.Loaders = load.DefaultLoaderConfig
	}
	return &Resolver{DB: store, Loaders: d.Loaders, Files: d.Files, WebhookConfig: d.Webhooks, Tracking: d.Tracking,
		DocumentJobs: d.DocumentJobs, Shared: d.Shared, DataSync: d.DataSync}
}

// Load attaches to rows the relationships plan names (load.Load): what a
// caller's response shows below the records it read or wrote.
func Load[T any](ctx context.Context, rows []T, plan *load.Plan) error {
	return load.Load(ctx, rows, plan)
}

// validID reports whether id is a UUID; anything else can never exist, so
// callers answer not-found without a query.
func validID(id string) bool {
	_, err := uuid.Parse(id)
	return err == nil && len(id) == 36
}

// loadOne loads a to-one relation: a missing or empty id is null, and so is
// a record the loader did not find (deleted, or not visible to the account).
func loadOne[T any](ctx context.Context, l *load.Loader[*T], id *string) (*T, error) {
	if id == nil || *id == "" {
		return nil, nil
	}
	v, err := l.Load(ctx, *id)
	if errors.Is(err, dataloadgen.ErrNotFound) {
		return nil, nil
	}
	return v, err
}

// loadByID is loadOne for lookups by a client-supplied id.
func loadByID[T any](ctx context.Context, l *load.Loader[*T], id string) (*T, error) {
	if !validID(id) {
		return nil, nil
	}
	return loadOne(ctx, l, &id)
}

// loadMany loads a to-many relation; the loader always has an entry.
func loadMany[T any](ctx context.Context, l *load.Loader[[]T], id string) ([]T, error) {
	v, err := l.Load(ctx, id)
	if errors.Is(err, dataloadgen.ErrNotFound) {
		return []T{}, nil
	}
	return v, err
}

// principal checks that the request has a principal (the caller passed
// the one its transport authenticated) and returns it with the request's
// loaders (load.For): every read starts here.
func principal(ctx context.Context, p *model.Principal) (*model.Principal, *load.Loaders, error) {
	if _, err := authenticated(p); err != nil {
		return nil, nil, err
	}
	l, err := load.For(ctx)
	if err != nil {
		return nil, nil, err
	}
	return p, l, nil
}

// begin is principal for a read that runs plan: the columns the plan
// selects are decided before the read (load.Plan.Select).
func begin(ctx context.Context, p *model.Principal, plan *load.Plan) (*model.Principal, *load.Loaders, error) {
	p, l, err := principal(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	plan.Select(l)
	return p, l, nil
}

// authenticated and mayWrite check the principal the caller passed.
var (
	authenticated = model.Authenticated
	mayWrite      = model.MayWrite
)

// Malformed marks an error a transport found reading a write's request
// before it could say what the request asks (a body that is not JSON or
// not the JSON:API shape, the wrong content type, a value of the wrong type
// for a write that reads it first): a write reports it right after
// checking that the key may write at all, before it looks its target up
// or checks a stricter role. An unmarked input error (a command's Invalid)
// is reported once the target is found. Nil stays nil.
func Malformed(err error) error {
	if err == nil {
		return nil
	}
	return &malformed{err}
}

type malformed struct{ err error }

func (m *malformed) Error() string { return m.err.Error() }
func (m *malformed) Unwrap() error { return m.err }

// checkRequest is what every write checks first: the key may write (403),
// then a request Malformed marks (returned unmarked).
func checkRequest(p *model.Principal, invalid error) error {
	if _, err := mayWrite(p); err != nil {
		return err
	}
	var m *malformed
	if errors.As(invalid, &m) {
		return m.err
	}
	return nil
}

// writer returns the principal of a request that may write, and its
// loaders (which writes clear).
func writer(ctx context.Context, p *model.Principal) (*model.Principal, *load.Loaders, error) {
	if _, err := mayWrite(p); err != nil {
		return nil, nil, err
	}
	return principal(ctx, p)
}

// writeTarget checks what a write on one record checks first: the key may
// write, the request is not malformed, the record (read through loader) is
// the account's, and then the input errors the transport found decoding it
// (invalid).
func writeTarget[T any](ctx context.Context, p *model.Principal, loader func(*load.Loaders) *load.Loader[*T], id, what string, invalid error) (*model.Principal, *load.Loaders, *T, error) {
	if err := checkRequest(p, invalid); err != nil {
		return nil, nil, nil, err
	}
	p, l, err := writer(ctx, p)
	if err != nil {
		return nil, nil, nil, err
	}
	v, err := loadByID(ctx, loader(l), id)
	if err != nil {
		return nil, nil, nil, err
	}
	if v == nil {
		return nil, nil, nil, model.NotFound(what)
	}
	if invalid != nil {
		return nil, nil, nil, invalid
	}
	return p, l, v, nil
}

// invalidField is the 422 of an input member.
func invalidField(name, format string, args ...any) error {
	return model.Errorf(model.EINVALID, format, args...).AtField(name)
}
