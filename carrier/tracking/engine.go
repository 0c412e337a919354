package tracking

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"golang.org/x/time/rate"

	"shipgraph/carrier/dcsa"
	"shipgraph/db"
	"shipgraph/jobs"
	"shipgraph/sharedlimit"
)

// Queue is the River queue of the polls.
const Queue = "tracking"

// PollArgs is one poll of one tracking request.
type PollArgs struct {
	AccountID string `json:"account_id"`
	RequestID string `json:"request_id"`
}

// Kind names the job in River's tables.
func (PollArgs) Kind() string { return "tracking_poll" }

// uniqueStates: one poll per request while one waits or runs (River
// requires pending, scheduled, available and running in the list).
var uniqueStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
	rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled}

// InsertOpts makes polls unique per request.
func (PollArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: uniqueStates}}
}

// scheduleArgs is the periodic round enqueuing due requests.
type scheduleArgs struct{}

func (scheduleArgs) Kind() string { return "tracking_schedule" }

func (scheduleArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: uniqueStates}}
}

// Engine polls carriers for tracking requests, on the process' job engine
// (package jobs): its polls and the periodic schedule are River jobs in
// the queue Queue.
type Engine struct {
	c      Config
	store  *db.DB
	log    *slog.Logger
	shared *sharedlimit.Limits
	conns  map[string]*limited
	jobs   *jobs.Engine
	mu     sync.Mutex
	// refresh: the per-process refresh limits by key (without Redis).
	refresh map[string]*rate.Limiter
	// lanes: the finished polls queued for the write transactions (apply.go).
	lanes lanes
	// vessels: the vessels this process wrote (apply.go).
	vessels vessels
	// turns: the carrier turns of snoozed polls.
	turns turns
	// written counts the polls this process wrote, up to analyzeAfter;
	// analyzing: the one-off analyze started; analyzed is closed when it
	// ended (apply.go).
	written   atomic.Int64
	analyzing atomic.Bool
	analyzed  chan struct{}
}

// limited is a connector behind its carrier's rate and concurrency limits.
type limited struct {
	Connector
	c    Carrier
	rate *rate.Limiter // per-process fallback of the rate
	sem  chan struct{} // per-process fallback of the concurrency
}

// Option adjusts New.
type Option func(*Engine)

// WithShared counts the carriers' limits over every instance in Redis.
func WithShared(l *sharedlimit.Limits) Option { return func(e *Engine) { e.shared = l } }

// WithConnector replaces a carrier's connector (tests; carriers that are
// not DCSA over HTTP).
func WithConnector(scac string, c Connector) Option {
	return func(e *Engine) {
		k := DefaultCarrier
		k.SCAC = scac
		if old := e.conns[scac]; old != nil {
			k = old.c
		}
		e.conns[scac] = newLimited(k, c)
	}
}

func newLimited(k Carrier, c Connector) *limited {
	l := &limited{Connector: c, c: k}
	if k.RatePerMinute > 0 {
		l.rate = rate.NewLimiter(rate.Limit(float64(k.RatePerMinute)/60), max(1, k.RatePerMinute/10))
	}
	if k.Concurrency > 0 {
		l.sem = make(chan struct{}, k.Concurrency)
	}
	return l
}

