// Package datasync exports an account's tracking data continuously to the
// account's own destinations — a PostgreSQL database, tables named and
// typed as the public service's DataSync tables (db/datasync_tables.go) —
// from the account's change log.
//
// One River job per destination (unique by its arguments, in every state
// but the final ones) works it: it copies each table in key order in
// pages (the backfill: bounded memory at any size), then follows the
// account's change log from the position the copy started at, reading
// again, by key, the rows each change names and upserting them (or
// deleting them when they are gone). A row read again is the row as it is
// now, so applying a change twice, after a crash between the
// destination's commit and the position's, writes the same row: nothing
// is lost (the position moves only after the destination committed) and
// nothing is doubled (upsert by key). A lease on the destination's row
// keeps a second worker away (a job rescued while the first still runs).
//
// The job runs for a while (RunFor), then snoozes for no time and runs
// again: River's rescuer and every instance's workers take it over when
// its process dies. A destination that fails records the error on its
// tables and snoozes with a backoff that doubles up to MaxBackoff: it
// delays only itself.
package datasync

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"shipgraph/db"
	"shipgraph/jobs"
	"shipgraph/model"
	"shipgraph/netguard"
)

// Queue is the River queue of the sync jobs.
const Queue = "datasync"

// Config is the sync's share of the configuration.
type Config struct {
	// Workers is how many destinations this process syncs at once (0:
	// it only enqueues).
	Workers int
	// Key is SYNC_SECRET_KEY: 32 bytes in base64 sealing destination URLs.
	Key string
	// AllowPrivate lets destinations be on loopback and private
	// addresses (WEBHOOK_ALLOW_PRIVATE_URLS).
	AllowPrivate bool
	// Poll is how often a following worker looks at its account's log.
	Poll time.Duration
	// RunFor is how long one job runs before it snoozes and runs again.
	RunFor time.Duration
	// Lease is how long a worker's hold on its destination lasts
	// unrenewed.
	Lease time.Duration
	// MaxBackoff bounds the wait after failures in a row.
	MaxBackoff time.Duration
	// Page is the rows a backfill page and the changes a log page hold.
	Page int
	// FilePages is how many backfill pages (row groups) one Parquet file
	// of an object store holds at most.
	FilePages int
}

// Defaults fills what c leaves zero.
func (c Config) withDefaults() Config {
	if c.Poll <= 0 {
		c.Poll = 200 * time.Millisecond
	}
	if c.RunFor <= 0 {
		c.RunFor = 20 * time.Second
	}
	if c.Lease <= 0 {
		c.Lease = 30 * time.Second
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 30 * time.Second
	}
	if c.Page <= 0 {
		c.Page = 1000
	}
	if c.FilePages <= 0 {
		c.FilePages = 100
	}
	return c
}

// JobArgs is the job of one destination.
type JobArgs struct {
	AccountID     string `json:"account_id"`
	DestinationID string `json:"destination_id"`
}

// Kind names the job in River's tables.
func (JobArgs) Kind() string { return "data_sync" }

// InsertOpts: one job per destination in any state but the final ones.
func (JobArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: 1000, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
		rivertype.JobStateRunning, rivertype.JobStateScheduled}}}
}

// Syncer runs the sync jobs on the process' job engine.
type Syncer struct {
	store *db.DB
	jobs  *jobs.Engine
	c     Config
	seal  *Sealer
	log   *slog.Logger
}

// New builds the syncer and registers its queue on the job engine (before
// it opens).
func New(store *db.DB, j *jobs.Engine, c Config, log *slog.Logger) (*Syncer, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	seal, err := NewSealer(c.Key)
	if err != nil {
		return nil, err
	}
	s := &Syncer{store: store, jobs: j, c: c.withDefaults(), seal: seal, log: log}
	err = j.Register(jobs.Queue{Name: Queue, Workers: c.Workers, Register: func(w *river.Workers) {
		river.AddWorker(w, &worker{s: s})
	}})
	if err != nil {
		return nil, fmt.Errorf("datasync: %w", err)
	}
	return s, nil
}

// Sealer is the syncer's sealer (the API seals URLs with it).
func (s *Syncer) Sealer() *Sealer { return s.seal }

// AllowPrivate reports whether destinations may be on private addresses.
func (s *Syncer) AllowPrivate() bool { return s.c.AllowPrivate }

// Enqueue makes sure the destination's job exists (unique: a second one
// is not made).
func (s *Syncer) Enqueue(ctx context.Context, accountID, id string) error {
	_, err := s.jobs.Insert(ctx, JobArgs{AccountID: accountID, DestinationID: id}, nil)
	return err
}

type worker struct {
	river.WorkerDefaults[JobArgs]
	s *Syncer
}

