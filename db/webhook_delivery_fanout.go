package db

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/lib/pq"
)

// WebhookEvent is one event a logged change raised (package webhook
// derives them), to be turned into a notification for every active webhook
// of its account subscribed to it.
type WebhookEvent struct {
	AccountID     string
	ChangeID      int64     // change_log id
	LoggedAt      time.Time // webhooks created after the change do not get it
	Event         string
	ReferenceType string
	ReferenceID   string
	Payload       []byte // JSON object
}

// WebhookRaise is what one RaiseWebhookNotifications did.
type WebhookRaise struct {
	// Moved: the cursor was where the caller read from and is now at
	// to. False: another process moved it, or holds it (NOWAIT): nothing
	// was written; read again from WebhookCursor.
	Moved bool
	// Queued notifications (pending), and those recorded failed at once
	// because their account had queueLimit pending ones.
	Queued, Overflow int
}

// WebhookBacklog is an account whose log moved past the webhook fan-out's
// position in it.
type WebhookBacklog struct {
	AccountID string
	// From is the fan-out's position (0: it read nothing of the account
	// yet), Head the account's last position.
	From, Head int64
}

// WebhookBacklogs returns up to limit accounts whose log moved past the
// fan-out's position in it (webhook_log_cursors), most behind first: what
// the fan-out reads next. Cross-tenant by design (the fan-out serves every
// account's webhooks).
func (db *DB) WebhookBacklogs(ctx context.Context, limit int) ([]WebhookBacklog, error) {
	rows, err := db.read("").QueryContext(ctx, `SELECT h.account_id::text, coalesce(c.pos, 0), h.pos
FROM change_log_heads h LEFT JOIN webhook_log_cursors c ON c.account_id = h.account_id
WHERE h.pos > coalesce(c.pos, 0)
ORDER BY h.pos - coalesce(c.pos, 0) DESC LIMIT $1`, limit)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	var out []WebhookBacklog
	for rows.Next() {
		var b WebhookBacklog
		if err := rows.Scan(&b.AccountID, &b.From, &b.Head); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, b)
	}
	return out, mapErr(rows.Err())
}

// WebhookCursor is the fan-out's position in the account's log (0: it read
// nothing of it yet).
func (db *DB) WebhookCursor(ctx context.Context, accountID string) (int64, error) {
	var pos int64
	err := db.read(accountID).QueryRowxContext(ctx,
		`SELECT coalesce((SELECT pos FROM webhook_log_cursors WHERE account_id = $1), 0)`, accountID).Scan(&pos)
	return pos, mapErr(err)
}

// errCursorMoved: another process advanced the cursor or holds it.
var errCursorMoved = errors.New("webhook cursor moved")

// RaiseWebhookNotifications inserts the notifications of events (read
// from the account's log between positions from and to, all of that
// account) and advances the fan-out's position in the account's log from
// from to to, in one transaction of that account: a crash before the
// commit raises nothing and leaves the position; after it, both are done.
// The position's row is locked (NOWAIT) and must still be at from, so two
// processes never raise the same rows; the unique key (account, webhook,
// change, event) with ON CONFLICT DO NOTHING makes a repeat harmless
// anyway.
//
// An account with queueLimit pending notifications gets the rest recorded
// failed, with the reason in last_error (never silently dropped).
func (db *DB) RaiseWebhookNotifications(ctx context.Context, accountID string, from, to int64, events []WebhookEvent, queueLimit int) (WebhookRaise, error) {
	var r WebhookRaise
	err := db.inTx(ctx, accountID, func(q ext) error {
		// The account's first read makes its row; a concurrent first
		// read finds it made, and the check below sorts them out.
		if _, err := q.ExecContext(ctx, `INSERT INTO webhook_log_cursors (account_id, pos) VALUES ($1, 0)
ON CONFLICT (account_id) DO NOTHING`, accountID); err != nil {
			return mapErr(err)
		}
		var cur int64
		if err := q.QueryRowxContext(ctx, `SELECT pos FROM webhook_log_cursors WHERE account_id = $1 FOR UPDATE NOWAIT`, accountID).Scan(&cur); err != nil {
			var pqe *pq.Error
			if errors.As(err, &pqe) && pqe.Code == "55P03" {
				return errCursorMoved
			}
			return mapErr(err)
		}
		if cur != from {
			return errCursorMoved
		}
		if len(events) > 0 {
			if err := raise(ctx, q, events, queueLimit, &r); err != nil {
				return err
			}
		}
		_, err := q.ExecContext(ctx, `UPDATE webhook_log_cursors SET pos = $2, updated_at = now() WHERE account_id = $1`, accountID, to)
		return mapErr(err)
	})
	if errors.Is(err, errCursorMoved) {
		return WebhookRaise{}, nil
	}
	if err != nil {
		return WebhookRaise{}, err
	}
	r.Moved = true
	return r, nil
}

