package db

import (
	"context"
	"time"

	"github.com/lib/pq"
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
//
// Pruning holds back for the webhook fan-out: it also stops at the first
// row the webhook cursor (webhook_cursor) has not passed that a webhook
// could still be owed — one logged at or after the oldest webhook's
// creation (active or not: an inactive one may be switched on again before
// the fan-out reaches the row). A webhook gets only changes logged after
// it was created, so with no webhook at all the cursor holds nothing back:
// a webhook created later could never be owed a row older than the
// retention. Held-back rows are kept until the fan-out passes them, or
// until they are older than the ceiling (unreadBefore): then they are
// pruned anyway, and counted as unread, by account, for the caller to
// report loudly. (A fan-out step that read such a row before it was
// deleted may still raise it: the count is of rows the cursor had not
// passed, an upper bound of what was lost.)

// changeLogPruneLock is the transaction-level advisory lock a pruning
// batch holds: one instance prunes at a time; the others skip their turn.
const changeLogPruneLock int64 = 0x73676c6f67707275 // "sglogpru"

// DefaultChangeLogPruneBatch is how many rows one pruning transaction
// deletes at most.
const DefaultChangeLogPruneBatch = 5000

// ChangeLogPruning is what pruning did: one PruneChangeLog, or one round of
// PruneChangeLogLoop.
type ChangeLogPruning struct {
	// Pruned is how many rows were deleted.
	Pruned int64
	// Unread is how many of them the webhook fan-out had not read: older
	// than the ceiling, deleted anyway. Their notifications are never
	// raised.
	Unread int64
	// UnreadAccounts is Unread by account id; nil when Unread is 0.
	UnreadAccounts map[string]int64
	// HeldBack: pruning stopped at a row older than the retention because
	// the webhook fan-out has not read it yet.
	HeldBack bool
	// Took and Err: the round's duration and error (PruneChangeLogLoop).
	Took time.Duration
	Err  error
}

func (p *ChangeLogPruning) add(o ChangeLogPruning) {
	p.Pruned += o.Pruned
	p.Unread += o.Unread
	p.HeldBack = o.HeldBack
	for a, n := range o.UnreadAccounts {
		if p.UnreadAccounts == nil {
			p.UnreadAccounts = map[string]int64{}
		}
		p.UnreadAccounts[a] += n
	}
}

// PruneChangeLog deletes up to batch rows (DefaultChangeLogPruneBatch if
// <= 0) logged before before, oldest first, in one transaction, holding
// back at the first row the webhook fan-out has not read unless it was
// logged before unreadBefore (the ceiling; the zero time: never). It
// returns what it deleted, and false when another instance holds the
// pruning lock (nothing was done).
func (db *DB) PruneChangeLog(ctx context.Context, before, unreadBefore time.Time, batch int) (ChangeLogPruning, bool, error) {
	if batch <= 0 {
		batch = DefaultChangeLogPruneBatch
	}
	var p ChangeLogPruning
	locked := false
	err := db.inTx(ctx, "", func(q ext) error {
		if err := q.QueryRowxContext(ctx, `SELECT pg_try_advisory_xact_lock($1)`, changeLogPruneLock).Scan(&locked); err != nil || !locked {
			return mapErr(err)
		}
		// cur: the webhook cursor, and the oldest webhook's creation (NULL
		// with no webhook: nothing is unread then). Cross-tenant, like the
		// rest of pruning. cur is read through scalar subqueries and the
		// DELETE joins batch itself: a join of batch to cur made pruning
		// 5-30× slower (BenchmarkChangeLogPrune).
		rows, err := q.QueryContext(ctx, `WITH batch AS (
	SELECT account_id, id, xid, logged_at, logged_at < $1 AS old FROM change_log
	WHERE xid < pg_snapshot_xmin(pg_current_snapshot())
	ORDER BY xid, id LIMIT $2
), cur AS (
	SELECT coalesce(log_xid, '0'::xid8) AS xid, coalesce(log_id, 0) AS id,
		(SELECT min(created_at) FROM webhooks) AS since
	FROM webhook_cursor
), keep AS (
	SELECT b.xid, b.id, b.old FROM batch b
	WHERE NOT b.old OR coalesce((b.xid, b.id) > ((SELECT xid FROM cur), (SELECT id FROM cur))
		AND b.logged_at >= (SELECT since FROM cur)
		AND ($3::timestamptz IS NULL OR b.logged_at >= $3), false)
	ORDER BY b.xid, b.id LIMIT 1
), gone AS (
	DELETE FROM change_log l USING batch b
	WHERE l.account_id = b.account_id AND l.id = b.id
	  AND NOT EXISTS (SELECT 1 FROM keep k WHERE (b.xid, b.id) >= (k.xid, k.id))
	RETURNING l.xid, l.id, l.account_id, l.logged_at
), last AS (
	SELECT xid, id FROM gone ORDER BY xid DESC, id DESC LIMIT 1
), mark AS (
	UPDATE change_log_pruned p SET xid = last.xid, id = last.id, pruned_at = now()
	FROM last WHERE (last.xid, last.id) > (p.xid, p.id)
	RETURNING 1
)
SELECT count(*), coalesce((SELECT old FROM keep), false),
	coalesce(array_agg(g.account_id::text) FILTER (WHERE (g.xid, g.id) > (c.xid, c.id) AND g.logged_at >= c.since), '{}')
FROM gone g LEFT JOIN cur c ON true`, before, batch, nullTime(unreadBefore))
		if err != nil {
			return mapErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			var unread []string
			if err := rows.Scan(&p.Pruned, &p.HeldBack, pq.Array(&unread)); err != nil {
				return mapErr(err)
			}
			for _, a := range unread {
				if p.UnreadAccounts == nil {
					p.UnreadAccounts = map[string]int64{}
				}
				p.UnreadAccounts[a]++
			}
			p.Unread = int64(len(unread))
		}
		return mapErr(rows.Err())
	})
	if err != nil {
		return ChangeLogPruning{}, locked, err
	}
	return p, locked, nil
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// DefaultChangeLogCeiling is the ceiling of a loop given none, as a
// multiple of the retention: rows the webhook fan-out has not read are
// kept at most this many retentions.
const DefaultChangeLogCeiling = 4

// PruneChangeLogLoop prunes rows older than retention now and then every
// interval until ctx ends, a batch at a time with a pause between batches
// (pause: a fraction of what the batch took) so that writers and readers
// keep their share of the database. Rows the webhook fan-out has not read
// are kept until they are older than ceiling (DefaultChangeLogCeiling ×
// retention if <= 0; at least retention). report, if not nil, gets each
// round that pruned, dropped unread rows or failed.
func (db *DB) PruneChangeLogLoop(ctx context.Context, retention, ceiling, interval time.Duration, report func(ChangeLogPruning)) {
	if retention <= 0 || interval <= 0 {
		return
	}
	if ceiling <= 0 {
		ceiling = DefaultChangeLogCeiling * retention
	}
	ceiling = max(ceiling, retention)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var round ChangeLogPruning
		start := time.Now()
		for ctx.Err() == nil {
			began := time.Now()
			p, locked, err := db.PruneChangeLog(ctx, began.Add(-retention), began.Add(-ceiling), DefaultChangeLogPruneBatch)
			round.add(p)
			round.Err = err
			if err != nil || !locked || p.Pruned < DefaultChangeLogPruneBatch {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Since(began) / 2):
			}
		}
		round.Took = time.Since(start)
		if report != nil && ctx.Err() == nil && (round.Pruned > 0 || round.Err != nil) {
			report(round)
		}
		t.Reset(interval)
	}
}