// Timeout: the job ends itself after RunFor; the engine's deadline is
// kept above it.
func (w *worker) Timeout(*river.Job[JobArgs]) time.Duration { return w.s.c.RunFor + time.Minute }

func (w *worker) Work(ctx context.Context, job *river.Job[JobArgs]) error {
	return w.s.run(ctx, job.Args)
}

// backoff is the wait after n failures in a row.
func (s *Syncer) backoff(n int) time.Duration {
	d := time.Second
	for i := 1; i < n && d < s.c.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.c.MaxBackoff)
}

// run works one destination for up to RunFor.
func (s *Syncer) run(ctx context.Context, a JobArgs) error {
	d, err := s.store.GetSyncDestination(ctx, a.AccountID, a.DestinationID)
	if model.ErrorCode(err) == model.ENOTFOUND {
		return nil // deleted: the job ends
	}
	if err != nil {
		return river.JobSnooze(s.c.Poll * 5)
	}
	if d.Paused {
		return nil // resume enqueues again
	}
	owner := uuid.NewString()
	now := time.Now()
	release := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = s.store.SyncRelease(rctx, a.AccountID, a.DestinationID, owner)
	}
	ok, err := s.store.SyncLease(ctx, a.AccountID, a.DestinationID, owner, now, now.Add(s.c.Lease))
	if err != nil {
		// The lease may be taken all the same: a cancel (a stop of
		// the jobs) that came after the statement's commit fails it.
		// Given back, it does not hold the destination idle until it
		// expires.
		release()
		return river.JobSnooze(s.c.Poll * 5)
	}
	if !ok {
		return river.JobSnooze(s.c.Lease / 2)
	}
	defer release()
	err = s.follow(ctx, d, owner)
	if err == nil || ctx.Err() != nil {
		return river.JobSnooze(0)
	}
	s.log.Warn("datasync: destination failed", "account", d.AccountID, "destination", d.ID, "err", err)
	n, ferr := s.store.SyncFailed(context.WithoutCancel(ctx), d.AccountID, d.ID, d.Tables, err.Error(), time.Now())
	if ferr != nil {
		n = 1
	}
	return river.JobSnooze(s.backoff(n))
}

// target is where a destination's rows go.
type target interface {
	Prepare(ctx context.Context, tables []*db.SyncTable) error
	Reset(ctx context.Context, t *db.SyncTable) error
	Apply(ctx context.Context, t *db.SyncTable, b batch) error
	Close() error
}

// batch is one write to a destination's table.
type batch struct {
	rows    []db.SyncRow
	deletes []string
	// pos is a log position the rows are at least as recent as (the
	// object store's _position).
	pos int64
	// name is the batch's name, the same when it is written again after
	// a crash (the object store's file name).
	name string
	at   time.Time
}

// pgTarget is a PostgreSQL destination.
type pgTarget struct{ *db.SyncTarget }

func (t pgTarget) Apply(ctx context.Context, tb *db.SyncTable, b batch) error {
	return t.SyncTarget.Apply(ctx, tb, b.rows, b.deletes, b.at)
}

func (s *Syncer) open(ctx context.Context, d *db.SyncDestination) (target, error) {
	sealed, err := s.store.SyncDestinationSecret(ctx, d.AccountID, d.ID)
	if err != nil {
		return nil, err
	}
	raw, err := s.seal.Open(sealed)
	if err != nil {
		return nil, err
	}
	switch d.Kind {
	case "postgres":
		conn, schema, err := PostgresURL(raw)
		if err != nil {
			return nil, err
		}
		var dial *guardedDialer
		if !s.c.AllowPrivate {
			dial = &guardedDialer{d: net.Dialer{Timeout: 10 * time.Second, Control: netguard.Control}}
		}
		var t *db.SyncTarget
		if dial != nil {
			t, err = db.OpenSyncTarget(conn, schema, dial)
		} else {
			t, err = db.OpenSyncTarget(conn, schema, nil)
		}
		if err != nil {
			return nil, err
		}
		return pgTarget{t}, nil
	case KindObjectStore:
		return openObjectTarget(ctx, raw, s.c.AllowPrivate)
	}
	return nil, fmt.Errorf("datasync: destinations of kind %q are not supported", d.Kind)
}

// guardedDialer dials through netguard's Control (no private address).
type guardedDialer struct{ d net.Dialer }

func (g *guardedDialer) Dial(network, addr string) (net.Conn, error) { return g.d.Dial(network, addr) }
func (g *guardedDialer) DialTimeout(network, addr string, timeout time.Duration) (net.Conn, error) {
	d := g.d
	d.Timeout = timeout
	return d.Dial(network, addr)
}

