// Package jobs is the process' one job engine: a River client on the
// store's PostgreSQL, built once by the composition root (package app).
// The components with durable background work — tracking polls and their
// schedule (carrier/tracking), document processing (docproc) — register
// their queue, workers and periodic jobs on it, and insert their jobs
// through it, in the transaction that writes what the job is about.
//
// The engine is built in two steps, like an http.ServeMux before it
// serves: New, then every component's constructor registers (Register),
// then Open builds the River client; Start and Stop run it. A process
// that works no queue (every Queue's Workers 0) only inserts.
package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivertype"

	"shipgraph/db"
)

// Config is the engine's share of the configuration.
type Config struct {
	// JobTimeout bounds one job's run (a worker may ask for another with
	// River's Timeout method).
	JobTimeout time.Duration
	// RescueAfter is when a running job whose process died runs again.
	RescueAfter time.Duration
	// FetchInterval is how often workers look for jobs besides the
	// wake-ups (and the only way with PollOnly).
	FetchInterval time.Duration
	// PollOnly: no LISTEN (behind PgBouncer in transaction mode).
	PollOnly bool
	// MaxAttempts is how often a job runs before it is discarded, unless
	// its InsertOpts say otherwise.
	MaxAttempts int
	// Logger gets River's log, its informational records at debug level.
	Logger *slog.Logger
}

// Queue is one component's share of the engine.
type Queue struct {
	// Name is the River queue.
	Name string
	// Workers is how many of its jobs this process works at once; 0:
	// this process only inserts them.
	Workers int
	// Register adds the queue's workers to the bundle.
	Register func(*river.Workers)
	// Periodic are the queue's periodic jobs, run by the leader among
	// the processes that work it.
	Periodic []*river.PeriodicJob
	// OnStart are jobs a process that works the queue inserts when it
	// starts, before River's client: its producers' first fetch finds
	// them, without the leader's election and its periodic enqueuer's
	// stagger (up to a second) in between. Give them unique InsertOpts:
	// two processes starting together, or a periodic job of the same
	// kind and arguments while one still waits or runs, then insert one.
	OnStart []river.JobArgs
}

// ErrNotOpen is the answer of an insert before Open.
var ErrNotOpen = errors.New("jobs: the job engine is not open")

// Engine is the job engine.
type Engine struct {
	store   *db.DB
	c       Config
	queues  []Queue
	client  *river.Client[*sql.Tx]
	mu      sync.Mutex
	started bool
}

// New starts building the engine over store: components Register, then
// Open.
func New(store *db.DB, c Config) *Engine {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return &Engine{store: store, c: c}
}

// Register adds a component's queue; it fails once the engine is open.
func (e *Engine) Register(q Queue) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.client != nil {
		return fmt.Errorf("jobs: queue %q registered after Open", q.Name)
	}
	e.queues = append(e.queues, q)
	return nil
}

// Open builds the River client with every queue registered.
func (e *Engine) Open() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.client != nil {
		return nil
	}
	workers := river.NewWorkers()
	rc := &river.Config{
		Logger:               slog.New(demoted{e.c.Logger.Handler()}),
		Workers:              workers,
		JobTimeout:           e.c.JobTimeout,
		RescueStuckJobsAfter: e.c.RescueAfter,
		FetchPollInterval:    e.c.FetchInterval,
		FetchCooldown:        min(e.c.FetchInterval, river.FetchCooldownDefault),
		PollOnly:             e.c.PollOnly,
		MaxAttempts:          e.c.MaxAttempts,
	}
	for _, q := range e.queues {
		if q.Register != nil {
			q.Register(workers)
		}
		if q.Workers > 0 {
			if rc.Queues == nil {
				rc.Queues = map[string]river.QueueConfig{}
			}
			rc.Queues[q.Name] = river.QueueConfig{MaxWorkers: q.Workers}
			rc.PeriodicJobs = append(rc.PeriodicJobs, q.Periodic...)
		}
	}
	client, err := river.NewClient(riverdatabasesql.New(e.store.SQL()), rc)
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	e.client = client
	return nil
}

