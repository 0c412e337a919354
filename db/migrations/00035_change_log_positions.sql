-- Change-log positions that mean the same on every node, and wake-ups sent
-- where the listeners are.
--
-- Until now readers ordered the log by (xid, id) and held back rows at or
-- above their snapshot's xmin. Transaction ids are one server's: on a
-- distributed PostgreSQL (Citus) each node counts its own, and a shard
-- moved to another node takes its rows to a node whose xids are unrelated.
--
-- Positions now belong to the account: change_log.pos is 1, 2, 3… within
-- an account, taken from the account's row of change_log_heads by the
-- trigger that logs the change. That row stays locked until the writing
-- transaction ends, so the next writer of the same account waits for it:
-- positions commit in the order they were taken, without gaps (a rollback
-- gives its positions back). A reader that saw position n has seen every
-- position below n, on whatever node the account's shard lives, and after
-- it moved (the rows and the head move together: same distribution
-- column). What it costs: writers of one account that log changes run
-- their commits one after the other (they already lock the account's
-- counters); writers of different accounts never wait for each other, and
-- an open transaction delays its own account's writers only, not every
-- reader of every account as a held-back xmin did.
--
-- Positions are dense, so a reader sees in its own read when rows it has
-- not read were pruned: the next position it gets is not the one after
-- its own.
-- Readers of every account (the webhook fan-out, the response cache) keep
-- a position per account and find the accounts that moved in
-- change_log_heads; the fan-out's are in webhook_log_cursors.
--
-- Wake-ups: the triggers no longer NOTIFY. A NOTIFY in a trigger fires on
-- the node that holds the shard, where nobody listens, and a transaction
-- that ran NOTIFY cannot PREPARE (every two-phase commit failed). The
-- server wakes the listeners itself after a write commits (db/wakeup.go),
-- on the node it is connected to, and readers also look at
-- change_log_heads every second so that writes made by other systems with
-- plain SQL are seen without a wake-up. The same holds for API keys: the
-- server announces a revocation after it commits, and the key cache checks
-- its keys against api_tokens at the same floor interval.
--
-- Positions of existing rows follow their (xid, id) order, so a log id a
-- client holds still names the same place to resume from.

-- +goose Up
-- No writer may log a change between the backfill and the new triggers.
LOCK TABLE change_log IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE change_log_heads (
    account_id uuid   PRIMARY KEY,
    pos        bigint NOT NULL
) WITH (fillfactor = 50);
-- Account data: distributed with change_log (db/distribution_test.go).
COMMENT ON TABLE change_log_heads IS 'shipgraph:tenant';

ALTER TABLE change_log ADD COLUMN pos bigint;
UPDATE change_log l SET pos = n.pos
FROM (SELECT account_id, id, row_number() OVER (PARTITION BY account_id ORDER BY xid, id) AS pos FROM change_log) n
WHERE l.account_id = n.account_id AND l.id = n.id;
ALTER TABLE change_log ALTER COLUMN pos SET NOT NULL;
INSERT INTO change_log_heads (account_id, pos)
SELECT account_id, max(pos) FROM change_log GROUP BY account_id;
-- One account's log in order (subscriptions, every reader). Unique: two
-- rows never share a position.
CREATE UNIQUE INDEX change_log_account_pos_idx ON change_log (account_id, pos);
-- Pruning by age.
CREATE INDEX change_log_logged_at_idx ON change_log (logged_at);

-- The webhook fan-out's position in each account's log (it had one
-- position in the (xid, id) order of every account's): a row per account
-- it read, at the last position it raised notifications up to. Where the
-- old cursor stood, each account's position is its last row at or before
-- it.
CREATE TABLE webhook_log_cursors (
    account_id uuid        PRIMARY KEY,
    pos        bigint      NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE webhook_log_cursors IS 'shipgraph:tenant';
INSERT INTO webhook_log_cursors (account_id, pos)
SELECT l.account_id, max(l.pos) FROM change_log l, webhook_cursor c
WHERE c.log_xid IS NOT NULL AND (l.xid, l.id) <= (c.log_xid, c.log_id)
GROUP BY l.account_id;
-- Accounts whose rows the old cursor passed and pruning removed: nothing
-- of theirs is left to raise.
INSERT INTO webhook_log_cursors (account_id, pos)
SELECT h.account_id, h.pos FROM change_log_heads h, webhook_cursor c
WHERE c.log_xid IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM webhook_log_cursors w WHERE w.account_id = h.account_id)
  AND NOT EXISTS (SELECT 1 FROM change_log l WHERE l.account_id = h.account_id AND (l.xid, l.id) > (c.log_xid, c.log_id));
DROP TABLE webhook_cursor;

-- What only the (xid, id) order needed: the column, its indexes, the one
-- pruned position of every account (a hole in the positions now) and the
-- index of a public id's position whatever its account (a client resumes
-- within its account: the primary key).
DROP INDEX change_log_account_xid_idx;
DROP INDEX change_log_xid_idx;
DROP INDEX change_log_id_idx;
ALTER TABLE change_log DROP COLUMN xid;
DROP TABLE change_log_pruned;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_pos(account uuid) RETURNS bigint LANGUAGE sql AS $$
    INSERT INTO change_log_heads AS h (account_id, pos) VALUES (account, 1)
    ON CONFLICT (account_id) DO UPDATE SET pos = h.pos + 1
    RETURNING h.pos
