-- +goose Up
-- GET /v2/email_submissions: the account's submissions, newest first.
CREATE INDEX email_submissions_account_created_idx ON email_submissions (account_id, created_at, id);

-- +goose Down
DROP INDEX email_submissions_account_created_idx;