// works reports whether this process works any queue.
func (e *Engine) works() bool {
	for _, q := range e.queues {
		if q.Workers > 0 {
			return true
		}
	}
	return false
}

func (e *Engine) open() (*river.Client[*sql.Tx], error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.client == nil {
		return nil, ErrNotOpen
	}
	return e.client, nil
}

// Start works the queues this process works (none: nothing starts). River
// would stop hard when ctx ends: pass a context that outlives the
// shutdown and call Stop.
func (e *Engine) Start(ctx context.Context) error {
	client, err := e.open()
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started || !e.works() {
		return nil
	}
	var first []river.InsertManyParams
	for _, q := range e.queues {
		if q.Workers > 0 {
			for _, a := range q.OnStart {
				first = append(first, river.InsertManyParams{Args: a})
			}
		}
	}
	if len(first) > 0 {
		if _, err := client.InsertMany(ctx, first); err != nil {
			return fmt.Errorf("jobs: the jobs at start: %w", err)
		}
	}
	if err := client.Start(ctx); err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	e.started = true
	return nil
}

// Stop lets running jobs finish until ctx ends, then cancels them (and
// waits up to five seconds for them to return).
func (e *Engine) Stop(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.started {
		return nil
	}
	e.started = false
	err := e.client.Stop(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		hard, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return e.client.StopAndCancel(hard)
	}
	return err
}

// Insert inserts a job now, outside any transaction: for work whose
// trigger wrote nothing (a refresh asked for).
func (e *Engine) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	client, err := e.open()
	if err != nil {
		return nil, err
	}
	return client.Insert(ctx, args, opts)
}

// InsertTx inserts a job in tx: it exists exactly when tx commits.
func (e *Engine) InsertTx(ctx context.Context, tx *sql.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	client, err := e.open()
	if err != nil {
		return nil, err
	}
	return client.InsertTx(ctx, tx, args, opts)
}

// InsertManyTx inserts jobs in tx, and reports for each (in params'
// order) whether it was skipped as a duplicate of a unique job waiting or
// running.
func (e *Engine) InsertManyTx(ctx context.Context, tx *sql.Tx, params []river.InsertManyParams) (skipped []bool, err error) {
	client, err := e.open()
	if err != nil {
		return nil, err
	}
	res, err := client.InsertManyTx(ctx, tx, params)
	if err != nil {
		return nil, err
	}
	skipped = make([]bool, len(res))
	for i, r := range res {
		skipped[i] = r.UniqueSkippedAsDuplicate
	}
	return skipped, nil
}

// Retry makes a job waiting for a later time run now.
func (e *Engine) Retry(ctx context.Context, id int64) error {
	client, err := e.open()
	if err != nil {
		return err
	}
	_, err = client.JobRetry(ctx, id)
	return err
}

// Subscribe reports the jobs that end in the kinds of event given, until
// cancel (tests and metrics wait on it).
func (e *Engine) Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func(), error) {
	client, err := e.open()
	if err != nil {
		return nil, nil, err
	}
	ch, cancel := client.Subscribe(kinds...)
	return ch, cancel, nil
}

// demoted hands River's log records on, its informational ones (job
// counts every few seconds, starts and stops) at debug level: the
// components log what an operator needs themselves; LOG_LEVEL=debug shows
// River's too.
type demoted struct{ slog.Handler }

func (d demoted) Enabled(ctx context.Context, l slog.Level) bool {
	return d.Handler.Enabled(ctx, demote(l))
}

func (d demoted) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demote(r.Level)
	return d.Handler.Handle(ctx, r)
}

func (d demoted) WithAttrs(as []slog.Attr) slog.Handler { return demoted{d.Handler.WithAttrs(as)} }
func (d demoted) WithGroup(name string) slog.Handler    { return demoted{d.Handler.WithGroup(name)} }

func demote(l slog.Level) slog.Level {
	if l == slog.LevelInfo {
		return slog.LevelDebug
	}
	return l
}