// PostgresURL splits a destination URL into the connection URL and the
// schema its tables go to (the schema query parameter, default public).
func PostgresURL(raw string) (conn, schema string, err error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", "", model.Errorf(model.EINVALID, "a PostgreSQL destination's url is postgres://user:password@host:port/database").AtField("url")
	}
	q := u.Query()
	schema = q.Get("schema")
	q.Del("schema")
	u.RawQuery = q.Encode()
	return u.String(), schema, nil
}

// follow syncs d until RunFor passed or ctx ends.
func (s *Syncer) follow(ctx context.Context, d *db.SyncDestination, owner string) error {
	t, err := s.open(ctx, d)
	if err != nil {
		return err
	}
	defer t.Close()
	var tables []*db.SyncTable
	for _, name := range d.Tables {
		if tb := db.LookupSyncTable(name); tb != nil {
			tables = append(tables, tb)
		}
	}
	if err := t.Prepare(ctx, tables); err != nil {
		return err
	}
	start := time.Now()
	renewed := start
	failing := d.Failures > 0
	for time.Since(start) < s.c.RunFor && ctx.Err() == nil {
		moved, err := s.step(ctx, d, t, tables)
		if err != nil {
			return err
		}
		if failing {
			failing = false
			if err := s.store.SyncSucceeded(ctx, d.AccountID, d.ID); err != nil {
				return err
			}
		}
		if time.Since(renewed) > s.c.Lease/3 {
			now := time.Now()
			ok, err := s.store.SyncLease(ctx, d.AccountID, d.ID, owner, now, now.Add(s.c.Lease))
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			renewed = now
		}
		if moved {
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(s.c.Poll):
		}
		cur, err := s.store.GetSyncDestination(ctx, d.AccountID, d.ID)
		if err != nil || cur.Paused {
			return nil // deleted or paused: the next run ends the job
		}
		if !sameTables(cur.Tables, d.Tables) {
			return nil
		}
	}
	return nil
}

