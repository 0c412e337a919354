package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Read replicas (DATABASE_REPLICA_URLS, docs/scaling.md).
//
// Routing. A request's context carries a session (WithSession, set by the
// HTTP chain after authentication). A statement goes to a replica only when
// its session allows replica reads, nothing was written in it yet, and the
// store method sending it reads (its read scope, DB.read: the method says
// what it does; the SQL text is never inspected). Everything else — write
// scopes, transactions, LISTEN, migrations, work without a session — goes
// to the primary. The session chooses its replica at its first read, for
// the account that read names, so one request reads from one place (a
// first read of reference data, which names no account, chooses again at
// the first read of an account's data unless its replica has that
// account's mark).
//
// Accounts. The account reaches the store once: as the argument of the
// store method, which names it in its scope (DB.read, DB.write, inTx). The
// session carries none.
//
// Read-your-writes. After a session wrote (a statement of a write scope, or
// a committed transaction), the written account's high-water mark is recorded
// before the answer is acknowledged (Acknowledge, called by the chain at
// the response's first byte; at once for a streaming session): the
// primary's WAL insert position, kept per account in this process and, with
// REDIS_URL, in Redis (SET-if-greater; every instance reads it). A session
// chooses a replica only when its replayed position
// (pg_last_wal_replay_lsn, polled every ReplicaPoll, and re-read on demand
// while a read waits) has reached the account's mark; otherwise it waits up
// to ReplicaWait for one, then reads from the primary. The rest of a
// session that wrote reads from the primary.
//
// Timelines. A failover gives the promoted standby a new timeline whose
// positions continue from the switch point, so a position names WAL only
// together with its timeline: a replica left on the old timeline (it
// streamed from the lost primary, and cannot follow) may have replayed
// beyond the switch point WAL the new primary never had, and would look
// caught up with marks of writes it will never see. The primary's
// timeline is sampled with its position, each replica's (the timeline of
// the WAL it receives; without a WAL receiver, or without the privilege to
// see it, that of its last restartpoint) with its replay position, and a
// replica on another timeline than the primary's is down until it follows.
//
// Lag and failures. The primary's WAL position is sampled every ReplicaPoll;
// a replica's lag is the age of the oldest sample it has not replayed. A
// replica whose lag exceeds ReplicaMaxLag, whose position could not be read
// within ReplicaMaxLag, or that is not in recovery, is skipped. A read that
// fails on a replica is sent again to the primary (a replica never makes a
// request fail); a connection failure also marks the replica down until
// its next successful poll.

// Defaults of the replica options.
const (
	DefaultReplicaWait   = 50 * time.Millisecond
	DefaultReplicaMaxLag = 5 * time.Second
	DefaultReplicaPoll   = 50 * time.Millisecond
)

// LSNStore keeps each account's high-water WAL position, shared by every
// instance that uses the same store (sharedlimit.Limits, with REDIS_URL).
type LSNStore interface {
	// AccountLSN is the highest position recorded for the account (0:
	// none). An error sends the session's reads to the primary.
	AccountLSN(ctx context.Context, accountID string) (uint64, error)
	// AdvanceAccountLSN raises the account's position to lsn, unless it is
	// higher already.
	AdvanceAccountLSN(ctx context.Context, accountID string, lsn uint64) error
}

// memoryLSNs is the per-process LSNStore: always kept, shared or not.
type memoryLSNs struct {
	mu sync.Mutex
	m  map[string]uint64
}

func (m *memoryLSNs) get(account string) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[account]
}

func (m *memoryLSNs) advance(account string, lsn uint64) {
	m.mu.Lock()
	if lsn > m.m[account] {
		m.m[account] = lsn
	}
	m.mu.Unlock()
}

