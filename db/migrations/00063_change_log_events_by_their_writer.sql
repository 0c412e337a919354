-- A tracking poll's statement (db.ApplyPolls) writes its transport events'
-- change-log rows itself, and the numbering at commit puts a statement's
-- transport event rows after its other rows, where the row triggers put
-- them.
--
-- shipgraph_log_transport_event, the row trigger of transport_events'
-- inserts, made a PL/pgSQL call with its own INSERT for each event: 32 of a
-- first poll's 37 logged rows, the largest of the triggers (13.7 % of the
-- statements' time in BenchmarkPollThroughput's first polls,
-- docs/tracking.md). ApplyPolls now inserts those rows in one INSERT …
-- SELECT of its statement, from its transport events' insert (same columns,
-- same new JSON), and tells the trigger so: its events' insert sets
-- shipgraph.events_logged to the statement's start (statement_timestamp(),
-- the same for every part of one statement a client sent, different for
-- the next), and the trigger's WHEN skips a row inserted while the setting
-- names the running statement. The condition is evaluated by the executor,
-- without a PL/pgSQL call. Any other writer of transport_events (and a
-- later statement of the same transaction) is logged by the trigger as
-- before. The trigger's WHEN also skips the call when the log is off
-- (shipgraph.notify, the seeder's), which the function checked inside.
--
-- Order. After-row triggers fire at the end of their statement, so a
-- poll's shipment, container and request rows were logged after the
-- statement had run, the transport events' last (their insert is the last
-- of the statement's writes): container.created before the container's
-- container.transport.* notifications, tracking_request.succeeded before
-- both … and all of them before the rows of the transaction's later
-- statements (the moved shipments' milestones, the stop rules'
-- tracking_stopped, a second round's rows). Rows written by the statement
-- itself are inserted while it runs, before its triggers' rows, and get
-- lower ids. So the numbering at commit no longer follows the ids alone:
-- it orders the transaction's rows of the account by statement, in a
-- statement the transport event INSERTs after the others, and by id. The
-- statements are told apart where it matters: the change-log trigger's WHEN
-- notes the statement that logged a transport event INSERT
-- (shipgraph.log_ev_stmt, its start) and, at the first row a later
-- statement logs, the row's id as the start of a new group
-- (shipgraph.log_stmts, a list of ids). A transaction that logs no
-- transport event INSERT sets neither. Both are transaction-local settings
-- (a savepoint rolled back restores them with its rows).

-- +goose Up
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_head() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    starts bigint[] := string_to_array(btrim(coalesce(current_setting('shipgraph.log_stmts', true), '')), ' ')::bigint[];
    ids    bigint[];
    ranks  bigint[];
    n      bigint;
    head   bigint;
BEGIN
    -- Queued by the account's first row since it was last numbered (the
    -- trigger's WHEN); a row logged after this marks it again.
    PERFORM set_config('shipgraph.log_pending',
                       replace(current_setting('shipgraph.log_pending', true), NEW.account_id::text || ' ', ''), true);
    -- The rows in id order (ids) and each one's rank (ranks): by group of
    -- statements (width_bucket(id, starts): how many starts are <= id),
    -- the transport event INSERTs last in a group, then by id.
    SELECT array_agg(x.id ORDER BY x.id), array_agg(x.rk ORDER BY x.id) INTO ids, ranks
    FROM (SELECT c.id, row_number() OVER (ORDER BY width_bucket(c.id, starts),
                                                   c.record_type = 'transport_event' AND c.op = 'INSERT', c.id) AS rk
          FROM change_log c WHERE c.account_id = NEW.account_id AND c.pos IS NULL) x;
    n := coalesce(cardinality(ids), 0);
    IF n = 0 THEN
        RETURN NULL;
    END IF;
    INSERT INTO change_log_heads AS h (account_id, pos) VALUES (NEW.account_id, n)
    ON CONFLICT (account_id) DO UPDATE SET pos = h.pos + EXCLUDED.pos
    RETURNING h.pos INTO head;
    -- width_bucket(id, ids): the row's place in id order (1 … n).
    UPDATE change_log l SET pos = head - n + ranks[width_bucket(l.id, ids)]
    WHERE l.account_id = NEW.account_id AND l.pos IS NULL AND l.id BETWEEN ids[1] AND ids[n];
    RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP TRIGGER change_log_head ON change_log;
-- The condition is false unless the account is not pending yet (00062);
-- its first part notes the statements (see above) and is always false.
CREATE CONSTRAINT TRIGGER change_log_head AFTER INSERT ON change_log
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN ((CASE WHEN coalesce(current_setting('shipgraph.log_ev_stmt', true), '') NOT IN ('', statement_timestamp()::text)
                THEN set_config('shipgraph.log_stmts', coalesce(current_setting('shipgraph.log_stmts', true), '') || ' ' || NEW.id, true) IS NULL
                     OR set_config('shipgraph.log_ev_stmt',
                                   CASE WHEN NEW.record_type = 'transport_event' AND NEW.op = 'INSERT'
                                        THEN statement_timestamp()::text ELSE '' END, true) IS NULL
                WHEN NEW.record_type = 'transport_event' AND NEW.op = 'INSERT'
                     AND current_setting('shipgraph.log_ev_stmt', true) IS DISTINCT FROM statement_timestamp()::text
                THEN set_config('shipgraph.log_ev_stmt', statement_timestamp()::text, true) IS NULL
                ELSE false END)
          OR (CASE WHEN strpos(coalesce(current_setting('shipgraph.log_pending', true), ''), NEW.account_id::text) > 0 THEN false
                   ELSE set_config('shipgraph.log_pending',
                                   coalesce(current_setting('shipgraph.log_pending', true), '') || NEW.account_id::text || ' ',
                                   true) IS NOT NULL END))
    EXECUTE FUNCTION shipgraph_change_log_head();

DROP TRIGGER transport_events_log_insert ON transport_events;
CREATE TRIGGER transport_events_log_insert AFTER INSERT ON transport_events
    FOR EACH ROW
    WHEN (current_setting('shipgraph.notify', true) IS DISTINCT FROM 'off'
          AND current_setting('shipgraph.events_logged', true) IS DISTINCT FROM statement_timestamp()::text)
    EXECUTE FUNCTION shipgraph_log_transport_event();

-- +goose Down
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

DROP TRIGGER transport_events_log_insert ON transport_events;
CREATE TRIGGER transport_events_log_insert AFTER INSERT ON transport_events
    FOR EACH ROW EXECUTE FUNCTION shipgraph_log_transport_event();

DROP TRIGGER change_log_head ON change_log;
CREATE CONSTRAINT TRIGGER change_log_head AFTER INSERT ON change_log
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (CASE WHEN strpos(coalesce(current_setting('shipgraph.log_pending', true), ''), NEW.account_id::text) > 0 THEN false
               ELSE set_config('shipgraph.log_pending',
                               coalesce(current_setting('shipgraph.log_pending', true), '') || NEW.account_id::text || ' ',
                               true) IS NOT NULL END)
    EXECUTE FUNCTION shipgraph_change_log_head();

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
