-- The tracking schedule claims due requests account by account (each
-- claim a statement on one account, as a distributed database routes it):
-- an index on (account_id, next_poll_at) serves that claim.

-- +goose Up
CREATE INDEX tracking_requests_account_due_idx ON tracking_requests (account_id, next_poll_at) WHERE next_poll_at IS NOT NULL;

-- +goose Down
DROP INDEX tracking_requests_account_due_idx;
