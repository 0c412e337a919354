package db

import (
	"context"
	"encoding/json"
	"time"
)

// The webhook engine's statements (package webhook). The dispatcher serves
// every account's webhooks: it finds the accounts with due work without
// locks (cross-tenant by design), then claims and records one account's
// rows at a time.

// WebhookHeader is one custom header of a webhook.
type WebhookHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// WebhookDelivery is one claimed notification and what delivering it needs.
type WebhookDelivery struct {
	AccountID, ID, WebhookID, Event string
	Attempts                        int // attempts made before this claim
	URL, Secret                     string
	Headers                         []WebhookHeader
	CreatedAt                       time.Time
}

// WebhookDueAccounts returns up to limit accounts that have due, unclaimed
// notifications, walked from a random point (start) so that no account is
// always served first. It takes no locks (a multi-shard read on Citus):
// the claim is then made one account at a time (ClaimWebhookDeliveries).
// Cross-tenant by design: the dispatcher serves every account's webhooks.
func (db *DB) WebhookDueAccounts(ctx context.Context, limit int, start string) ([]string, error) {
	rows, err := db.readPrimary("").QueryContext(ctx, `SELECT account_id::text FROM webhook_notifications
WHERE delivery_status = 'pending' AND next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until < now())
GROUP BY account_id ORDER BY account_id > $2::uuid DESC, account_id LIMIT $1`, limit, start)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, a)
	}
	return out, mapErr(rows.Err())
}

// ClaimWebhookDeliveries claims up to limit due notifications of the
// account's active webhooks for owner until now()+claim, at most
// perWebhook in flight per webhook (counting the unexpired claims of every
// process), skipping rows another process is claiming (FOR UPDATE SKIP
// LOCKED: one account's rows, a single-shard statement on Citus). A claim
// that expires (its process died) makes the row due again.
//
// Per webhook, one record's notifications go in the order of their
// changes: a notification is claimed only when no pending notification of
// the same webhook and reference record has an earlier change, whether
// that one is in flight or waiting for its retry (it holds the later
// ones until it is delivered or given up). Notifications of one change
// (several events of one update) may go together.
//
// The account's webhooks are walked from a random point (start) so that
// no endpoint is always served first.
func (db *DB) ClaimWebhookDeliveries(ctx context.Context, accountID, owner string, limit, perWebhook int, claim time.Duration, start string) ([]WebhookDelivery, error) {
	rows, err := db.write(accountID).QueryContext(ctx, `
WITH w AS (
    (SELECT account_id, id FROM webhooks WHERE account_id = $6 AND active AND id > $5::uuid ORDER BY id)
    UNION ALL
    (SELECT account_id, id FROM webhooks WHERE account_id = $6 AND active AND id <= $5::uuid ORDER BY id)
), pick AS (
    SELECT n.account_id, n.id
    FROM w CROSS JOIN LATERAL (
        SELECT n.account_id, n.id FROM webhook_notifications n
        WHERE n.account_id = $6 AND n.webhook_id = w.id
          AND n.delivery_status = 'pending' AND n.next_attempt_at <= now()
          AND (n.claimed_until IS NULL OR n.claimed_until < now())
          AND NOT EXISTS (SELECT 1 FROM webhook_notifications e
              WHERE e.account_id = $6 AND e.webhook_id = n.webhook_id AND e.reference_id = n.reference_id
                AND e.reference_type = n.reference_type AND e.delivery_status = 'pending'
                AND e.change_id < n.change_id)
        ORDER BY n.next_attempt_at, n.change_id
        LIMIT greatest(0, $3 - (SELECT count(*) FROM webhook_notifications b
            WHERE b.account_id = $6 AND b.webhook_id = w.id
              AND b.claimed_until IS NOT NULL AND b.claimed_until >= now()))
        FOR UPDATE OF n SKIP LOCKED
    ) n
    LIMIT $2
)
UPDATE webhook_notifications n
SET claimed_by = $1, claimed_until = now() + make_interval(secs => $4)
FROM pick, webhooks wh
WHERE n.account_id = $6 AND n.id = pick.id
  AND wh.account_id = $6 AND wh.id = n.webhook_id
RETURNING n.account_id, n.id, n.webhook_id, n.event, n.attempts, n.created_at, wh.url, wh.secret, wh.headers`,
		owner, limit, perWebhook, claim.Seconds(), start, accountID)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	var out []WebhookDelivery
	for rows.Next() {
		var d WebhookDelivery
		var headers []byte
		if err := rows.Scan(&d.AccountID, &d.ID, &d.WebhookID, &d.Event, &d.Attempts, &d.CreatedAt, &d.URL, &d.Secret, &headers); err != nil {
			return nil, mapErr(err)
		}
		if len(headers) > 0 {
			if err := json.Unmarshal(headers, &d.Headers); err != nil {
				return nil, err
			}
		}
		out = append(out, d)
	}
	return out, mapErr(rows.Err())
}

