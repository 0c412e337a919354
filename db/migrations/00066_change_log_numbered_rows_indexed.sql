-- A logged row costs fewer index entries and less per-statement work: the
-- account's positions index holds numbered rows only, the numbering finds
-- a transaction's rows through the primary key, and the op CHECK goes.
--
-- Since 00056 a change is logged without a position (pos NULL) and the
-- deferred trigger change_log_head numbers the transaction's rows of the
-- account at commit (an UPDATE setting pos: not HOT, pos is indexed). The
-- unique (account_id, pos) index took an entry for every row at its
-- insert, (account_id, NULL), which served only the numbering's search
-- for the unnumbered rows, and a second one when the numbering set pos.
--
-- Now the index is partial, WHERE pos IS NOT NULL: a row gets its entry
-- when it is numbered, once. Every reader asks for positions above,
-- equal to or below a value (pos > $n, pos = …, pos <= …): a strict
-- comparison implies pos IS NOT NULL, so the planner uses the partial
-- index for them as before (TestChangeLogReadersUseTheirIndexes holds the
-- plans). The numbering finds its rows through the primary key
-- (account_id, id) from its trigger's own row: since 00062 the trigger is
-- queued by the account's first row since the account was last numbered
-- (NEW), and the rows the transaction logs of the account after it have
-- larger ids (one identity sequence on the node that holds the account's
-- shard, taken in the order rows are written; the numbering already gave
-- positions in id order). A range of the primary key from NEW.id holds the
-- transaction's rows and those logged since by other transactions of the
-- account (committed ones numbered, uncommitted ones invisible): pos IS
-- NULL keeps its own.
--
-- The op CHECK (op IN ('INSERT', 'UPDATE', 'DELETE')) was read again from
-- its stored text for every statement that inserted a row (ExecRelCheck's
-- stringToNode: 1.6 % of PostgreSQL's CPU in first polls at stop 43, one
-- statement per logged row). The triggers write TG_OP, nothing else ever
-- writes the log: the CHECK is dropped.
--
-- shipgraph_notify_change no longer calls shipgraph_change_log_pos (a
-- SQL function giving NULL since 00062) in its INSERT.

-- +goose Up
-- On Citus the index is built on the shards in parallel, and a function
-- command after a parallel operation in one transaction is refused.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

DROP INDEX change_log_account_pos_idx;
CREATE UNIQUE INDEX change_log_account_pos_idx ON change_log (account_id, pos) WHERE pos IS NOT NULL;
ALTER TABLE change_log DROP CONSTRAINT change_log_op_check;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_head() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids  bigint[];
    n    bigint;
    head bigint;
BEGIN
    -- Queued by the account's first row since it was last numbered (the
    -- trigger's WHEN): NEW. A row logged after this marks it again.
    PERFORM set_config('shipgraph.log_pending',
                       replace(current_setting('shipgraph.log_pending', true), NEW.account_id::text || ' ', ''), true);
    -- The transaction's unnumbered rows of the account: NEW and the ones
    -- written after it (larger ids), by the primary key.
    SELECT array_agg(c.id ORDER BY c.id) INTO ids FROM change_log c
    WHERE c.account_id = NEW.account_id AND c.id >= NEW.id AND c.pos IS NULL;
    n := coalesce(cardinality(ids), 0);
    IF n = 0 THEN
        RETURN NULL;
    END IF;
    INSERT INTO change_log_heads AS h (account_id, pos) VALUES (NEW.account_id, n)
    ON CONFLICT (account_id) DO UPDATE SET pos = h.pos + EXCLUDED.pos
    RETURNING h.pos INTO head;
    -- width_bucket(id, ids): how many of the sorted ids are <= id, the
    -- row's rank (1 … n).
    UPDATE change_log l SET pos = head - n + width_bucket(l.id, ids)
    WHERE l.account_id = NEW.account_id AND l.id BETWEEN ids[1] AND ids[n] AND l.pos IS NULL;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- 00052's, without the call of shipgraph_change_log_pos.
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
    q       record;
    r       record;
BEGIN
    IF current_setting('shipgraph.notify', true) = 'off' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        IF OLD *= NEW THEN
            RETURN NULL;
        END IF;
        -- Quiet columns (the schedule and poll times): each branch runs on
        -- its own table only, where the columns exist.
        IF TG_ARGV[0] = 'tracking_request' THEN
            q := NEW;
            q.last_polled_at := OLD.last_polled_at;
            q.next_poll_at := OLD.next_poll_at;
            IF q *= OLD THEN
                RETURN NULL;
            END IF;
        ELSIF TG_ARGV[0] = 'shipment' THEN
            q := NEW;
            q.line_tracking_last_attempted_at := OLD.line_tracking_last_attempted_at;
            q.line_tracking_last_succeeded_at := OLD.line_tracking_last_succeeded_at;
            IF q *= OLD THEN
                RETURN NULL;
            END IF;
        END IF;
        rec := to_jsonb(NEW);
        old_rec := to_jsonb(OLD);
        SELECT array_agg(n.key ORDER BY n.key), jsonb_object_agg(n.key, old_rec -> n.key), jsonb_object_agg(n.key, n.value)
        INTO cols, oldv, newv
        FROM jsonb_each(rec) n
        WHERE n.value IS DISTINCT FROM old_rec -> n.key;
        IF cols IS NULL THEN
            RETURN NULL;
        END IF;
    END IF;
    -- The account, id and parent read from the row itself, not from its
    -- JSON: an INSERT or DELETE makes none (every table logged here has
    -- account_id and id, options too since 00010).
    IF TG_OP = 'DELETE' THEN
        r := OLD;
    ELSE
        r := NEW;
    END IF;
    account := r.account_id;
    IF account IS NULL THEN
        RETURN NULL;
    END IF;
    IF TG_ARGV[1] = 'shipment_id' THEN
        parent := r.shipment_id;
    ELSIF TG_ARGV[1] = 'container_id' THEN
        parent := r.container_id;
    ELSIF TG_ARGV[1] = 'entity_id' THEN
        parent := r.entity_id;
    ELSIF TG_ARGV[1] = 'definition_id' THEN
        parent := r.definition_id;
    ELSIF TG_ARGV[1] <> '' THEN
        parent := (to_jsonb(r) ->> TG_ARGV[1])::uuid;
    END IF;
    INSERT INTO change_log (account_id, record_type, record_id, op, parent_id, changed, old, new)
    VALUES (account, TG_ARGV[0], r.id, TG_OP, parent, cols, oldv, newv);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

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
    q       record;
    r       record;
