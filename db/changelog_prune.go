package db

import (
	"context"
	"time"
)

// Retention of the change log: rows older than the retention are deleted
// in (xid, id) order — the order readers read — a batch per transaction,
// so the pruned rows are always a prefix of the log, whose last position
// change_log_pruned records (ChangeLogPruned): a reader before it may have
// missed rows, one after it has missed none. Only rows every transaction
// could already read are pruned (below the snapshot's xmin), so no row
// can later appear before the recorded position. Pruning stops at the
// first row that is not old enough: a row logged late by a long
// transaction delays the pruning of the rows after it (they are kept a
// little longer, never lost early).

// changeLogPruneLock is the transaction-level advisory lock a pruning
// batch holds: one instance prunes at a time; the others skip their turn.
const changeLogPruneLock int64 = 0x73676c6f67707275 // "sglogpru"

// DefaultChangeLogPruneBatch is how many rows one pruning transaction
// deletes at most.
const DefaultChangeLogPruneBatch = 5000

// PruneChangeLog deletes up to batch rows (DefaultChangeLogPruneBatch if
// <= 0) logged before before, oldest first, in one transaction. It returns
// how many it deleted, and false when another instance holds the pruning
// lock (nothing was done).
func (db *DB) PruneChangeLog(ctx context.Context, before time.Time, batch int) (int64, bool, error) {
	if batch <= 0 {
		batch = DefaultChangeLogPruneBatch
	}
	var n int64
	locked := false
	err := db.inTx(ctx, func(q ext) error {
		if err := q.QueryRowxContext(ctx, `SELECT pg_try_advisory_xact_lock($1)`, changeLogPruneLock).Scan(&locked); err != nil || !locked {
			return mapErr(err)
		}
		return mapErr(q.QueryRowxContext(ctx, `WITH batch AS (
	SELECT account_id, id, xid, logged_at < $1 AS old FROM change_log
	WHERE xid < pg_snapshot_xmin(pg_current_snapshot())
	ORDER BY xid, id LIMIT $2
), keep AS (
	SELECT xid, id FROM batch WHERE NOT old ORDER BY xid, id LIMIT 1
), gone AS (
	DELETE FROM change_log l USING batch b
	WHERE l.account_id = b.account_id AND l.id = b.id
	  AND NOT EXISTS (SELECT 1 FROM keep k WHERE (b.xid, b.id) >= (k.xid, k.id))
	RETURNING l.xid, l.id
), last AS (
	SELECT xid, id FROM gone ORDER BY xid DESC, id DESC LIMIT 1
), mark AS (
	UPDATE change_log_pruned p SET xid = last.xid, id = last.id, pruned_at = now()
	FROM last WHERE (last.xid, last.id) > (p.xid, p.id)
	RETURNING 1
)
SELECT count(*) FROM gone`, before, batch).Scan(&n))
	})
	return n, locked, err
}

// PruneChangeLogLoop prunes rows older than retention now and then every
// interval until ctx ends, a batch at a time with a pause between batches
// (pause: a fraction of what the batch took) so that writers and readers
// keep their share of the database. report, if not nil, gets each round's
// count and error.
func (db *DB) PruneChangeLogLoop(ctx context.Context, retention, interval time.Duration, report func(pruned int64, took time.Duration, err error)) {
	if retention <= 0 || interval <= 0 {
		return
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var total int64
		start := time.Now()
		var err error
		for ctx.Err() == nil {
			began := time.Now()
			var n int64
			var locked bool
			n, locked, err = db.PruneChangeLog(ctx, time.Now().Add(-retention), DefaultChangeLogPruneBatch)
			total += n
			if err != nil || !locked || n < DefaultChangeLogPruneBatch {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Since(began) / 2):
			}
		}
		if report != nil && ctx.Err() == nil && (total > 0 || err != nil) {
			report(total, time.Since(start), err)
		}
		t.Reset(interval)
	}
}
