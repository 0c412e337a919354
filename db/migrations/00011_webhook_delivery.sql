-- Webhook delivery (issue 17, the webhook engine in package webhook).
--
-- webhook_cursor: the one position in change_log up to which notifications
-- have been raised. The fan-out advances it in the transaction that inserts
-- the notifications, after checking it is still where it read from, so
-- nothing is raised twice or lost whichever process does it (NULL: from the
-- start of the log).
--
-- webhook_notifications.last_error: why the last attempt failed, or why a
-- notification was recorded failed without being tried (the account's
-- queue was full: WEBHOOK_QUEUE_LIMIT).
--
-- Indexes of the dispatcher: what is due per webhook (its claim walks the
-- webhooks and takes a few due rows of each), the claims in flight per
-- webhook (the per-endpoint bound), and the pending count per account (the
-- queue limit) comes from the first.

-- +goose Up
CREATE TABLE webhook_cursor (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    log_xid    xid8,
    log_id     bigint,
    updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO webhook_cursor DEFAULT VALUES;
-- One position for every account's log (Citus: a reference table; see
-- docs/scaling.md for per-worker cursors there).
COMMENT ON TABLE webhook_cursor IS 'shipgraph:reference';

ALTER TABLE webhook_notifications ADD COLUMN last_error text;

CREATE INDEX webhook_notifications_webhook_due_idx
    ON webhook_notifications (account_id, webhook_id, next_attempt_at)
    WHERE delivery_status = 'pending';
CREATE INDEX webhook_notifications_claimed_idx
    ON webhook_notifications (account_id, webhook_id)
    WHERE claimed_until IS NOT NULL;

-- +goose Down
DROP INDEX webhook_notifications_claimed_idx;
DROP INDEX webhook_notifications_webhook_due_idx;
ALTER TABLE webhook_notifications DROP COLUMN last_error;
DROP TABLE webhook_cursor;