// replica is one read replica and what its poll last saw.
type replica struct {
	name string // host (or socket directory) and database, for /readyz and logs
	pool *sqlx.DB
	q    sqlx.ExtContext // prepared statements, as the primary's (none behind a pooler)

	up      atomic.Bool
	replay  atomic.Uint64 // pg_last_wal_replay_lsn at the last poll
	tli     atomic.Uint32 // its timeline at the last poll (0: unknown)
	lag     atomic.Int64  // nanoseconds, at the last poll
	okAt    atomic.Int64  // unix nanoseconds of the last successful poll
	lastErr atomic.Pointer[string]

	kick    chan struct{} // a waiting read asks for a poll now
	mu      sync.Mutex
	updated chan struct{} // closed after each poll
}

// router sends reads to replicas; nil when there are none.
type router struct {
	primary  *sqlx.DB
	replicas []*replica
	wait     time.Duration
	maxLag   time.Duration
	poll     time.Duration
	local    memoryLSNs
	shared   atomic.Pointer[LSNStore]
	tli      atomic.Uint32 // the primary's timeline at the last sample (0: not sampled yet)
	next     atomic.Uint32

	smu     sync.Mutex
	samples []walSample // the primary's WAL position over time, oldest first

	stop chan struct{}
	wg   sync.WaitGroup
}

type walSample struct {
	at  time.Time
	lsn uint64
}

// openReplicas connects to the replica URLs with o (no ping: a replica
// that is down at start is skipped until its poll succeeds) and starts
// polling them.
func openReplicas(primary *sqlx.DB, o Options) (*router, error) {
	if len(o.Replicas) == 0 {
		return nil, nil
	}
	r := &router{primary: primary, wait: o.ReplicaWait, maxLag: o.ReplicaMaxLag, poll: o.ReplicaPoll, stop: make(chan struct{})}
	r.local.m = map[string]uint64{}
	if r.wait == 0 {
		r.wait = DefaultReplicaWait
	}
	if r.maxLag <= 0 {
		r.maxLag = DefaultReplicaMaxLag
	}
	if r.poll <= 0 {
		r.poll = DefaultReplicaPoll
	}
	ro := o
	ro.DirectURL = ""
	for _, raw := range o.Replicas {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		c, err := connector(withTimeouts(raw, ro), ro)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("database replica %s: %w", redact(raw), err)
		}
		pool := sqlx.NewDb(sql.OpenDB(c), "postgres")
		pool.SetMaxOpenConns(20)
		pool.SetMaxIdleConns(20)
		pool.SetConnMaxIdleTime(5 * time.Minute)
		rep := &replica{name: redact(raw), pool: pool, q: pool, kick: make(chan struct{}, 1), updated: make(chan struct{})}
		if !o.Pooler {
			rep.q = newPrepared(pool)
		}
		msg := "not polled yet"
		rep.lastErr.Store(&msg)
		r.replicas = append(r.replicas, rep)
	}
	if len(r.replicas) == 0 {
		return nil, nil
	}
	r.wg.Add(1)
	go r.sample()
	for _, rep := range r.replicas {
		r.wg.Add(1)
		go r.watch(rep)
	}
	return r, nil
}

// redact is a replica URL without its password or parameters.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		// key=value form: the host and database are enough.
		var host, name string
		for _, f := range strings.Fields(raw) {
			if v, ok := strings.CutPrefix(f, "host="); ok {
				host = v
			}
			if v, ok := strings.CutPrefix(f, "dbname="); ok {
				name = v
			}
		}
		return host + "/" + name
	}
	host := u.Host
	if h := u.Query().Get("host"); host == "" && h != "" {
		host = h
		if p := u.Query().Get("port"); p != "" {
			host += ":" + p
		}
	}
	return host + u.Path
}

func (r *router) close() {
	if r == nil {
		return
	}
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	r.wg.Wait()
	for _, rep := range r.replicas {
		_ = rep.pool.Close()
	}
}