// New builds the engine over store with one connector per configured
// carrier and registers its queue on the job engine j (before j opens):
// c.Workers polls at once in this process (0: it only enqueues), and the
// periodic schedule on the leader of the processes that poll.
func New(c Config, store *db.DB, j *jobs.Engine, log *slog.Logger, opts ...Option) (*Engine, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{c: c, store: store, log: log, conns: map[string]*limited{}, jobs: j, analyzed: make(chan struct{})}
	// At most Writers write transactions at once (apply.go): on plain
	// PostgreSQL each keeps its connection, and the write statement's plan
	// on it, from one batch to the next (held only once they run).
	store.HoldTrackingConns(c.Writers)
	for _, k := range c.Carriers {
		conn, err := newDCSAConnector(k, c.MaxResponse, c.MaxEvents, c.Workers)
		if err != nil {
			return nil, err
		}
		e.conns[k.SCAC] = newLimited(k, conn)
	}
	for _, o := range opts {
		o(e)
	}
	q := jobs.Queue{Name: Queue, Workers: c.Workers, Register: func(w *river.Workers) {
		river.AddWorker(w, &pollWorker{e: e})
		river.AddWorker(w, river.WorkFunc(e.schedule))
	}}
	if c.Workers > 0 {
		// The first round runs as the process starts (OnStart): requests
		// overdue after a deploy or restart do not wait for the leader's
		// election and its periodic enqueuer's stagger (0-1 s). The
		// leader's rounds follow every ScheduleEvery, the first one
		// ScheduleEvery after it is elected: no RunOnStart, whose round
		// came a moment after the start's and claimed what it left (one
		// more claim per start, and a round at an unknown time for the
		// tests that count statements after the start's round).
		q.Periodic = []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(c.ScheduleEvery),
			func() (river.JobArgs, *river.InsertOpts) { return scheduleArgs{}, nil }, nil)}
		q.OnStart = []river.JobArgs{scheduleArgs{}}
	}
	if err := j.Register(q); err != nil {
		return nil, fmt.Errorf("tracking: %w", err)
	}
	return e, nil
}

// pollWorker runs the polls, each within PollTimeout.
type pollWorker struct {
	river.WorkerDefaults[PollArgs]
	e *Engine
}

func (w *pollWorker) Work(ctx context.Context, job *river.Job[PollArgs]) error {
	return w.e.work(ctx, job)
}

func (w *pollWorker) Timeout(*river.Job[PollArgs]) time.Duration { return w.e.c.PollTimeout }

// OnPolled calls f once each poll job ended (completed, failed, snoozed or
// cancelled in River's tables) until the returned stop: tests wait on it.
func (e *Engine) OnPolled(f func(PollArgs, rivertype.JobState)) (stop func(), err error) {
	ch, cancel, err := e.jobs.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed,
		river.EventKindJobSnoozed, river.EventKindJobCancelled)
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ev := range ch {
			var a PollArgs
			if ev.Job.Kind != a.Kind() || json.Unmarshal(ev.Job.EncodedArgs, &a) != nil {
				continue
			}
			f(a, ev.Job.State)
		}
	}()
	return func() { cancel(); wg.Wait() }, nil
}

// Serves reports whether a carrier connection is configured for scac
// (CARRIERS): a request for a line without one could never be polled.
func (e *Engine) Serves(scac string) bool { return e.conns[scac] != nil }

// EnqueuePollTx asks for a poll of a request in tx, the transaction that
// inserts it (River's transactional enqueueing): it exists exactly when
// tx commits. A poll already waiting or running for it stands.
func (e *Engine) EnqueuePollTx(ctx context.Context, tx *sql.Tx, accountID, requestID string) error {
	_, err := e.jobs.InsertTx(ctx, tx, PollArgs{AccountID: accountID, RequestID: requestID}, nil)
	return err
}

// PollLease is how long a request whose poll is enqueued or running is
// left to it: a poll that never reports back (its process died, its job
// lost) is made up for by the schedule after it.
func (e *Engine) PollLease() time.Duration { return e.c.RescueAfter + e.c.PollTimeout }

// RefreshContainer polls at once, first in line, every live request of the
// container's shipment, within key's refresh limit (RefreshLimit a minute,
// over every instance with sharedlimit): retryAfter > 0 when refused. A
// container of no live request refreshes nothing and answers as done.
func (e *Engine) RefreshContainer(ctx context.Context, key, accountID, containerID string) (retryAfter time.Duration, err error) {
	if wait := e.refreshAllowed(ctx, key); wait > 0 {
		return wait, nil
	}
	reqs, _, err := e.store.TrackingRequestsOfContainer(ctx, accountID, containerID)
	if err != nil {
		return 0, err
	}
	for _, r := range reqs {
		res, err := e.jobs.Insert(ctx, PollArgs{AccountID: r.AccountID, RequestID: r.ID}, &river.InsertOpts{Priority: 1})
		if err != nil {
			return 0, err
		}
		// A poll waiting for a later time (snoozed) runs now.
		if res.UniqueSkippedAsDuplicate && res.Job.State != rivertype.JobStateRunning && res.Job.ScheduledAt.After(time.Now()) {
			if err := e.jobs.Retry(ctx, res.Job.ID); err != nil {
				return 0, err
			}
		}
	}
	return 0, nil
}