func raise(ctx context.Context, q ext, events []WebhookEvent, queueLimit int, r *WebhookRaise) error {
	var accounts []string
	for i := range events {
		if !slices.Contains(accounts, events[i].AccountID) {
			accounts = append(accounts, events[i].AccountID)
		}
	}
	type hook struct {
		account, id string
		events      []string
		created     time.Time
	}
	rows, err := q.QueryContext(ctx, `SELECT account_id, id, events, created_at FROM webhooks
WHERE active AND account_id = ANY($1::uuid[]) ORDER BY account_id, created_at, id`, pq.Array(accounts))
	if err != nil {
		return mapErr(err)
	}
	var hooks []hook
	for rows.Next() {
		var h hook
		if err := rows.Scan(&h.account, &h.id, pq.Array(&h.events), &h.created); err != nil {
			rows.Close()
			return mapErr(err)
		}
		hooks = append(hooks, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return mapErr(err)
	}
	if len(hooks) == 0 {
		return nil
	}
	pending := map[string]int{}
	rows, err = q.QueryContext(ctx, `SELECT account_id, count(*) FROM webhook_notifications
WHERE delivery_status = 'pending' AND account_id = ANY($1::uuid[]) GROUP BY account_id`, pq.Array(accounts))
	if err != nil {
		return mapErr(err)
	}
	for rows.Next() {
		var a string
		var n int
		if err := rows.Scan(&a, &n); err != nil {
			rows.Close()
			return mapErr(err)
		}
		pending[a] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return mapErr(err)
	}
	var acct, hookID, event, refType, refID, payload, status, lastErr []string
	var change []int64
	for i := range events {
		e := &events[i]
		for j := range hooks {
			h := &hooks[j]
			if h.account != e.AccountID || !slices.Contains(h.events, e.Event) || h.created.After(e.LoggedAt) {
				continue
			}
			st, why := "pending", ""
			if pending[e.AccountID] >= queueLimit {
				st = "failed"
				why = "not queued: the account had " + strconv.Itoa(queueLimit) + " pending notifications (WEBHOOK_QUEUE_LIMIT)"
				r.Overflow++
			} else {
				pending[e.AccountID]++
				r.Queued++
			}
			acct = append(acct, e.AccountID)
			hookID = append(hookID, h.id)
			event = append(event, e.Event)
			refType = append(refType, e.ReferenceType)
			refID = append(refID, e.ReferenceID)
			payload = append(payload, string(e.Payload))
			status = append(status, st)
			lastErr = append(lastErr, why)
			change = append(change, e.ChangeID)
		}
	}
	if len(acct) == 0 {
		return nil
	}
	_, err = q.ExecContext(ctx, `
INSERT INTO webhook_notifications (account_id, webhook_id, event, change_id, reference_type, reference_id, payload, delivery_status, last_error)
SELECT a, w, e, c, rt, ri, p::jsonb, s, nullif(le, '')
FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bigint[], $5::text[], $6::uuid[], $7::text[], $8::text[], $9::text[])
    AS x(a, w, e, c, rt, ri, p, s, le)
ON CONFLICT (account_id, webhook_id, change_id, event) DO NOTHING`,
		pq.Array(acct), pq.Array(hookID), pq.Array(event), pq.Array(change), pq.Array(refType), pq.Array(refID),
		pq.Array(payload), pq.Array(status), pq.Array(lastErr))
	var pqe *pq.Error
	if errors.As(err, &pqe) {
		// The server's reason, for the fan-out's log (never shown to a
		// client); the classification stays the mapped error's.
		err = fmt.Errorf("%s (SQLSTATE %s): %w", pqe.Message, pqe.Code, mapErr(err))
		if c := pqe.Code.Class(); c == "22" || c == "23" {
			return fmt.Errorf("%w: %w", ErrWebhookRefused, err)
		}
		return err
	}
	return mapErr(err)
}

// ErrWebhookRefused wraps the error of a RaiseWebhookNotifications whose
// notifications the database refused: a value of theirs it rejects
// (SQLSTATE classes 22, data exception, and 23, integrity constraint
// violation). The same rows would be refused again; a smaller set may not
// be.
var ErrWebhookRefused = errors.New("the database refused the webhook notifications")

// changeLogLagSQL: each account behind, its next change by the log's
// positions index.
const changeLogLagSQL = `SELECT coalesce(extract(epoch FROM now() - min(l.logged_at)), 0)::float8
FROM change_log_heads h
LEFT JOIN webhook_log_cursors c ON c.account_id = h.account_id
JOIN change_log l ON l.account_id = h.account_id AND l.pos = coalesce(c.pos, 0) + 1
WHERE h.pos > coalesce(c.pos, 0)`

// ChangeLogLag is the age of the oldest change the webhook fan-out has
// not read, over every account (0 when it is caught up): how far it is
// behind. One row per account behind is looked at: its next change (an
// account whose next change was pruned past the ceiling is left out).
func (db *DB) ChangeLogLag(ctx context.Context) (time.Duration, error) {
	var secs float64
	err := db.read("").QueryRowxContext(ctx, changeLogLagSQL).Scan(&secs)
	if err != nil {
		return 0, mapErr(err)
	}
	return time.Duration(max(secs, 0) * float64(time.Second)), nil
}
