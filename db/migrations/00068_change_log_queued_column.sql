-- A logged row marks its account pending for the numbering in its own
-- INSERT, not in the numbering trigger's WHEN: the WHEN is one column.
--
-- Since 00062 the constraint trigger change_log_head is queued by the
-- account's first row since it was last numbered: its WHEN condition read
-- shipgraph.log_pending and, for the account's first row, added the
-- account to it. The executor prepares a trigger's WHEN once per
-- statement and result relation (TriggerEnabled: stringToNode of the
-- stored condition, then expression_planner), and every logged row is the
-- statement of its own row trigger (a first poll: 37), so the condition's
-- tree of about twenty nodes was read from its text and planned again for
-- every row: 3.3 % of PostgreSQL's CPU in BenchmarkPollThroughput's first
-- polls (stringToNode under ExecARInsertTriggers; docs/tracking.md,
-- "Where a first poll's PostgreSQL CPU goes at stop 46").
--
-- Now the two functions that log (shipgraph_notify_change and
-- shipgraph_log_transport_event) compute the same CASE in their INSERT's
-- VALUES, whose plan PL/pgSQL keeps for the backend's life, into a new
-- column queued (true: this row marked its account pending; false: it was
-- pending already), and the trigger's WHEN is NEW.queued IS NOT FALSE. The
-- column's default is true: any other writer of change_log queues the
-- numbering for each of its rows, which numbers them as before (the
-- account's first queued firing numbers every unnumbered row from its
-- own id on, the later ones find none). The marking happens as the row is
-- inserted, as the WHEN's did: a savepoint rolled back takes the row, its
-- queued firing and its change of the setting with it, and a row after a
-- SET CONSTRAINTS … IMMEDIATE marks the account again.

-- +goose Up
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

ALTER TABLE change_log ADD COLUMN queued boolean DEFAULT true;

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
    -- queued: the account's first row since it was last numbered marks it
    -- pending and queues the numbering (the trigger's WHEN reads it).
    INSERT INTO change_log (account_id, record_type, record_id, op, parent_id, changed, old, new, queued)
    VALUES (account, TG_ARGV[0], r.id, TG_OP, parent, cols, oldv, newv,
            CASE WHEN strpos(coalesce(current_setting('shipgraph.log_pending', true), ''), account::text) > 0 THEN false
                 ELSE set_config('shipgraph.log_pending',
                                 coalesce(current_setting('shipgraph.log_pending', true), '') || account::text || ' ',
                                 true) IS NOT NULL END);
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
    INSERT INTO change_log (account_id, record_type, record_id, op, parent_id, changed, old, new, queued)
    VALUES (NEW.account_id, 'transport_event', NEW.id, 'INSERT', NEW.container_id, NULL, NULL,
            jsonb_build_object('event', NEW.event, 'event_at', NEW.event_at, 'timezone', NEW.timezone,
                               'location_locode', NEW.location_locode, 'voyage_number', NEW.voyage_number,
                               'data_source', NEW.data_source, 'created_at', NEW.created_at,
                               'shipment_id', NEW.shipment_id),
            CASE WHEN strpos(coalesce(current_setting('shipgraph.log_pending', true), ''), NEW.account_id::text) > 0 THEN false
                 ELSE set_config('shipgraph.log_pending',
                                 coalesce(current_setting('shipgraph.log_pending', true), '') || NEW.account_id::text || ' ',
                                 true) IS NOT NULL END);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP TRIGGER change_log_head ON change_log;
CREATE CONSTRAINT TRIGGER change_log_head AFTER INSERT ON change_log
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (NEW.queued IS NOT FALSE)
    EXECUTE FUNCTION shipgraph_change_log_head();

-- +goose Down
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

DROP TRIGGER change_log_head ON change_log;
CREATE CONSTRAINT TRIGGER change_log_head AFTER INSERT ON change_log
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (CASE WHEN strpos(coalesce(current_setting('shipgraph.log_pending', true), ''), NEW.account_id::text) > 0 THEN false
               ELSE set_config('shipgraph.log_pending',
                               coalesce(current_setting('shipgraph.log_pending', true), '') || NEW.account_id::text || ' ',
                               true) IS NOT NULL END)
    EXECUTE FUNCTION shipgraph_change_log_head();

-- 00066's and 00062's.
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
    RETURN NULL;
END
$$;
-- +goose StatementEnd

ALTER TABLE change_log DROP COLUMN queued;
