-- Triggers that never start a distributed query on a Citus cluster.
--
-- On Citus a trigger fires on the shard that holds the row, on a worker.
-- A statement it runs against another distributed table is planned by
-- Citus again there: a statement routed to the row's own account runs on
-- the colocated shard on the same node (a local task, which Citus allows
-- in a trigger), but one that touches several shards (no account_id
-- filter, or one taken from a join) is a nested distributed query, refused
-- unless citus.allow_nested_distributed_execution, and with it a worker
-- crashed at COMMIT PREPARED. So:
--
-- - the row triggers' statements each filter on one account given as a
--   value and write one row at a time (container_stats_row looked its
--   shipments up through a join on an array of rows, the rollups' upserts
--   were INSERT … SELECT from an array);
-- - the triggers that touch every account (TRUNCATE, a user's rename on the
--   reference table users, a port's zone or a terminal's port changed:
--   reference tables fire their triggers on every node's copy) name the
--   tables they touch through shipgraph_shard_group() and
--   shipgraph_local_shard_groups() and run their statements with EXECUTE.
--   On plain PostgreSQL these return the table names themselves (one
--   group: the whole table); db.Distribute replaces them on a Citus
--   cluster by versions that return the colocated shards (and the local
--   copy of a reference table) of the node they run on, so each node
--   rewrites only its own shards, and the coordinator (no shards) nothing.
--
-- The hot row triggers stay static SQL (no EXECUTE on plain PostgreSQL).

-- +goose Up
-- The relations that hold tables (a list of names) for the shard group of
-- tg_table, the table a trigger fired on: on plain PostgreSQL the tables
-- themselves (db/citus.go has Citus's).
-- +goose StatementBegin
CREATE FUNCTION shipgraph_shard_group(tg_table text, tables text[]) RETURNS text[] LANGUAGE sql STABLE AS $$
    SELECT tables
$$;
-- +goose StatementEnd

-- The relations that hold tables for each shard group on this node: on
-- plain PostgreSQL one row, the tables themselves.
-- +goose StatementBegin
CREATE FUNCTION shipgraph_local_shard_groups(tables text[]) RETURNS SETOF text[] LANGUAGE sql STABLE AS $$
    SELECT tables
$$;
-- +goose StatementEnd

-- 00024's, with each shipment looked up by its own account (a value).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION container_stats_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    src container_stat_src[];
    x container_stat_src;
    one container_stat_delta;
    ds container_stat_delta[];
BEGIN
    IF counters_off() THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        src := src || ROW(OLD.account_id, OLD.current_status, OLD.pod_terminal_id, OLD.shipment_id, OLD.pickup_lfd, -1)::container_stat_src;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        src := src || ROW(NEW.account_id, NEW.current_status, NEW.pod_terminal_id, NEW.shipment_id, NEW.pickup_lfd, 1)::container_stat_src;
    END IF;
    -- The shipment as it is now first, then the one it left (as 00024).
    IF TG_OP = 'DELETE' THEN
        PERFORM 1 FROM shipments s WHERE s.account_id = OLD.account_id AND s.id = OLD.shipment_id FOR SHARE;
    ELSE
        PERFORM 1 FROM shipments s WHERE s.account_id = NEW.account_id AND s.id = NEW.shipment_id FOR SHARE;
    END IF;
    IF TG_OP = 'UPDATE' AND (OLD.account_id, OLD.shipment_id) IS DISTINCT FROM (NEW.account_id, NEW.shipment_id) THEN
        PERFORM 1 FROM shipments s WHERE s.account_id = OLD.account_id AND s.id = OLD.shipment_id FOR SHARE;
    END IF;
    FOREACH x IN ARRAY src LOOP
        SELECT x.account_id, x.current_status, coalesce(x.pod_terminal_id, '00000000-0000-0000-0000-000000000000'),
                s.shipping_line_scac, coalesce(s.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'),
                stats_week(s.pod_eta_at, pz.time_zone), stats_day(x.pickup_lfd, tp.time_zone), x.d
        INTO one
        FROM shipments s
        LEFT JOIN ports pz ON pz.id = s.port_of_discharge_id
        LEFT JOIN terminals t ON t.id = x.pod_terminal_id LEFT JOIN ports tp ON tp.id = t.port_id
        WHERE s.account_id = x.account_id AND s.id = x.shipment_id;
        IF FOUND THEN
            ds := ds || one;
        END IF;
    END LOOP;
    PERFORM container_stats_put(ds);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- 00024's, one row at a time: an INSERT … SELECT into a distributed table
-- is Citus's insert-select through the coordinator (a COPY), which fails in
-- a trigger on a shard; a single-row upsert is routed to the colocated
-- shard.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION container_stats_put(ds container_stat_delta[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    s smallint := counter_slot();
    k record;
    v bigint;
BEGIN
    IF ds IS NULL THEN
        RETURN;
    END IF;
    FOR k IN SELECT account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, sum(d)::bigint AS d
            FROM unnest(ds) GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4, 5, 6 LOOP
        INSERT INTO container_stats AS t (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot, n)
        VALUES (k.account_id, k.status, k.pod_terminal_id, k.shipping_line_scac, k.port_of_discharge_id, k.eta_week, s, k.d)
        ON CONFLICT (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot)
        DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.n INTO v;
        IF v = 0 THEN
            DELETE FROM container_stats t
            WHERE t.account_id = k.account_id AND t.status = k.status AND t.pod_terminal_id = k.pod_terminal_id
              AND t.shipping_line_scac = k.shipping_line_scac AND t.port_of_discharge_id = k.port_of_discharge_id
              AND t.eta_week = k.eta_week AND t.slot = s AND t.n = 0;
        END IF;
    END LOOP;

    FOR k IN SELECT account_id, status, pod_terminal_id, lfd_date, sum(d)::bigint AS d
            FROM unnest(ds) GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4 LOOP
        INSERT INTO container_lfd_stats AS t (account_id, status, pod_terminal_id, lfd_date, slot, n)
        VALUES (k.account_id, k.status, k.pod_terminal_id, k.lfd_date, s, k.d)
        ON CONFLICT (account_id, status, pod_terminal_id, lfd_date, slot) DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.n INTO v;
        IF v = 0 THEN
            DELETE FROM container_lfd_stats t
            WHERE t.account_id = k.account_id AND t.status = k.status AND t.pod_terminal_id = k.pod_terminal_id
              AND t.lfd_date = k.lfd_date AND t.slot = s AND t.n = 0;
        END IF;
    END LOOP;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipment_stats_put(ds shipment_stat_delta[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    s smallint := counter_slot();
    k record;
    v bigint;
BEGIN
    IF ds IS NULL THEN
        RETURN;
    END IF;
    FOR k IN SELECT account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, sum(d)::bigint AS d
            FROM unnest(ds) GROUP BY 1, 2, 3, 4, 5 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4, 5 LOOP
        INSERT INTO shipment_stats AS t (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot, n)
        VALUES (k.account_id, k.pod_terminal_id, k.shipping_line_scac, k.port_of_discharge_id, k.eta_week, s, k.d)
        ON CONFLICT (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot)
        DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.n INTO v;
        IF v = 0 THEN
            DELETE FROM shipment_stats t
            WHERE t.account_id = k.account_id AND t.pod_terminal_id = k.pod_terminal_id
              AND t.shipping_line_scac = k.shipping_line_scac AND t.port_of_discharge_id = k.port_of_discharge_id
              AND t.eta_week = k.eta_week AND t.slot = s AND t.n = 0;
        END IF;
    END LOOP;
END $$;
-- +goose StatementEnd

-- A table's TRUNCATE empties its counters.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION list_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r text[] := shipgraph_shard_group(TG_TABLE_NAME, ARRAY['list_counts']);
BEGIN
    EXECUTE format('DELETE FROM %s WHERE list = $1', r[1]) USING TG_ARGV[0];
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION container_stats_trunc() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r text[] := shipgraph_shard_group(TG_TABLE_NAME, ARRAY['container_stats', 'container_lfd_stats']);
BEGIN
    EXECUTE format('DELETE FROM %s', r[1]);
    EXECUTE format('DELETE FROM %s', r[2]);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipment_stats_trunc() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r text[] := shipgraph_shard_group(TG_TABLE_NAME, ARRAY['container_stats', 'container_lfd_stats', 'shipment_stats']);
BEGIN
    EXECUTE format('DELETE FROM %s', r[1]);
    EXECUTE format('DELETE FROM %s', r[2]);
    EXECUTE format('DELETE FROM %s', r[3]);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- A user's new name on their documents: users is a reference table (a
-- copy on every node), so on Citus this runs on every node, each on its
-- own shards of documents.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION users_rename_documents() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r text[];
BEGIN
    FOR r IN SELECT * FROM shipgraph_local_shard_groups(ARRAY['documents']) LOOP
        EXECUTE format('UPDATE %s SET added_by_name = $1 WHERE account_id = $2 AND user_id = $3', r[1])
        USING btrim(NEW.first_name || ' ' || NEW.last_name), NEW.account_id, NEW.id;
    END LOOP;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- 00021's recount of the rollups of terminals ts and ports ps (reference
-- data changed), per shard group on this node.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION stats_recount(ts uuid[], ps uuid[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    r text[];
BEGIN
    FOR r IN SELECT * FROM shipgraph_local_shard_groups(ARRAY['shipments', 'containers', 'container_lfd_stats',
            'container_stats', 'shipment_stats', 'terminals', 'ports']) LOOP
        EXECUTE format('LOCK TABLE %s, %s IN SHARE MODE', r[1], r[2]);
        EXECUTE format('DELETE FROM %s WHERE pod_terminal_id = ANY($1)', r[3]) USING ts;
        EXECUTE format($q$
            INSERT INTO %s (account_id, status, pod_terminal_id, lfd_date, n)
            SELECT c.account_id, c.current_status, c.pod_terminal_id, stats_day(c.pickup_lfd, tp.time_zone), count(*)
            FROM %s c JOIN %s t ON t.id = c.pod_terminal_id JOIN %s tp ON tp.id = t.port_id
            WHERE c.pod_terminal_id = ANY($1) GROUP BY 1, 2, 3, 4$q$, r[3], r[2], r[6], r[7]) USING ts;

        EXECUTE format('DELETE FROM %s WHERE port_of_discharge_id = ANY($1)', r[4]) USING ps;
        EXECUTE format($q$
            INSERT INTO %s (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, n)
            SELECT c.account_id, c.current_status, coalesce(c.pod_terminal_id, '00000000-0000-0000-0000-000000000000'),
                s.shipping_line_scac, s.port_of_discharge_id, stats_week(s.pod_eta_at, pz.time_zone), count(*)
            FROM %s c JOIN %s s ON s.account_id = c.account_id AND s.id = c.shipment_id
            JOIN %s pz ON pz.id = s.port_of_discharge_id
            WHERE s.port_of_discharge_id = ANY($1) GROUP BY 1, 2, 3, 4, 5, 6$q$, r[4], r[2], r[1], r[7]) USING ps;

        EXECUTE format('DELETE FROM %s WHERE port_of_discharge_id = ANY($1)', r[5]) USING ps;
        EXECUTE format($q$
            INSERT INTO %s (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, n)
            SELECT s.account_id, coalesce(s.pod_terminal_id, '00000000-0000-0000-0000-000000000000'), s.shipping_line_scac,
                s.port_of_discharge_id, stats_week(s.pod_eta_at, pz.time_zone), count(*)
            FROM %s s JOIN %s pz ON pz.id = s.port_of_discharge_id
            WHERE s.port_of_discharge_id = ANY($1) GROUP BY 1, 2, 3, 4, 5$q$, r[5], r[1], r[7]) USING ps;
    END LOOP;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION stats_recount(ts uuid[], ps uuid[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    LOCK TABLE shipments, containers IN SHARE MODE;
    DELETE FROM container_lfd_stats WHERE pod_terminal_id = ANY(ts);
    INSERT INTO container_lfd_stats (account_id, status, pod_terminal_id, lfd_date, n)
    SELECT c.account_id, c.current_status, c.pod_terminal_id, stats_day(c.pickup_lfd, tp.time_zone), count(*)
    FROM containers c JOIN terminals t ON t.id = c.pod_terminal_id JOIN ports tp ON tp.id = t.port_id
    WHERE c.pod_terminal_id = ANY(ts) GROUP BY 1, 2, 3, 4;

    DELETE FROM container_stats WHERE port_of_discharge_id = ANY(ps);
    INSERT INTO container_stats (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, n)
    SELECT c.account_id, c.current_status, coalesce(c.pod_terminal_id, '00000000-0000-0000-0000-000000000000'),
        s.shipping_line_scac, s.port_of_discharge_id, stats_week(s.pod_eta_at, pz.time_zone), count(*)
    FROM containers c JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id
    JOIN ports pz ON pz.id = s.port_of_discharge_id
    WHERE s.port_of_discharge_id = ANY(ps) GROUP BY 1, 2, 3, 4, 5, 6;

    DELETE FROM shipment_stats WHERE port_of_discharge_id = ANY(ps);
    INSERT INTO shipment_stats (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, n)
    SELECT s.account_id, coalesce(s.pod_terminal_id, '00000000-0000-0000-0000-000000000000'), s.shipping_line_scac,
        s.port_of_discharge_id, stats_week(s.pod_eta_at, pz.time_zone), count(*)
    FROM shipments s JOIN ports pz ON pz.id = s.port_of_discharge_id
    WHERE s.port_of_discharge_id = ANY(ps) GROUP BY 1, 2, 3, 4, 5;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION users_rename_documents() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE documents SET added_by_name = btrim(NEW.first_name || ' ' || NEW.last_name)
    WHERE account_id = NEW.account_id AND user_id = NEW.id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipment_stats_trunc() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM container_stats;
    DELETE FROM container_lfd_stats;
    DELETE FROM shipment_stats;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION container_stats_trunc() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM container_stats;
    DELETE FROM container_lfd_stats;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION list_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM list_counts WHERE list = TG_ARGV[0];
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION container_stats_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    src container_stat_src[];
    ds container_stat_delta[];
    acct uuid;
    ship uuid;
BEGIN
    IF counters_off() THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        src := src || ROW(OLD.account_id, OLD.current_status, OLD.pod_terminal_id, OLD.shipment_id, OLD.pickup_lfd, -1)::container_stat_src;
        acct := OLD.account_id;
        ship := OLD.shipment_id;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        src := src || ROW(NEW.account_id, NEW.current_status, NEW.pod_terminal_id, NEW.shipment_id, NEW.pickup_lfd, 1)::container_stat_src;
        acct := NEW.account_id;
        ship := NEW.shipment_id;
    END IF;
    PERFORM 1 FROM shipments s WHERE s.account_id = acct AND s.id = ship FOR SHARE;
    IF TG_OP = 'UPDATE' AND (OLD.account_id, OLD.shipment_id) IS DISTINCT FROM (NEW.account_id, NEW.shipment_id) THEN
        PERFORM 1 FROM shipments s WHERE s.account_id = OLD.account_id AND s.id = OLD.shipment_id FOR SHARE;
    END IF;
    SELECT array_agg(ROW(k.account_id, k.status, k.pod_terminal_id, k.shipping_line_scac, k.port_of_discharge_id,
        k.eta_week, k.lfd_date, k.d)::container_stat_delta) INTO ds
    FROM (SELECT x.account_id, x.current_status AS status,
            coalesce(x.pod_terminal_id, '00000000-0000-0000-0000-000000000000') AS pod_terminal_id, s.shipping_line_scac,
            coalesce(s.port_of_discharge_id, '00000000-0000-0000-0000-000000000000') AS port_of_discharge_id,
            stats_week(s.pod_eta_at, pz.time_zone) AS eta_week, stats_day(x.pickup_lfd, tp.time_zone) AS lfd_date, sum(x.d) AS d
        FROM unnest(src) x JOIN shipments s ON s.account_id = x.account_id AND s.id = x.shipment_id
        LEFT JOIN ports pz ON pz.id = s.port_of_discharge_id
        LEFT JOIN terminals t ON t.id = x.pod_terminal_id LEFT JOIN ports tp ON tp.id = t.port_id
        GROUP BY 1, 2, 3, 4, 5, 6, 7) k;
    PERFORM container_stats_put(ds);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION container_stats_put(ds container_stat_delta[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    s smallint := counter_slot();
    zero boolean;
BEGIN
    IF ds IS NULL THEN
        RETURN;
    END IF;
    WITH up AS (
        INSERT INTO container_stats AS t (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot, n)
        SELECT account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, s, sum(d)
        FROM unnest(ds) GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4, 5, 6
        ON CONFLICT (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot)
        DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.n)
    SELECT bool_or(n = 0) INTO zero FROM up;
    IF zero THEN
        DELETE FROM container_stats t USING unnest(ds) x
        WHERE t.n = 0 AND t.slot = s AND t.account_id = x.account_id AND t.status = x.status AND t.pod_terminal_id = x.pod_terminal_id
          AND t.shipping_line_scac = x.shipping_line_scac AND t.port_of_discharge_id = x.port_of_discharge_id AND t.eta_week = x.eta_week;
    END IF;

    WITH up AS (
        INSERT INTO container_lfd_stats AS t (account_id, status, pod_terminal_id, lfd_date, slot, n)
        SELECT account_id, status, pod_terminal_id, lfd_date, s, sum(d)
        FROM unnest(ds) GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4
        ON CONFLICT (account_id, status, pod_terminal_id, lfd_date, slot) DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.n)
    SELECT bool_or(n = 0) INTO zero FROM up;
    IF zero THEN
        DELETE FROM container_lfd_stats t USING unnest(ds) x
        WHERE t.n = 0 AND t.slot = s AND t.account_id = x.account_id AND t.status = x.status AND t.pod_terminal_id = x.pod_terminal_id
          AND t.lfd_date = x.lfd_date;
    END IF;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipment_stats_put(ds shipment_stat_delta[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    s smallint := counter_slot();
    zero boolean;
BEGIN
    IF ds IS NULL THEN
        RETURN;
    END IF;
    WITH up AS (
        INSERT INTO shipment_stats AS t (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot, n)
        SELECT account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, s, sum(d)
        FROM unnest(ds) GROUP BY 1, 2, 3, 4, 5 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot)
        DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.n)
    SELECT bool_or(n = 0) INTO zero FROM up;
    IF zero THEN
        DELETE FROM shipment_stats t USING unnest(ds) x
        WHERE t.n = 0 AND t.slot = s AND t.account_id = x.account_id AND t.pod_terminal_id = x.pod_terminal_id
          AND t.shipping_line_scac = x.shipping_line_scac AND t.port_of_discharge_id = x.port_of_discharge_id AND t.eta_week = x.eta_week;
    END IF;
END $$;
-- +goose StatementEnd

DROP FUNCTION shipgraph_local_shard_groups(text[]);
DROP FUNCTION shipgraph_shard_group(text, text[]);