// Delivery outcomes of WebhookAttempt.Status.
const (
	WebhookPending   = "pending"   // failed, to be retried at Retry
	WebhookSucceeded = "succeeded" // delivered
	WebhookFailed    = "failed"    // given up
)

// WebhookAttempt is one HTTP attempt of a claimed notification and what
// it leaves the notification in.
type WebhookAttempt struct {
	AccountID, NotificationID string
	Owner                     string // the claim's owner
	Duration                  time.Duration
	StatusCode                int    // 0: no response
	Error                     string // empty: none
	ResponseBody              string // at most 4 KiB
	Status                    string // WebhookPending, WebhookSucceeded or WebhookFailed
	Retry                     time.Duration
}

// RecordWebhookAttempt records the attempt and, when owner still holds
// the claim, moves the notification on (attempts+1, status, next attempt)
// and releases the claim, in one statement. It reports whether the claim
// was still held: a delivery that outlived its claim is recorded, but the
// notification is left to whoever claimed it since.
func (db *DB) RecordWebhookAttempt(ctx context.Context, a WebhookAttempt) (bool, error) {
	var code, errText, body any
	if a.StatusCode != 0 {
		code = a.StatusCode
	}
	if a.Error != "" {
		errText = a.Error
	}
	if a.ResponseBody != "" {
		body = a.ResponseBody
	}
	// The outcome picks the column set to now(): Citus refuses now() inside
	// CASE in a write, so the statement says it without one.
	args := []any{a.AccountID, a.NotificationID, a.Duration.Milliseconds(), code, errText, body, a.Status, a.Owner}
	var outcome string
	switch a.Status {
	case WebhookPending:
		args = append(args, a.Retry.Seconds())
		outcome = "next_attempt_at = now() + make_interval(secs => $9),"
	case WebhookSucceeded:
		outcome = "delivered_at = now(),"
	}
	res, err := db.write(a.AccountID).ExecContext(ctx, `
WITH a AS (
    INSERT INTO webhook_delivery_attempts (account_id, notification_id, duration_ms, status_code, error, response_body)
    SELECT account_id, id, $3, $4, $5, $6 FROM webhook_notifications WHERE account_id = $1 AND id = $2
)
UPDATE webhook_notifications
SET attempts = attempts + 1, delivery_status = $7, `+outcome+`
    last_error = $5, claimed_by = NULL, claimed_until = NULL
WHERE account_id = $1 AND id = $2 AND claimed_by = $8 AND delivery_status = 'pending'`, args...)
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, mapErr(err)
}

// WebhookQueueDepth is the number of pending notifications of every
// account (the queue-depth gauge).
func (db *DB) WebhookQueueDepth(ctx context.Context) (int64, error) {
	var n int64
	err := db.read("").QueryRowxContext(ctx, `SELECT count(*) FROM webhook_notifications WHERE delivery_status = 'pending'`).Scan(&n)
	return n, mapErr(err)
}
