-- Webhook notifications of one record are delivered in the order their
-- changes happened, per webhook: the dispatcher claims a pending
-- notification only when no pending notification of the same webhook and
-- reference record has an earlier change (one in flight, or waiting for its
-- retry, holds the later ones). This index answers that check, and the
-- claim is one account's at a time (account_id first: a single-shard
-- statement on Citus).

-- +goose Up
CREATE INDEX webhook_notifications_record_pending_idx
    ON webhook_notifications (account_id, webhook_id, reference_id, change_id)
    WHERE delivery_status = 'pending';

-- +goose Down
DROP INDEX webhook_notifications_record_pending_idx;
