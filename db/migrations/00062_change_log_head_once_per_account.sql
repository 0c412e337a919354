-- The deferred numbering trigger fires once per account and transaction,
-- not once per logged row; the account is marked pending by the trigger's
-- WHEN condition instead of a PL/pgSQL call in each logged row's insert.
--
-- Since 00056 the constraint trigger change_log_head numbered a
-- transaction's rows of an account at commit, and it was queued for every
-- row logged: a first poll's 37 rows made 37 PL/pgSQL calls at commit, of
-- which the account's first did the work and the others read the pending
-- setting and returned (5.2 % of the triggers' time in
-- BenchmarkPollThroughput's first polls, docs/tracking.md). And each row's
-- insert marked its account pending first: shipgraph_change_log_pos (a
-- PL/pgSQL call nested in the generic log function's INSERT) or its inlined
-- copy in the transport events' log function.
--
-- Now the marking is the trigger's WHEN condition, evaluated by the
-- executor as each row is inserted (a constraint trigger's condition is
-- not deferred; a row whose condition is false queues nothing): it is
-- true, and adds the account to shipgraph.log_pending, only when the
-- account is not pending yet, so the trigger is queued once per account
-- and transaction. The trigger takes the account off the list when it
-- numbers its rows, so a row logged after a SET CONSTRAINTS … IMMEDIATE
-- marks it again and is numbered at commit, as before. A savepoint rolled
-- back takes its rows, its queued firing and its change of the setting
-- with it (the account's next row marks it again). Every insert into
-- change_log is numbered, whoever writes it: shipgraph_change_log_pos has
-- nothing left to do and is a SQL function giving NULL (inlined into the
-- statements that call it).

-- +goose Up
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_pos(account uuid) RETURNS bigint LANGUAGE sql AS $$
    SELECT NULL::bigint
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

DROP TRIGGER change_log_head ON change_log;
-- The condition: the account is pending already (false), else mark it
-- (set_config's value is never NULL: true). A CASE, so that the marking
-- runs only when the test before it failed.
CREATE CONSTRAINT TRIGGER change_log_head AFTER INSERT ON change_log
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (CASE WHEN strpos(coalesce(current_setting('shipgraph.log_pending', true), ''), NEW.account_id::text) > 0 THEN false
               ELSE set_config('shipgraph.log_pending',
                               coalesce(current_setting('shipgraph.log_pending', true), '') || NEW.account_id::text || ' ',
                               true) IS NOT NULL END)
    EXECUTE FUNCTION shipgraph_change_log_head();

-- +goose Down
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

DROP TRIGGER change_log_head ON change_log;
CREATE CONSTRAINT TRIGGER change_log_head AFTER INSERT ON change_log
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION shipgraph_change_log_head();

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_pos(account uuid) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    pending text := current_setting('shipgraph.log_pending', true);
BEGIN
    -- The account's rows wait for the deferred trigger's numbering.
    IF pending IS NULL OR strpos(pending, account::text) = 0 THEN
        PERFORM set_config('shipgraph.log_pending', coalesce(pending, '') || account::text || ' ', true);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_head() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    account text := NEW.account_id::text;
    pending text := current_setting('shipgraph.log_pending', true);
    ids  bigint[];
    n    bigint;
    head bigint;
BEGIN
    IF pending IS NULL OR strpos(pending, account) = 0 THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('shipgraph.log_pending', replace(pending, account || ' ', ''), true);
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

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_log_transport_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    pending text;
BEGIN
    IF current_setting('shipgraph.notify', true) = 'off' THEN
        RETURN NULL;
    END IF;
    -- shipgraph_change_log_pos inlined: one plpgsql call a transport event
    -- instead of two (the most logged rows of a poll).
    pending := current_setting('shipgraph.log_pending', true);
    IF pending IS NULL OR strpos(pending, NEW.account_id::text) = 0 THEN
        PERFORM set_config('shipgraph.log_pending', coalesce(pending, '') || NEW.account_id::text || ' ', true);
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