// sample records the primary's WAL position every poll (when it moved).
func (r *router) sample() {
	defer r.wg.Done()
	t := time.NewTicker(r.poll)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), max(time.Second, r.poll))
		lsn, tli, err := currentWAL(ctx, r.primary)
		cancel()
		if err == nil {
			r.tli.Store(tli)
			now := time.Now()
			r.smu.Lock()
			if n := len(r.samples); n == 0 || r.samples[n-1].lsn != lsn {
				r.samples = append(r.samples, walSample{now, lsn})
			}
			// Keep one sample older than twice the bound: a replica
			// behind it is beyond the bound whatever came later.
			keep := now.Add(-2 * r.maxLag)
			i := 0
			for i+1 < len(r.samples) && r.samples[i+1].at.Before(keep) {
				i++
			}
			r.samples = r.samples[i:]
			r.smu.Unlock()
		}
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
	}
}

// lagOf is how long ago the primary had WAL beyond replay: the age of the
// oldest sample past it (0 when it has replayed every sample).
func (r *router) lagOf(replay uint64, now time.Time) time.Duration {
	r.smu.Lock()
	defer r.smu.Unlock()
	for _, s := range r.samples {
		if !caughtUp(replay, s.lsn) {
			return now.Sub(s.at)
		}
	}
	return 0
}

// watch polls rep every poll, or at once when a waiting read asks.
func (r *router) watch(rep *replica) {
	defer r.wg.Done()
	t := time.NewTicker(r.poll)
	defer t.Stop()
	for {
		r.refresh(rep)
		select {
		case <-r.stop:
			return
		case <-t.C:
		case <-rep.kick:
		}
	}
}

// refresh reads rep's replay position and lag.
func (r *router) refresh(rep *replica) {
	ctx, cancel := context.WithTimeout(context.Background(), max(time.Second, r.poll))
	var recovering bool
	var replay int64
	var tli sql.NullInt64
	// received_tli is NULL without a WAL receiver (not streaming now) or
	// without pg_read_all_stats; the last restartpoint's timeline then
	// (older: a replica that followed a switch may be skipped until its
	// next restartpoint, never the other way round).
	err := rep.pool.QueryRowContext(ctx, `SELECT pg_is_in_recovery(), coalesce((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::int8, 0),
	coalesce((SELECT received_tli FROM pg_stat_wal_receiver), (SELECT timeline_id FROM pg_control_checkpoint()))`).Scan(&recovering, &replay, &tli)
	if refused(err) {
		// A server that hides or lacks the timeline's sources: positions
		// alone, as before timelines were compared.
		tli = sql.NullInt64{}
		err = rep.pool.QueryRowContext(ctx, `SELECT pg_is_in_recovery(), coalesce((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::int8, 0)`).Scan(&recovering, &replay)
	}
	cancel()
	primaryTLI := r.tli.Load()
	switch {
	case err != nil:
		rep.down(err)
	case !recovering:
		rep.down(errors.New("not a standby (pg_is_in_recovery() is false)"))
	case tli.Valid && primaryTLI != 0 && uint32(tli.Int64) != primaryTLI:
		rep.tli.Store(uint32(tli.Int64))
		rep.down(fmt.Errorf("on timeline %d, the primary on timeline %d: not following the primary", tli.Int64, primaryTLI))
	default:
		now := time.Now()
		if tli.Valid {
			rep.tli.Store(uint32(tli.Int64))
		}
		rep.replay.Store(uint64(replay))
		rep.lag.Store(int64(r.lagOf(uint64(replay), now)))
		rep.okAt.Store(now.UnixNano())
		rep.lastErr.Store(nil)
		rep.up.Store(true)
	}
	rep.mu.Lock()
	close(rep.updated)
	rep.updated = make(chan struct{})
	rep.mu.Unlock()
}

func (rep *replica) down(err error) {
	msg := err.Error()
	rep.lastErr.Store(&msg)
	rep.up.Store(false)
}

// nextPoll returns a channel closed after rep's next poll, and asks for it.
func (rep *replica) nextPoll() <-chan struct{} {
	rep.mu.Lock()
	ch := rep.updated
	rep.mu.Unlock()
	select {
	case rep.kick <- struct{}{}:
	default:
	}
	return ch
}

