package db

import (
	"context"
	"database/sql"
	"time"

	"github.com/lib/pq"
)

// Retention of the change log: rows older than the retention are deleted,
// oldest first, a batch per transaction. Positions are dense within an
// account, so a reader finds a pruned row it had not read as a hole in the
// positions it reads next (AccountChangeLogPage.Gap): never a silent skip.
//
// Pruning holds back for the webhook fan-out: a row past the fan-out's
// position in its account (webhook_log_cursors) that a webhook could still
// be owed — one logged at or after the oldest webhook's creation (active
// or not: an inactive one may be switched on again before the fan-out
// reaches the row) — is kept. A webhook gets only changes logged after it
// was created, so with no webhook at all nothing is held back: a webhook
// created later could never be owed a row older than the retention.
// Held-back rows are kept until the fan-out passes them, or until they are
// older than the ceiling (unreadBefore): then they are pruned anyway, and
// counted as unread, by account, for the caller to report loudly. (A
// fan-out step that read such a row before it was deleted may still raise
// it: the count is of rows the fan-out had not passed, an upper bound of
// what was lost.)
//
// Every statement is one of every account's (cross-tenant by design: an
// operator job), joined to the fan-out's positions on the account.

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

// changeLogPruneSQL is a batch's rows, oldest first (by the logged_at
// index): logged before $1, and read by the fan-out, or logged before the
// oldest webhook ($2), or before the ceiling ($3).
const changeLogPruneSQL = `SELECT l.account_id::text, l.id, l.pos > coalesce(c.pos, 0) AND l.logged_at >= $2
FROM change_log l LEFT JOIN webhook_log_cursors c ON c.account_id = l.account_id
WHERE l.logged_at < $1
  AND (l.pos <= coalesce(c.pos, 0) OR l.logged_at < $2 OR l.logged_at < $3)
ORDER BY l.logged_at LIMIT $4`

// changeLogHeldBackSQL tells whether a row older than the retention is
// kept for the fan-out.
const changeLogHeldBackSQL = `SELECT EXISTS (
	SELECT 1 FROM change_log l LEFT JOIN webhook_log_cursors c ON c.account_id = l.account_id
	WHERE l.logged_at < $1 AND l.logged_at >= $2 AND l.pos > coalesce(c.pos, 0) AND ($3::timestamptz IS NULL OR l.logged_at >= $3))`

// PruneChangeLog deletes up to batch rows (DefaultChangeLogPruneBatch if
// <= 0) logged before before, oldest first, in one transaction, keeping
// the rows the webhook fan-out has not read unless they were logged before
// unreadBefore (the ceiling; the zero time: never). It returns what it
// deleted, and false when another instance holds the pruning lock (nothing
// was done).
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
		// Rows logged before the oldest webhook was created are owed to
		// none (no webhook: to none at all).
		var since sql.NullTime
		if err := q.QueryRowxContext(ctx, `SELECT min(created_at) FROM webhooks`).Scan(&since); err != nil {
			return mapErr(err)
		}
		if !since.Valid {
			since = sql.NullTime{Time: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), Valid: true}
		}
		ceiling := nullTime(unreadBefore)
		rows, err := q.QueryContext(ctx, changeLogPruneSQL, before, since.Time, ceiling, batch)
		if err != nil {
			return mapErr(err)
		}
		var accounts []string
		var ids []int64
		seen := map[string]bool{}
		for rows.Next() {
			var a string
			var id int64
			var unread bool
			if err := rows.Scan(&a, &id, &unread); err != nil {
				rows.Close()
				return mapErr(err)
			}
			if !seen[a] {
				seen[a] = true
				accounts = append(accounts, a)
			}
			ids = append(ids, id)
			if unread {
				if p.UnreadAccounts == nil {
					p.UnreadAccounts = map[string]int64{}
				}
				p.UnreadAccounts[a]++
				p.Unread++
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return mapErr(err)
		}
		if len(ids) > 0 {
			// Ids are unique across accounts: the row of each id is the
			// one of its account.
			res, err := q.ExecContext(ctx, `DELETE FROM change_log WHERE account_id = ANY($1::uuid[]) AND id = ANY($2::bigint[])`,
				pq.Array(accounts), pq.Array(ids))
			if err != nil {
				return mapErr(err)
			}
			if p.Pruned, err = res.RowsAffected(); err != nil {
				return err
			}
		}
		if len(ids) == batch {
			return nil // the next batch tells
		}
		return mapErr(q.QueryRowxContext(ctx, changeLogHeldBackSQL, before, since.Time, ceiling).Scan(&p.HeldBack))
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