func sameTables(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// step does one bounded piece of work: a backfill page of one table, or
// one page of the log applied to every following table. It reports
// whether it did anything.
func (s *Syncer) step(ctx context.Context, d *db.SyncDestination, t target, tables []*db.SyncTable) (bool, error) {
	names := make([]string, len(tables))
	for i, tb := range tables {
		names[i] = tb.Name
	}
	statuses, err := s.store.SyncStatuses(ctx, d.AccountID, d.ID, names)
	if err != nil {
		return false, err
	}
	byName := map[string]db.SyncTableStatus{}
	for _, st := range statuses {
		byName[st.Table] = st
	}
	for _, tb := range tables {
		st := byName[tb.Name]
		if st.Phase != "backfill" {
			continue
		}
		if st.BackfillHead < 0 {
			// A copy from scratch: empty the table, then note where the
			// log stands before the first page is read, so that every
			// change the copy may miss is after it.
			if err := t.Reset(ctx, tb); err != nil {
				return false, err
			}
			head, err := s.store.SyncLogHead(ctx, d.AccountID)
			if err != nil {
				return false, err
			}
			return true, s.store.SyncBackfillStarted(ctx, d.AccountID, d.ID, tb.Name, head)
		}
		if ot, ok := t.(*objectTarget); ok {
			return true, s.backfillFile(ctx, d, ot, tb, st)
		}
		rows, err := s.store.SyncPage(ctx, d.AccountID, tb, st.BackfillAfter, s.c.Page)
		if err != nil {
			return false, err
		}
		now := time.Now()
		b := batch{rows: rows, pos: st.BackfillHead, name: batchName(st.BackfillHead, true, st.BackfillAfter), at: now}
		if err := s.apply(ctx, t, tb, b); err != nil {
			return false, err
		}
		after := st.BackfillAfter
		if len(rows) > 0 {
			after = rows[len(rows)-1].Key()
		}
		return true, s.store.SyncBackfillPage(ctx, d.AccountID, d.ID, tb.Name, after, len(rows), len(rows) < s.c.Page, now)
	}
	from := int64(-1)
	for _, tb := range tables {
		if p := byName[tb.Name].Pos; from < 0 || p < from {
			from = p
		}
	}
	if from < 0 {
		return false, nil
	}
	page, err := s.store.SyncLogPage(ctx, d.AccountID, from, s.c.Page)
	if err != nil || len(page.Changes) == 0 {
		return false, err
	}
	if page.Gap {
		// Changes were pruned before this destination read them: what
		// they did is known only to a copy from scratch.
		s.log.Warn("datasync: the change log was pruned past a destination's position: copying again", "account", d.AccountID, "destination", d.ID)
		_, err := s.store.ResyncSyncDestination(ctx, d.AccountID, d.ID)
		return true, err
	}
	type work struct {
		keys    map[string]bool
		parents map[string]map[string]bool
	}
	todo := map[string]*work{}
	for _, tb := range tables {
		todo[tb.Name] = &work{keys: map[string]bool{}, parents: map[string]map[string]bool{}}
	}
	for _, c := range page.Changes {
		if w := todo[db.SyncTableOf(c.Type)]; w != nil && c.Pos > byName[db.SyncTableOf(c.Type)].Pos {
			w.keys[c.RecordID] = true
		}
		for _, tb := range tables {
			if tb.ReadsParent(c.Type) && c.Pos > byName[tb.Name].Pos {
				w := todo[tb.Name]
				if w.parents[c.Type] == nil {
					w.parents[c.Type] = map[string]bool{}
				}
				w.parents[c.Type][c.RecordID] = true
			}
		}
	}
	now := time.Now()
	for _, tb := range tables {
		st := byName[tb.Name]
		if st.Pos >= page.Next {
			continue
		}
		w := todo[tb.Name]
		n := 0
		if len(w.keys)+len(w.parents) > 0 {
			parents := map[string][]string{}
			for typ, ids := range w.parents {
				parents[typ] = setKeys(ids)
			}
			rows, err := s.store.SyncRows(ctx, d.AccountID, tb, setKeys(w.keys), parents)
			if err != nil {
				return false, err
			}
			for _, r := range rows {
				delete(w.keys, r.Key())
			}
			gone := setKeys(w.keys)
			if page.Barrier != 0 {
				// With a synchronous standby: what goes to the
				// destination must be on it (db/standby.go), the
				// records just read included (a barrier after them;
				// readers' barriers are shared).
				if err := s.store.AwaitStandbyNow(ctx); err != nil {
					return false, err
				}
			}
			// Named by where the table's batch starts (its position
			// before the page), not where the page ends: a batch
			// written again, after its file was written and its
			// manifest or the position's update failed, reads from the
			// same position but may end further on (the log moved
			// meanwhile) and must replace its first file.
			b := batch{rows: rows, deletes: gone, pos: page.Next, name: batchName(st.Pos, false, ""), at: now}
			if err := s.apply(ctx, t, tb, b); err != nil {
				return false, err
			}
			n = len(rows) + len(gone)
		}
		if _, err := s.store.SyncAdvance(ctx, d.AccountID, d.ID, tb.Name, st.Pos, page.Next, n, now); err != nil {
			return false, err
		}
	}
	return true, nil
}

// applyTimeout bounds one write to a destination: a destination that
// hangs fails the run (and backs off) instead of holding a worker.
const applyTimeout = time.Minute

func (s *Syncer) apply(ctx context.Context, t target, tb *db.SyncTable, b batch) error {
	ctx, cancel := context.WithTimeout(ctx, applyTimeout)
	defer cancel()
	return t.Apply(ctx, tb, b)
}

// backfillFile copies pages of a table into one Parquet file of an
// object store, one row group a page (memory holds one page), until the
// table ends, FilePages pages were read or a third of the lease passed
// (the lease is renewed between steps), then stores the last key copied.
// Cut short, the file is never completed and the copy starts again after
// the last key stored, under the same name.
func (s *Syncer) backfillFile(ctx context.Context, d *db.SyncDestination, t *objectTarget, tb *db.SyncTable, st db.SyncTableStatus) error {
	f, err := t.begin(ctx, tb, batchName(st.BackfillHead, true, st.BackfillAfter), st.BackfillHead)
	if err != nil {
		return err
	}
	start := time.Now()
	after, total, done := st.BackfillAfter, 0, false
	for pages := 0; pages < s.c.FilePages && time.Since(start) < s.c.Lease/3; pages++ {
		rows, err := s.store.SyncPage(ctx, d.AccountID, tb, after, s.c.Page)
		if err != nil {
			f.abort()
			return err
		}
		if err := f.write(rows, nil); err != nil {
			f.abort()
			return err
		}
		total += len(rows)
		if len(rows) > 0 {
			after = rows[len(rows)-1].Key()
		}
		if len(rows) < s.c.Page {
			done = true
			break
		}
	}
	now := time.Now()
	if total > 0 {
		if err := f.commit(ctx, now); err != nil {
			return err
		}
	} else {
		f.abort()
	}
	return s.store.SyncBackfillPage(ctx, d.AccountID, d.ID, tb.Name, after, total, done, now)
}

func setKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Seal encrypts a destination URL for storage.
func (s *Syncer) Seal(u string) ([]byte, error) { return s.seal.Seal(u) }
