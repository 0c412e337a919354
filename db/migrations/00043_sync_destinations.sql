-- Data sync: destinations an account exports its tracking data to (a
-- PostgreSQL database or an object-store prefix), and where each table of
-- each destination stands in the account's change log.
--
-- The destination's URL is stored twice: sealed (AES-GCM with the key of
-- SYNC_SECRET_KEY, by package datasync; the database never sees it in
-- clear) and with its credentials removed, for display.
--
-- A lease (lease_owner, lease_until) keeps one worker per destination at
-- a time across instances, on top of River's unique job: a job rescued
-- while the first one still runs waits for the lease instead.

-- +goose Up
CREATE TABLE sync_destinations (
    account_id   uuid        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    id           uuid        NOT NULL DEFAULT gen_random_uuid(),
    name         text        NOT NULL DEFAULT '',
    kind         text        NOT NULL CHECK (kind IN ('postgres', 'object_store')),
    url_display  text        NOT NULL,
    url_sealed   bytea       NOT NULL,
    tables       text[]      NOT NULL,
    paused       boolean     NOT NULL DEFAULT false,
    failures     integer     NOT NULL DEFAULT 0,
    lease_owner  uuid,
    lease_until  timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, id)
);
COMMENT ON TABLE sync_destinations IS 'shipgraph:tenant';

-- One row per destination and table. phase backfill: copying the
-- account's rows in key order (backfill_after the last key copied; the
-- copy started at log position backfill_head); follow: applying the
-- account's log after pos.
CREATE TABLE sync_table_status (
    account_id     uuid        NOT NULL,
    destination_id uuid        NOT NULL,
    table_name     text        NOT NULL,
    phase          text        NOT NULL DEFAULT 'backfill' CHECK (phase IN ('backfill', 'follow')),
    backfill_head  bigint,
    backfill_after text,
    pos            bigint      NOT NULL DEFAULT 0,
    rows_written   bigint      NOT NULL DEFAULT 0,
    last_error     text,
    last_error_at  timestamptz,
    synced_at      timestamptz,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, destination_id, table_name),
    FOREIGN KEY (account_id, destination_id) REFERENCES sync_destinations (account_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE sync_table_status IS 'shipgraph:tenant';

-- +goose Down
DROP TABLE sync_table_status;
DROP TABLE sync_destinations;