BEGIN
    IF current_setting('shipgraph.notify', true) = 'off' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        IF OLD *= NEW THEN
            RETURN NULL;
        END IF;
        -- Quiet columns (the schedule and poll times): each branch runs on
        -- its own table only, where the columns exist.
        IF TG_ARGV[0] = 'tracking_request' THEN
            q := NEW;
            q.last_polled_at := OLD.last_polled_at;
            q.next_poll_at := OLD.next_poll_at;
            IF q *= OLD THEN
                RETURN NULL;
            END IF;
        ELSIF TG_ARGV[0] = 'shipment' THEN
            q := NEW;
            q.line_tracking_last_attempted_at := OLD.line_tracking_last_attempted_at;
            q.line_tracking_last_succeeded_at := OLD.line_tracking_last_succeeded_at;
            IF q *= OLD THEN
                RETURN NULL;
            END IF;
        END IF;
        rec := to_jsonb(NEW);
        old_rec := to_jsonb(OLD);
        SELECT array_agg(n.key ORDER BY n.key), jsonb_object_agg(n.key, old_rec -> n.key), jsonb_object_agg(n.key, n.value)
        INTO cols, oldv, newv
        FROM jsonb_each(rec) n
        WHERE n.value IS DISTINCT FROM old_rec -> n.key;
        IF cols IS NULL THEN
            RETURN NULL;
        END IF;
    END IF;
    -- The account, id and parent read from the row itself, not from its
    -- JSON: an INSERT or DELETE makes none (every table logged here has
    -- account_id and id, options too since 00010).
    IF TG_OP = 'DELETE' THEN
        r := OLD;
    ELSE
        r := NEW;
    END IF;
    account := r.account_id;
    IF account IS NULL THEN
        RETURN NULL;
    END IF;
    IF TG_ARGV[1] = 'shipment_id' THEN
        parent := r.shipment_id;
    ELSIF TG_ARGV[1] = 'container_id' THEN
        parent := r.container_id;
    ELSIF TG_ARGV[1] = 'entity_id' THEN
        parent := r.entity_id;
    ELSIF TG_ARGV[1] = 'definition_id' THEN
        parent := r.definition_id;
    ELSIF TG_ARGV[1] <> '' THEN
        parent := (to_jsonb(r) ->> TG_ARGV[1])::uuid;
    END IF;
    INSERT INTO change_log (account_id, pos, record_type, record_id, op, parent_id, changed, old, new)
    VALUES (account, shipgraph_change_log_pos(account), TG_ARGV[0], r.id, TG_OP, parent, cols, oldv, newv);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_head() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids  bigint[];
    n    bigint;
    head bigint;
BEGIN
    -- Queued by the account's first row since it was last numbered (the
    -- trigger's WHEN); a row logged after this marks it again.
    PERFORM set_config('shipgraph.log_pending',
                       replace(current_setting('shipgraph.log_pending', true), NEW.account_id::text || ' ', ''), true);
    SELECT array_agg(c.id ORDER BY c.id) INTO ids FROM change_log c WHERE c.account_id = NEW.account_id AND c.pos IS NULL;
    n := coalesce(cardinality(ids), 0);
    IF n = 0 THEN
        RETURN NULL;
    END IF;
    INSERT INTO change_log_heads AS h (account_id, pos) VALUES (NEW.account_id, n)
    ON CONFLICT (account_id) DO UPDATE SET pos = h.pos + EXCLUDED.pos
    RETURNING h.pos INTO head;
    -- width_bucket(id, ids): how many of the sorted ids are <= id, the
    -- row's rank (1 … n).
    UPDATE change_log l SET pos = head - n + width_bucket(l.id, ids)
    WHERE l.account_id = NEW.account_id AND l.pos IS NULL AND l.id BETWEEN ids[1] AND ids[n];
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- Every row is numbered before its transaction commits: none has pos NULL
-- (the CHECK and the full index build over committed rows).
ALTER TABLE change_log ADD CONSTRAINT change_log_op_check CHECK (op IN ('INSERT', 'UPDATE', 'DELETE'));
DROP INDEX change_log_account_pos_idx;
CREATE UNIQUE INDEX change_log_account_pos_idx ON change_log (account_id, pos);
