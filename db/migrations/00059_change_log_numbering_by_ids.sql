-- The numbering at commit (00056) reads and writes the transaction's rows
-- by their ids only, whatever plan the server chose for it.
--
-- 00056's statement joined the transaction's unnumbered rows (u) back to
-- change_log on (account_id, id). The trigger's statements run under a
-- generic plan (the tracking transaction sets plan_cache_mode to
-- force_generic_plan, and PostgreSQL settles on one after five runs
-- anyway), kept by the backend for as long as the table's statistics do
-- not change. Made over a table without statistics (a new database,
-- before autovacuum first analyzes it: a minute at most with the default
-- naptime, the whole of a benchmark), that plan scanned every row of the
-- account for each row to number (a nested loop over a bitmap scan of
-- account_id = $1): one account's commits cost O(its log) each and grew
-- through a run (BenchmarkPollThroughput/one-account, 300 first polls:
-- 4.8–9.3 s in that statement against 1.2 s for 300 accounts' same rows).
--
-- Now the ids are collected once, in order (the unique (account_id, pos)
-- index's range of NULLs: the transaction's own rows; other transactions'
-- are numbered before they commit), and the update takes those rows alone
-- without a join (pos IS NULL and id between the first and the last id:
-- either index the planner may choose, (account_id, pos) or the primary
-- key (account_id, id), is bounded by the transaction's rows) and gives
-- each its rank among them by binary search (width_bucket over the sorted
-- ids).
-- The count(*) before it is gone (the array's length). The per-row
-- shipgraph_change_log_pos sets its setting once per account and
-- transaction instead of once per row.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_pos(account uuid) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    key text := 'shipgraph.log_pos_' || replace(account::text, '-', '');
BEGIN
    -- The account's rows wait for the deferred trigger's numbering.
    IF current_setting(key, true) IS DISTINCT FROM 'pending' THEN
        PERFORM set_config(key, 'pending', true);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_head() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    key  text := 'shipgraph.log_pos_' || replace(NEW.account_id::text, '-', '');
    ids  bigint[];
    n    bigint;
    head bigint;
BEGIN
    IF current_setting(key, true) IS DISTINCT FROM 'pending' THEN
        RETURN NULL;
    END IF;
    PERFORM set_config(key, '', true);
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

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_pos(account uuid) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    -- The account's rows wait for the deferred trigger's numbering.
    PERFORM set_config('shipgraph.log_pos_' || replace(account::text, '-', ''), 'pending', true);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_head() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    key  text := 'shipgraph.log_pos_' || replace(NEW.account_id::text, '-', '');
    n    bigint;
    head bigint;
BEGIN
    IF current_setting(key, true) IS DISTINCT FROM 'pending' THEN
        RETURN NULL;
    END IF;
    PERFORM set_config(key, '', true);
    SELECT count(*) INTO n FROM change_log WHERE account_id = NEW.account_id AND pos IS NULL;
    IF n = 0 THEN
        RETURN NULL;
    END IF;
    INSERT INTO change_log_heads AS h (account_id, pos) VALUES (NEW.account_id, n)
    ON CONFLICT (account_id) DO UPDATE SET pos = h.pos + EXCLUDED.pos
    RETURNING h.pos INTO head;
    UPDATE change_log l SET pos = head - n + u.rn
    FROM (SELECT c.id, row_number() OVER (ORDER BY c.id) AS rn FROM change_log c
          WHERE c.account_id = NEW.account_id AND c.pos IS NULL) u
    WHERE l.account_id = NEW.account_id AND l.id = u.id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