// usable reports whether reads may go to rep: it is up, within the lag
// bound, was heard from within it, and is on the primary's timeline
// (primaryTLI; 0 or a replica's unknown timeline: not compared) — the
// primary's may have changed since rep's last poll.
func (rep *replica) usable(maxLag time.Duration, now time.Time, primaryTLI uint32) bool {
	if t := rep.tli.Load(); t != 0 && primaryTLI != 0 && t != primaryTLI {
		return false
	}
	return rep.up.Load() && time.Duration(rep.lag.Load()) <= maxLag &&
		now.Sub(time.Unix(0, rep.okAt.Load())) <= maxLag
}

// walPageSize and the page header sizes: a position at the start of a WAL
// page is reported past its header by pg_current_wal_insert_lsn, while a
// replica that replayed everything before it reports the page's start.
const (
	walPageSize    = 8192
	walSegmentSize = 16 << 20
	walShortHeader = 24
	walLongHeader  = 40
)

// caughtUp reports whether a replica that replayed up to replay has every
// record before need.
func caughtUp(replay, need uint64) bool {
	if replay >= need {
		return true
	}
	switch {
	case need%walSegmentSize == walLongHeader:
		return replay >= need-walLongHeader
	case need%walPageSize == walShortHeader:
		return replay >= need-walShortHeader
	}
	return false
}

// choose picks the replica a session of account reads from, or nil for
// the primary: one that is usable and has replayed the account's last
// acknowledged write and need (a position the session must see; 0: none),
// waiting for one until r.wait after since (after now when since is zero).
//
// prefer, when set, is kept if it qualifies: the replica the session read
// from before.
func (r *router) choose(ctx context.Context, account string, need uint64, since time.Time, prefer *replica) *replica {
	if account != "" {
		need = max(need, r.local.get(account))
		if sp := r.shared.Load(); sp != nil {
			v, err := (*sp).AccountLSN(ctx, account)
			if err != nil {
				return nil // the account's position is unknown
			}
			need = max(need, v)
		}
	}
	if prefer != nil && prefer.usable(r.maxLag, time.Now(), r.tli.Load()) && caughtUp(prefer.replay.Load(), need) {
		return prefer
	}
	n := len(r.replicas)
	start := int(r.next.Add(1))
	var deadline time.Time
	for {
		now := time.Now()
		var behind *replica
		for i := range n {
			rep := r.replicas[(start+i)%n]
			if !rep.usable(r.maxLag, now, r.tli.Load()) {
				continue
			}
			if caughtUp(rep.replay.Load(), need) {
				return rep
			}
			if behind == nil {
				behind = rep
			}
		}
		if behind == nil || r.wait <= 0 {
			return nil
		}
		if deadline.IsZero() {
			deadline = now.Add(r.wait)
			if !since.IsZero() {
				deadline = since.Add(r.wait)
			}
		}
		left := deadline.Sub(now)
		if left <= 0 {
			return nil
		}
		polled := behind.nextPoll()
		t := time.NewTimer(left)
		select {
		case <-polled:
			t.Stop()
		case <-t.C:
			return nil
		case <-ctx.Done():
			t.Stop()
			return nil
		}
	}
}

// recordTimeout bounds recording a write's position before its answer.
const recordTimeout = 5 * time.Second

// record raises account's high-water mark to the primary's WAL insert
// position now (after the write committed).
func (r *router) record(ctx context.Context, account string) {
	if account == "" {
		return
	}
	queriesPrimary.Inc()
	countInContext(ctx)
	lsn, err := currentLSN(ctx, r.primary)
	if err != nil {
		// The primary, which just took the write, did not answer: the
		// account's mark stays as it was, and its next reads are as
		// fresh as the lag bound (docs/scaling.md).
		return
	}
	r.local.advance(account, lsn)
	if sp := r.shared.Load(); sp != nil {
		_ = (*sp).AdvanceAccountLSN(ctx, account, lsn)
	}
}