// refreshAllowed takes one refresh of key: the wait when refused.
func (e *Engine) refreshAllowed(ctx context.Context, key string) time.Duration {
	if e.c.RefreshLimit <= 0 {
		return 0
	}
	if e.shared != nil {
		if wait, shared := e.shared.Allow(ctx, "refresh:"+key, e.c.RefreshLimit, e.c.RefreshLimit); shared {
			return wait
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.refresh == nil {
		e.refresh = map[string]*rate.Limiter{}
	}
	l := e.refresh[key]
	if l == nil {
		l = rate.NewLimiter(rate.Limit(float64(e.c.RefreshLimit)/60), e.c.RefreshLimit)
		e.refresh[key] = l
	}
	r := l.Reserve()
	if d := r.Delay(); d > 0 {
		r.Cancel()
		return d
	}
	return 0
}

// schedule is the periodic round: the due requests' polls, enqueued in the
// transaction that moves their next_poll_at ahead by a lease. A request
// whose poll is still waiting or running (River keeps one a request) gets
// no second one, and is due again at the next round instead of after the
// lease: a poll that recorded a retry (its next poll a backoff away) is
// still running until River records its end, and a round in between
// found the request due and its poll a duplicate.
func (e *Engine) schedule(ctx context.Context, _ *river.Job[scheduleArgs]) error {
	for {
		n, err := e.store.ClaimDueTrackingRequests(ctx, e.c.ScheduleBatch, e.PollLease(), e.c.ScheduleEvery, func(ctx context.Context, tx *sql.Tx, due []db.DueTracking) ([]db.DueTracking, error) {
			params := make([]river.InsertManyParams, len(due))
			for i, d := range due {
				params[i] = river.InsertManyParams{Args: PollArgs{AccountID: d.AccountID, RequestID: d.ID}}
			}
			skipped, err := e.jobs.InsertManyTx(ctx, tx, params)
			if err != nil {
				return nil, err
			}
			var again []db.DueTracking
			for i, s := range skipped {
				if s {
					again = append(again, due[i])
				}
			}
			return again, nil
		})
		if err != nil {
			return err
		}
		if n < e.c.ScheduleBatch {
			return nil
		}
	}
}

// backoff is the delay before retry n (1-based): RetryBase doubling per
// failure, with equal jitter.
func (e *Engine) backoff(n int) time.Duration {
	d := e.c.RetryBase << min(n-1, 20)
	return d/2 + rand.N(d/2+1)
}

// work runs one poll.
func (e *Engine) work(ctx context.Context, job *river.Job[PollArgs]) error {
	_, err := e.poll(ctx, job.Args)
	var p postponed
	switch {
	case errors.As(err, &p):
		// Flow control (the carrier's limits, another transaction's hold
		// on the row), not a failure.
		e.log.Debug("tracking: poll postponed", "request", job.Args.RequestID, "why", p.why, "for", p.snooze.Duration)
		return p.snooze
	case err != nil:
		e.log.Warn("tracking: poll failed", "request", job.Args.RequestID, "err", err)
	}
	return err
}

var errBusy = errors.New("carrier busy")

func (e *Engine) poll(ctx context.Context, a PollArgs) (Result, error) {
	var res Result
	began := time.Now()
	t, err := e.store.TrackingPollTarget(ctx, a.AccountID, a.RequestID)
	stepRead.Observe(time.Since(began).Seconds())
	if errors.Is(err, sql.ErrNoRows) {
		return res, nil // deleted: nothing to do
	}
	if err != nil {
		return res, err
	}
	switch t.Status {
	case "pending", "awaiting_manifest", "created":
	default:
		return res, nil
	}
	conn := e.conns[t.Scac]
	if conn == nil {
		// No connector for the carrier: it cannot be reached, now or by
		// retrying.
		_, _, err := e.store.RecordTrackingRetry(ctx, db.TrackingRetry{AccountID: a.AccountID, RequestID: a.RequestID,
			NextPollAt: time.Now().Add(e.c.PollInterval), MaxRetries: e.c.MaxAttempts, FailReason: "shipping_line_unreachable",
			Regular: time.Now().Add(e.c.PollInterval), Final: t.Status != "created"})
		return res, err
	}
	asked := time.Now()
	events, err := e.fetch(ctx, conn, a.RequestID, queryFor(t.RequestType, t.RequestNumber))
	var b busyError
	if errors.As(err, &b) {
		// Snoozed until the limit frees (this poll's turn of the rate):
		// a little later, not earlier, so that it finds its turn due.
		postponedCarrier.Inc()
		return res, postpone(whyCarrier, b.after+rand.N(50*time.Millisecond))
	}
	now := time.Now()
	stepFetch.Observe(now.Sub(asked).Seconds())
	if errors.Is(err, ErrNotFound) {
		if t.Status == "created" {
			// Known before: a carrier that forgot a number is a failure
			// to retry, not the end.
			err = &CarrierError{Unrecognized, err}
		} else {
			reason := "not_found"
			return e.apply(ctx, Poll{AccountID: a.AccountID, RequestID: a.RequestID, Status: "failed", FailedReason: &reason})
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		reason := "retries_exhausted"
		var ce *CarrierError
		if errors.As(err, &ce) && ce.Kind == Unauthorized {
			reason = "shipping_line_unreachable"
		}
		n := t.RetryCount + 1
		_, _, rerr := e.store.RecordTrackingRetry(ctx, db.TrackingRetry{AccountID: a.AccountID, RequestID: a.RequestID,
			NextPollAt: now.Add(e.backoff(n)), MaxRetries: e.c.MaxAttempts, FailReason: reason,
			Regular: now.Add(e.c.PollInterval)})
		e.log.Info("tracking: carrier failed", "scac", t.Scac, "request", a.RequestID, "retry", n, "err", err)
		return res, rerr
	}
	o, _ := mapEvents(t.RequestType, t.RequestNumber, events)
	p := Poll{AccountID: a.AccountID, RequestID: a.RequestID, Status: o.status,
		StopAfterArrival: e.c.StopAfterArrival}
	next := now.Add(e.c.PollInterval)
	if o.status == "awaiting_manifest" {
		next = now.Add(e.c.AwaitingInterval)
	} else {
		p.Shipment, p.Containers, p.Events, p.Vessels = o.shipment, o.boxes, o.events, o.vessels
	}
	p.NextPollAt = &next
	res, err = e.apply(ctx, p)
	// Another transaction holds the request for a moment (the schedule's
	// claim, another instance's poll of it): the carrier's answer stands,
	// so it is written again a little later rather than the poll snoozed,
	// which would ask the carrier again and spend another turn of its rate.
	for wait := busyFirst; errors.Is(err, errTrackingBusy) && wait <= busyLast; wait *= 2 {
		e.log.Debug("tracking: request held by another transaction, writing the answer again", "request", a.RequestID, "in", wait)
		if err := sleep(ctx, wait/2+rand.N(wait/2+1)); err != nil {
			return res, err
		}
		res, err = e.apply(ctx, p)
	}
	if errors.Is(err, errTrackingBusy) {
		postponedRequest.Inc()
		// Held for long: look again soon, from the start.
		return res, postpone(whyRequest, time.Duration(20+rand.IntN(80))*time.Millisecond)
	}
	return res, err
}

// postponed is a poll snoozed (River's JobSnooze) and why: whyCarrier or
// whyRequest, the reasons of shipgraph_tracking_polls_postponed_total.
type postponed struct {
	why    string
	snooze *river.JobSnoozeError
}

const (
	whyCarrier = "carrier_busy"
	whyRequest = "request_busy"
)

func postpone(why string, d time.Duration) error {
	return postponed{why, river.JobSnooze(d).(*river.JobSnoozeError)}
}

func (p postponed) Error() string { return p.why + ": " + p.snooze.Error() }

// busyFirst and busyLast bound the waits (doubling) before a poll's answer
// is written again over a request another transaction holds: about 1.5 s
// in all, longer than the schedule's claim of a round holds its rows.
const (
	busyFirst = 50 * time.Millisecond
	busyLast  = 800 * time.Millisecond
)

// limitWait is the longest a poll waits in place for its carrier's rate
// or a free connection before it is snoozed instead: a short wait keeps
// the worker (no River round trip, no second read of the request), and a
// carrier's waiting polls are bounded by what its limits release within
// it, so one busy carrier does not take every worker.
const limitWait = time.Second

// fetch asks the carrier for request's events within its limits: the
// shared rate and concurrency over every instance when Redis answers,
// else this process'. A limit that frees within limitWait is waited for;
// otherwise errBusy, and the poll is snoozed for the wait the limit gave.
func (e *Engine) fetch(ctx context.Context, l *limited, request string, q Query) ([]dcsa.Event, error) {
	if l.c.RatePerMinute > 0 {
		if err := e.takeRate(ctx, l, request); err != nil {
			return nil, err
		}
	}
	if l.c.Concurrency > 0 {
		if e.shared != nil {
			release, ok := e.shared.Acquire("carrier:"+l.c.SCAC, l.c.Concurrency)
			if !ok {
				return nil, busy(time.Second)
			}
			defer release()
		}
		t := time.NewTimer(limitWait)
		select {
		case l.sem <- struct{}{}:
			t.Stop()
			defer func() { <-l.sem }()
		case <-t.C:
			return nil, busy(time.Second)
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	ctx, cancel := context.WithTimeout(ctx, l.c.Timeout)
	defer cancel()
	return l.Events(ctx, q)
}

// takeRate takes one request of the carrier's rate for request, waiting
// up to limitWait for it. This process' limiter hands out turns: a poll
// whose turn is further off is snoozed until it, keeping the turn, and
// takes it when it runs again here (turns); so a backlog of one carrier
// comes back at the carrier's rate instead of every refused poll trying
// again together (each try a read of the request and a River update).
func (e *Engine) takeRate(ctx context.Context, l *limited, request string) error {
	if e.shared != nil {
		for {
			wait, shared := e.shared.Allow(ctx, "carrier:"+l.c.SCAC, l.c.RatePerMinute, max(1, l.c.RatePerMinute/10))
			if !shared {
				break // Redis did not answer: this process' count decides
			}
			if wait <= 0 {
				return nil
			}
			if wait > limitWait {
				return busy(wait)
			}
			if err := sleep(ctx, wait); err != nil {
				return err
			}
		}
	}
	if at, ok := e.turns.take(request); ok {
		if d := time.Until(at); d <= limitWait {
			return sleep(ctx, d)
		}
		e.turns.keep(request, at) // back early: the turn stands
		return busy(time.Until(at))
	}
	r := l.rate.Reserve()
	d := r.Delay()
	if d > limitWait {
		e.turns.keep(request, time.Now().Add(d))
		return busy(d)
	}
	if err := sleep(ctx, d); err != nil {
		r.Cancel()
		return err
	}
	return nil
}

// turns are the carrier turns reserved for snoozed polls, by request:
// each a token of the carrier's rate taken for that time. A poll that
// runs again on another process (or never) leaves its turn unused: the
// carrier sees fewer requests, never more.
type turns struct {
	mu sync.Mutex
	at map[string]time.Time
}

// maxTurns bounds the memory: past it, turns long past are dropped.
const maxTurns = 100_000

func (t *turns) keep(request string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.at == nil {
		t.at = map[string]time.Time{}
	}
	if len(t.at) >= maxTurns {
		old := time.Now().Add(-time.Hour)
		for k, v := range t.at {
			if v.Before(old) {
				delete(t.at, k)
			}
		}
		if len(t.at) >= maxTurns {
			clear(t.at) // their polls take new turns
		}
	}
	t.at[request] = at
}

func (t *turns) take(request string) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.at[request]
	delete(t.at, request)
	return at, ok
}

// busyError is errBusy with the time after which the limit frees.
type busyError struct{ after time.Duration }

func (b busyError) Error() string        { return errBusy.Error() }
func (b busyError) Is(target error) bool { return target == errBusy }

func busy(after time.Duration) error { return busyError{after} }

// sleep waits d unless ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
