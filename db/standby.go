package db

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Changes read from the change log go out to clients (subscriptions) only
// once they are durable where a failover would take us. With a synchronous
// standby, a commit is acknowledged once the standby has flushed it, and
// its rows become visible to other sessions only then — except when the
// commit's wait for the standby ends early: cancelled (pg_cancel_backend,
// "canceling wait for synchronous replication"), or the postmaster died
// while it waited. Its rows are then visible on this primary (to a reader
// that has not noticed the postmaster's death yet) and possibly nowhere
// else: a promoted standby lacks them and logs other changes at their
// positions (docs/decisions.md, "Live changes wait for the synchronous
// standby").
//
// So a change-log read (readLogPage) also says, in its own statement,
// whether the server runs with a synchronous standby that commits wait
// for (synchronous_standby_names set, synchronous_commit on, remote_write
// or remote_apply in the reader's session) and, if so, the WAL insert
// position after the statement's snapshot (AccountChangeLogPage.Barrier):
// every row it returned committed before it. AwaitStandby then returns
// once the synchronous standby has it. Without a synchronous standby the
// read says 0 and nothing else happens: no statement, no wait.

// syncBarrierSQL is the read's barrier column: the WAL insert position
// when commits wait for a synchronous standby, else 0. current_setting
// is the reader's session's view: the database's or role's setting, as
// the writers' (a session that set synchronous_commit itself is not
// seen). Evaluated per row, cheaply (two settings; the position is the
// insert pointer).
const syncBarrierSQL = `CASE WHEN current_setting('synchronous_standby_names') <> ''
	AND current_setting('synchronous_commit') IN ('on', 'remote_write', 'remote_apply')
	THEN (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::int8 ELSE 0 END`

// barrierTimeout bounds one barrier: past it the barrier failed (its
// waiters' reads are retried), even though PostgreSQL, cancelled, ends
// the wait and commits locally with only a WARNING: the context says it
// was cancelled, and a cancelled barrier never counts.
const barrierTimeout = 30 * time.Second

// standbyBarrier runs barriers for every reader of the store, one at a
// time: a reader that needs one while one runs waits for the next, which
// starts once the running one ends and serves everyone who asked
// meanwhile (group commit). A position at or before one already
// acknowledged needs none.
type standbyBarrier struct {
	passed  atomic.Uint64 // the standby has every WAL position up to it
	mu      sync.Mutex
	running *barrierRound // the round in flight, nil when none
	next    *barrierRound // the round that starts after it, nil when none asked
}

type barrierRound struct {
	done chan struct{}
	err  error
}

// StandbyBarriers counts the barriers run (the statements), for the docs'
// measurements and tests.
var StandbyBarriers atomic.Int64

// AwaitStandby returns once the synchronous standby has flushed (or
// written, or applied: as synchronous_commit says) WAL past lsn, a
// position AccountChangeLogPage.Barrier gave; lsn 0 returns at once. It
// fails with ctx, or when the barrier failed (the primary went away: the
// read must be made again, perhaps on the next primary).
func (db *DB) AwaitStandby(ctx context.Context, lsn uint64) error {
	b := db.sb
	if lsn == 0 || b == nil {
		return nil
	}
	for {
		if lsn <= b.passed.Load() {
			return nil
		}
		// A round that starts after lsn was read: its commit follows.
		if err := db.AwaitStandbyNow(ctx); err != nil {
			return err
		}
	}
}

// AwaitStandbyNow returns once the synchronous standby has every WAL
// position written before the call: a barrier that starts after it. For
// a reader whose last reads carry no position (datasync reads the records
// a log page names after the page): call it only when a read said the
// server runs with a synchronous standby (a page's Barrier not 0).
func (db *DB) AwaitStandbyNow(ctx context.Context) error {
	b := db.sb
	if b == nil {
		return nil
	}
	b.mu.Lock()
	var r *barrierRound
	switch {
	case b.running == nil:
		r = &barrierRound{done: make(chan struct{})}
		b.running = r
		go db.runBarrier(r)
	case b.next == nil:
		r = &barrierRound{done: make(chan struct{})}
		b.next = r
	default:
		r = b.next
	}
	b.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runBarrier runs round r, then the next one if someone asked for it.
func (db *DB) runBarrier(r *barrierRound) {
	b := db.sb
	for r != nil {
		ctx, cancel := context.WithTimeout(context.Background(), barrierTimeout)
		var at int64
		StandbyBarriers.Add(1)
		// The barrier: a transactional logical message (a WAL record of
		// a transaction with an id: its commit waits for the synchronous
		// standby as any write's does, and writes no table), and the WAL
		// insert position after it, which the commit record follows. The
		// statement runs alone (its own implicit transaction): it returns
		// once the commit was acknowledged, so the standby has everything
		// up to the position returned. Any role may call
		// pg_logical_emit_message; it needs no wal_level beyond the default.
		err := db.write("").QueryRowxContext(ctx, `SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::int8
FROM pg_logical_emit_message(true, 'shipgraph_barrier', '')`).Scan(&at)
		if err == nil && ctx.Err() != nil {
			// Cancelled while it waited for the standby: PostgreSQL
			// committed locally and said so with a WARNING only.
			err = ctx.Err()
		}
		cancel()
		if err != nil {
			r.err = errors.Join(errors.New("waiting for the synchronous standby"), mapErr(err))
		} else {
			for {
				old := b.passed.Load()
				if uint64(at) <= old || b.passed.CompareAndSwap(old, uint64(at)) {
					break
				}
			}
		}
		b.mu.Lock()
		close(r.done)
		r, b.next = b.next, nil
		b.running = r
		b.mu.Unlock()
	}
}