func currentLSN(ctx context.Context, q sqlx.QueryerContext) (uint64, error) {
	var lsn int64
	err := q.QueryRowxContext(ctx, `SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::int8`).Scan(&lsn)
	return uint64(lsn), err
}

// currentWAL is the primary's WAL insert position and its timeline (the
// first 8 hex digits of the WAL file name, which a primary names by the
// timeline it writes).
func currentWAL(ctx context.Context, q sqlx.QueryerContext) (uint64, uint32, error) {
	var lsn, tli int64
	err := q.QueryRowxContext(ctx, `SELECT (l - '0/0'::pg_lsn)::int8, ('x' || substr(pg_walfile_name(l), 1, 8))::bit(32)::int8
	FROM pg_current_wal_insert_lsn() AS l`).Scan(&lsn, &tli)
	if refused(err) {
		// No WAL file names here (a managed service): timeline unknown.
		p, err := currentLSN(ctx, q)
		return p, 0, err
	}
	return uint64(lsn), uint32(tli), err
}

// refused reports whether err is the server refusing a statement it does
// not allow or know (SQLSTATE class 42: insufficient privilege, undefined
// function or table), as opposed to failing to run it.
func refused(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && pe.Code.Class() == "42"
}

// fallback reports whether a read that failed on rep with err is to be
// sent to the primary: unless the request itself ended. A connection
// failure also marks rep down until its next successful poll.
func (r *router) fallback(ctx context.Context, rep *replica, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if connectionFailure(err) {
		rep.down(err)
	}
	return true
}

// connectionFailure reports whether err says the replica could not be
// reached or went away (as opposed to refusing one statement).
func connectionFailure(err error) bool {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, sql.ErrConnDone) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var pe *pq.Error
	if errors.As(err, &pe) {
		return pe.Code.Class() == "08" || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	return false
}

// ---------------------------------------------------------------- sessions

type sessionKey struct{}

// session is one request's (or one streamed operation's) routing state.
type session struct {
	replicaOK bool      // reads may go to a replica
	stream    bool      // no acknowledgement hook: record each write at once
	need      uint64    // a WAL position its replica must have replayed (WithReadAt)
	since     time.Time // the replica wait runs from then (WithReadAt; zero: the first read)
	wrote     atomic.Bool
	dirty     atomic.Bool // wrote since the marks were last recorded

	mu      sync.Mutex
	chosen  bool     // rep was chosen (nil: the primary)
	forAcct string   // the account rep was chosen for ("": none yet)
	rep     *replica // where its reads go
	written []string // the accounts it wrote, to record on Acknowledge
}

// SessionKind says how a request may use replicas.
type SessionKind int

const (
	// ReadsMayUseReplica: a GET of /v2, a GraphQL request (a mutation's
	// statements go to the primary from its first write on).
	ReadsMayUseReplica SessionKind = iota
	// PrimaryOnly: a /v2 write. Its writes are recorded on Acknowledge.
	PrimaryOnly
	// Streaming: a subscription or another long-lived request with no
	// single answer: its own reads go to the primary (a change it heard
	// of may not be on a replica yet; the re-read of a change's record
	// runs in a session of its own, WithReadAt), every write is recorded
	// at once.
	Streaming
)

// WithSession returns ctx carrying a routing session of kind. It names no
// account: the store methods name the account they read or write. Without
// replicas it returns ctx as it is.
func (db *DB) WithSession(ctx context.Context, kind SessionKind) context.Context {
	if db.r == nil {
		return ctx
	}
	return context.WithValue(ctx, sessionKey{}, &session{replicaOK: kind == ReadsMayUseReplica, stream: kind == Streaming})
}

