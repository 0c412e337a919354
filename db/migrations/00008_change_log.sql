-- The durable change log (issue 17). The change triggers of migration 00004
-- now append one row per change to change_log, in the writing transaction,
-- so a change is logged if and only if it commits — whoever wrote it
-- (Shipgraph, /v2, another system with plain SQL). NOTIFY is only a
-- wake-up: an empty payload on the account's channel
-- (shipgraph_changes_<account id without dashes>, the live hub listens there)
-- and on shipgraph_change_log (every account: the webhook dispatcher), which
-- PostgreSQL folds into one notification per channel and transaction.
--
-- Readers never skip a row. A row's id comes from a sequence at INSERT time,
-- not at commit time: a transaction may commit id 6 before another commits
-- id 5. So readers order and resume by (xid, id), xid being the writing
-- transaction's id, and return only rows whose xid is below the reading
-- snapshot's xmin: every transaction that could still add a row there has
-- ended (db/changelog.go). The public "log id" stays id.
--
-- UPDATE rows name every changed column (changed) with their previous (old)
-- and new (new) values; INSERT and DELETE rows carry neither. An UPDATE that
-- changes nothing logs nothing. SET LOCAL shipgraph.notify = 'off' switches
-- the log and the wake-ups off for a transaction (bulk loads; the seeder).
--
-- Retention: the server prunes rows older than CHANGE_LOG_RETENTION in
-- (xid, id) order, a prefix at a time, and records the last pruned position
-- in change_log_pruned: a reader whose position is below it missed rows.

-- +goose Up
CREATE TABLE change_log (
    account_id  uuid        NOT NULL,
    id          bigint      GENERATED ALWAYS AS IDENTITY,
    xid         xid8        NOT NULL DEFAULT pg_current_xact_id(),
    logged_at   timestamptz NOT NULL DEFAULT now(),
    record_type text        NOT NULL,
    record_id   uuid        NOT NULL,
    op          text        NOT NULL CHECK (op IN ('INSERT', 'UPDATE', 'DELETE')),
    parent_id   uuid,
    changed     text[],
    old         jsonb,
    new         jsonb,
    PRIMARY KEY (account_id, id)
);
-- Every account's log in order (the webhook dispatcher; pruning).
CREATE INDEX change_log_xid_idx ON change_log (xid, id);
-- One account's log in order (subscriptions).
CREATE INDEX change_log_account_xid_idx ON change_log (account_id, xid, id);
-- A public log id's position, whatever its account. Not unique: a
-- distributed table enforces uniqueness only with account_id (the primary
-- key does); ids are unique by how they are made (an identity).
CREATE INDEX change_log_id_idx ON change_log (id);
-- Account data (db/distribution_test.go judges every table by its mark).
COMMENT ON TABLE change_log IS 'shipgraph:tenant';
ALTER TABLE change_log SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_insert_scale_factor = 0.05);

-- The last position pruned: rows at or below it may be gone.
CREATE TABLE change_log_pruned (
    only_row  boolean     PRIMARY KEY DEFAULT true CHECK (only_row),
    xid       xid8        NOT NULL,
    id        bigint      NOT NULL,
    pruned_at timestamptz
);
INSERT INTO change_log_pruned (xid, id) VALUES ('0', 0);
-- One row for every account (Citus: a reference table).
COMMENT ON TABLE change_log_pruned IS 'shipgraph:reference';

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    rec     jsonb;
    old_rec jsonb;
    account uuid;
    parent  uuid;
    cols    text[];
    oldv    jsonb;
    newv    jsonb;
BEGIN
    IF current_setting('shipgraph.notify', true) = 'off' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'DELETE' THEN
        rec := to_jsonb(OLD);
    ELSE
        rec := to_jsonb(NEW);
    END IF;
    IF TG_OP = 'UPDATE' THEN
        old_rec := to_jsonb(OLD);
        SELECT array_agg(n.key ORDER BY n.key), jsonb_object_agg(n.key, o.value), jsonb_object_agg(n.key, n.value)
        INTO cols, oldv, newv
        FROM jsonb_each(rec) n JOIN jsonb_each(old_rec) o ON o.key = n.key
        WHERE n.value IS DISTINCT FROM o.value;
        IF cols IS NULL THEN
            RETURN NULL;
        END IF;
    END IF;
    account := (rec ->> 'account_id')::uuid;
    IF account IS NULL AND rec ? 'definition_id' THEN
        -- Options carry no account: their definition's. A definition
        -- deleted with its options (CASCADE) is gone already; its own
        -- DELETE was logged.
        SELECT d.account_id INTO account FROM custom_field_definitions d
        WHERE d.id = (rec ->> 'definition_id')::uuid;
    END IF;
    IF account IS NULL THEN
        RETURN NULL;
    END IF;
    IF TG_ARGV[1] <> '' THEN
        parent := (rec ->> TG_ARGV[1])::uuid;
    END IF;
    INSERT INTO change_log (account_id, record_type, record_id, op, parent_id, changed, old, new)
    VALUES (account, TG_ARGV[0], (rec ->> 'id')::uuid, TG_OP, parent, cols, oldv, newv);
    -- Wake-ups: identical notifications of one transaction are sent once.
    PERFORM pg_notify('shipgraph_changes_' || replace(account::text, '-', ''), '');
    PERFORM pg_notify('shipgraph_change_log', '');
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    rec     jsonb;
    old_rec jsonb;
    account text;
    cols    text[];
    was     jsonb := '{}';
    payload jsonb;
    i       int;
BEGIN
    IF current_setting('shipgraph.notify', true) = 'off' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'DELETE' THEN
        rec := to_jsonb(OLD);
    ELSE
        rec := to_jsonb(NEW);
    END IF;
    IF TG_OP = 'UPDATE' THEN
        old_rec := to_jsonb(OLD);
        SELECT array_agg(n.key ORDER BY n.key) INTO cols
        FROM jsonb_each(rec) n JOIN jsonb_each(old_rec) o ON o.key = n.key
        WHERE n.value IS DISTINCT FROM o.value;
        IF cols IS NULL THEN
            RETURN NULL;
        END IF;
        FOR i IN 2 .. coalesce(TG_NARGS, 0) - 1 LOOP
            IF TG_ARGV[i] = ANY (cols) THEN
                was := was || jsonb_build_object(TG_ARGV[i], old_rec -> TG_ARGV[i]);
            END IF;
        END LOOP;
    END IF;
    account := rec ->> 'account_id';
    IF account IS NULL AND rec ? 'definition_id' THEN
        SELECT d.account_id::text INTO account FROM custom_field_definitions d
        WHERE d.id = (rec ->> 'definition_id')::uuid;
    END IF;
    IF account IS NULL THEN
        RETURN NULL;
    END IF;
    payload := jsonb_build_object('t', TG_ARGV[0], 'id', rec ->> 'id', 'op', TG_OP);
    IF TG_ARGV[1] <> '' THEN
        payload := payload || jsonb_build_object('p', rec ->> TG_ARGV[1]);
    END IF;
    IF was <> '{}' THEN
        payload := payload || jsonb_build_object('was', was);
    END IF;
    IF cols IS NOT NULL THEN
        payload := payload || jsonb_build_object('c', to_jsonb(cols));
        IF octet_length(payload::text) > 7900 THEN
            payload := payload || jsonb_build_object('c', NULL);
        END IF;
    END IF;
    PERFORM pg_notify('shipgraph_changes_' || replace(account, '-', ''), payload::text);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
DROP TABLE change_log_pruned;
DROP TABLE change_log;
