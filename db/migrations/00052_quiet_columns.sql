-- The change log leaves out updates of bookkeeping columns by itself, on
-- every engine, without a session setting.
--
-- A tracking poll moves a request's schedule (last_polled_at,
-- next_poll_at) and its shipment's poll times
-- (line_tracking_last_attempted_at, line_tracking_last_succeeded_at) on
-- every poll. Those announce nothing, and logging them would raise a
-- tracking_request and a shipment change an hour for every request. The
-- store used to switch the log off for those statements
-- (set_config('shipgraph.notify', 'off', true)); on a Citus cluster the
-- trigger runs on the worker holding the shard, which never sees a
-- setting made by set_config on the coordinator, and logged them anyway.
--
-- Now the trigger itself skips an UPDATE whose only changed columns are
-- these quiet ones (a row that changes them and anything else is logged
-- as before, with every changed column). The test is made without JSON:
-- the new row with the quiet columns put back to their old values,
-- compared byte for byte with the old row (*=). An UPDATE that changes
-- nothing at all is skipped the same way before any JSON is made; the
-- changed columns are found with one pass over the new row's JSON
-- (looking each key up in the old row's) instead of joining both rows'
-- expanded pairs; an INSERT or DELETE makes no JSON at all (the account,
-- id and parent are read from the row).
--
-- SET LOCAL shipgraph.notify = 'off' stays as the bulk loader's switch
-- (the seeder; on Citus with citus.propagate_set_commands = local, which
-- carries SET LOCAL to the workers).

-- +goose Up
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

-- +goose Down
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
    INSERT INTO change_log (account_id, pos, record_type, record_id, op, parent_id, changed, old, new)
    VALUES (account, shipgraph_change_log_pos(account), TG_ARGV[0], (rec ->> 'id')::uuid, TG_OP, parent, cols, oldv, newv);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