// WithReadAt returns ctx carrying a routing session of its own for the
// reads that follow a change the change log reported at WAL position lsn,
// read at time at (LoggedChange.WAL, WALAt): a subscription's re-read of
// the changed record. Its reads may go to a replica that has replayed both
// lsn and the mark of the account they read, chosen as a request's are
// (lagging or down replicas skipped; the primary when none has it), the
// replica wait running from at: a burst of changes read together waits for
// a replica once, not once per change. With lsn 0 (unknown), inside a session that
// wrote, or without replicas, it returns ctx as it is: those reads stay
// where ctx sends them.
func (db *DB) WithReadAt(ctx context.Context, lsn uint64, at time.Time) context.Context {
	if db.r == nil || lsn == 0 {
		return ctx
	}
	if s, _ := ctx.Value(sessionKey{}).(*session); s != nil && s.wrote.Load() {
		return ctx
	}
	return context.WithValue(ctx, sessionKey{}, &session{replicaOK: true, stream: true, need: lsn, since: at})
}

// Acknowledge records the high-water marks of the accounts the session
// wrote if it wrote since they were last recorded; the chain calls it
// before the first byte of an answer, so a client that saw the answer
// reads its write on any instance.
func (db *DB) Acknowledge(ctx context.Context) {
	if db.r == nil {
		return
	}
	if s, _ := ctx.Value(sessionKey{}).(*session); s != nil && s.dirty.Swap(false) {
		// Even when the client has gone: its write is done, and another
		// request may read it. Bounded: a hung primary does not hold the
		// answer longer than this.
		s.mu.Lock()
		written := slices.Clone(s.written)
		s.mu.Unlock()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		for _, account := range written {
			db.r.record(rctx, account)
		}
		cancel()
	}
}

// ShareLSNs makes the store record and read accounts' high-water marks in
// s as well as in this process (REDIS_URL: read-your-writes over every
// instance). Without replicas it does nothing.
func (db *DB) ShareLSNs(s LSNStore) {
	if db.r != nil && s != nil {
		db.r.shared.Store(&s)
	}
}

// replicaFor is the replica a statement of a read scope of account in ctx
// goes to, or nil (the primary).
func (r *router) replicaFor(ctx context.Context, account string) *replica {
	s, _ := ctx.Value(sessionKey{}).(*session)
	if s == nil || !s.replicaOK || s.wrote.Load() {
		return nil
	}
	s.mu.Lock()
	if !s.chosen || (account != "" && account != s.forAcct) {
		// The first read, or the first of an account's data after reads
		// that named another (or none): the replica must have its mark.
		s.rep = r.choose(ctx, account, s.need, s.since, s.rep)
		s.chosen, s.forAcct = true, account
	}
	rep := s.rep
	s.mu.Unlock()
	if rep != nil && !rep.up.Load() {
		return nil
	}
	return rep
}

// wrote notes in ctx's session a committed write of account's data.
func (r *router) wrote(ctx context.Context, account string) {
	s, _ := ctx.Value(sessionKey{}).(*session)
	if s == nil {
		return
	}
	s.wrote.Store(true)
	if s.stream {
		r.record(ctx, account)
		return
	}
	if account != "" {
		s.mu.Lock()
		if !slices.Contains(s.written, account) {
			s.written = append(s.written, account)
		}
		s.mu.Unlock()
	}
	s.dirty.Store(true)
}

// ---------------------------------------------------------------- status

// ReplicaStatus is what /readyz reports of one replica.
type ReplicaStatus struct {
	Name  string        // host and database
	State string        // "up", "lagging" (beyond the bound), "down"
	Lag   time.Duration // at the last poll
	Err   string        // why it is down
}

// Replicas reports each replica's state.
func (db *DB) Replicas() []ReplicaStatus {
	if db.r == nil {
		return nil
	}
	now := time.Now()
	out := make([]ReplicaStatus, 0, len(db.r.replicas))
	for _, rep := range db.r.replicas {
		st := ReplicaStatus{Name: rep.name, Lag: time.Duration(rep.lag.Load())}
		switch {
		case !rep.up.Load():
			st.State = "down"
			if e := rep.lastErr.Load(); e != nil {
				st.Err = *e
			}
		case !rep.usable(db.r.maxLag, now, db.r.tli.Load()):
			st.State = "lagging"
		default:
			st.State = "up"
		}
		out = append(out, st)
	}
	return out
}
