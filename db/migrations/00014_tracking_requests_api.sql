-- The tracking request API (issue 27): GET /v2/tracking_requests sorts and
-- filters by updated_at as well as created_at (filter[updated_at][start|
-- end], sort=updated_at); this index serves both at any size.

-- +goose Up
CREATE INDEX tracking_requests_account_updated_idx ON tracking_requests (account_id, updated_at, id);

-- +goose Down
DROP INDEX tracking_requests_account_updated_idx;