$$;
-- +goose StatementEnd

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
    INSERT INTO change_log (account_id, pos, record_type, record_id, op, parent_id, changed, old, new)
    VALUES (account, shipgraph_change_log_pos(account), TG_ARGV[0], (rec ->> 'id')::uuid, TG_OP, parent, cols, oldv, newv);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_log_transport_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('shipgraph.notify', true) = 'off' THEN
        RETURN NULL;
    END IF;
    INSERT INTO change_log (account_id, pos, record_type, record_id, op, parent_id, changed, old, new)
    VALUES (NEW.account_id, shipgraph_change_log_pos(NEW.account_id), 'transport_event', NEW.id, 'INSERT', NEW.container_id, NULL, NULL,
            jsonb_build_object('event', NEW.event, 'event_at', NEW.event_at, 'timezone', NEW.timezone,
                               'location_locode', NEW.location_locode, 'voyage_number', NEW.voyage_number,
                               'data_source', NEW.data_source, 'created_at', NEW.created_at,
                               'shipment_id', NEW.shipment_id));
    RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP TRIGGER api_tokens_notify_truncate ON api_tokens;
DROP TRIGGER api_tokens_notify_change ON api_tokens;
DROP FUNCTION api_tokens_notify();

-- +goose Down
-- +goose StatementBegin
CREATE FUNCTION api_tokens_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('shipgraph_tokens', '*');
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('shipgraph_tokens', OLD.id::text);
    ELSIF (OLD.revoked_at, OLD.role, OLD.account_id, OLD.user_id, OLD.token_sha256, OLD.id)
        IS DISTINCT FROM (NEW.revoked_at, NEW.role, NEW.account_id, NEW.user_id, NEW.token_sha256, NEW.id) THEN
        PERFORM pg_notify('shipgraph_tokens', OLD.id::text);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER api_tokens_notify_change
    AFTER UPDATE OF revoked_at, role, account_id, user_id, token_sha256, id OR DELETE ON api_tokens
    FOR EACH ROW EXECUTE FUNCTION api_tokens_notify();
CREATE TRIGGER api_tokens_notify_truncate
    AFTER TRUNCATE ON api_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION api_tokens_notify();

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_log_transport_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('shipgraph.notify', true) = 'off' THEN
        RETURN NULL;
    END IF;
    INSERT INTO change_log (account_id, record_type, record_id, op, parent_id, changed, old, new)
    VALUES (NEW.account_id, 'transport_event', NEW.id, 'INSERT', NEW.container_id, NULL, NULL,
            jsonb_build_object('event', NEW.event, 'event_at', NEW.event_at, 'timezone', NEW.timezone,
                               'location_locode', NEW.location_locode, 'voyage_number', NEW.voyage_number,
                               'data_source', NEW.data_source, 'created_at', NEW.created_at,
                               'shipment_id', NEW.shipment_id));
    PERFORM pg_notify('shipgraph_changes_' || replace(NEW.account_id::text, '-', ''), '');
    PERFORM pg_notify('shipgraph_change_log', '');
    RETURN NULL;
END
$$;
-- +goose StatementEnd

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
    PERFORM pg_notify('shipgraph_changes_' || replace(account::text, '-', ''), '');
    PERFORM pg_notify('shipgraph_change_log', '');
    RETURN NULL;
END
$$;
-- +goose StatementEnd
DROP FUNCTION shipgraph_change_log_pos(uuid);
-- Transaction ids are gone: every row gets xid 0, so the (xid, id) order
-- is the id order, and the webhook cursor stands at the last id it read.
ALTER TABLE change_log ADD COLUMN xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE change_log ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
CREATE INDEX change_log_xid_idx ON change_log (xid, id);
CREATE INDEX change_log_account_xid_idx ON change_log (account_id, xid, id);
CREATE INDEX change_log_id_idx ON change_log (id);
CREATE TABLE change_log_pruned (
    only_row  boolean     PRIMARY KEY DEFAULT true CHECK (only_row),
    xid       xid8        NOT NULL,
    id        bigint      NOT NULL,
    pruned_at timestamptz
);
INSERT INTO change_log_pruned (xid, id) VALUES ('0', 0);
COMMENT ON TABLE change_log_pruned IS 'shipgraph:reference';
CREATE TABLE webhook_cursor (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    log_xid    xid8,
    log_id     bigint,
    updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO webhook_cursor (log_xid, log_id)
SELECT '0', max(l.id) FROM change_log l JOIN webhook_log_cursors w ON w.account_id = l.account_id AND l.pos <= w.pos
HAVING max(l.id) IS NOT NULL;
INSERT INTO webhook_cursor SELECT WHERE NOT EXISTS (SELECT 1 FROM webhook_cursor);
COMMENT ON TABLE webhook_cursor IS 'shipgraph:reference';
DROP TABLE webhook_log_cursors;
DROP INDEX change_log_logged_at_idx;
DROP INDEX change_log_account_pos_idx;
ALTER TABLE change_log DROP COLUMN pos;
DROP TABLE change_log_heads;
