-- The rollups' and list counters' row triggers on shipments and containers
-- do their work in fewer statements and PL/pgSQL calls (issue 37 point 1).
--
-- A first poll inserts a shipment and about two containers; each row fired
-- a list-counter trigger (list_counts_row: one upsert) and a rollup trigger
-- (container_stats_row: the shipment share-locked by one statement and read
-- with its ports by another, then container_stats_put: a grouping query of
-- its one delta and an upsert, for each of the two container rollups, six
-- statements and two calls; shipment_stats_row: its port's zone, then
-- container_stats_put of nothing and shipment_stats_put: a grouping query
-- and an upsert). A container's status change (a later poll) ran nine
-- statements. pg_stat_user_functions in BenchmarkPollThroughput: about 15 %
-- of the statements' time went to these triggers.
--
-- Now:
-- - one trigger a row for both: the rollup trigger on INSERT or DELETE
--   counts the row in or out of its list too (containers_count and
--   shipments_count are gone; the account-move triggers keep
--   list_counts_row, as do documents);
-- - a container's shipment is share-locked and read by a statement on
--   shipments alone, and its zones looked up only where they decide a date
--   (the port's for an ETA, the terminal's port's for an LFD: a NULL date
--   is 'infinity' in any zone); a statement's cost here is the relations it
--   opens (executor start-up, plan-cache locks: about 5 us each), and the
--   four-table lookup cost as much as the lock and three reads; an update
--   that keeps its shipment reads it once for both its old and new keys;
-- - the deltas are upserted directly (no grouping query, no put call): one
--   upsert a rollup for an insert or delete, none for a rollup whose key
--   an update kept, and the two of an update in key order (the order the
--   put functions took them in, so writers of one slot still lock rollup
--   rows in one order); a row that reaches zero is deleted as before;
-- - a shipment without a port of discharge or an ETA looks no zone up.
-- Exactly the same counts as before; still row triggers, each statement on
-- the row's own account (Citus: 00036). container_stats_put stays for the
-- shipment's moves and deletes (rare), shipment_stats_put for callers.

-- +goose Up
-- DDL on distributed tables runs on their shards in parallel; a function
-- command after it in the same transaction is refused (as 00054).
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION container_stats_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    z    CONSTANT uuid := '00000000-0000-0000-0000-000000000000';
    same boolean := TG_OP = 'UPDATE' AND OLD.account_id = NEW.account_id AND OLD.shipment_id = NEW.shipment_id;
    s    smallint;
    ho   boolean := false; -- o holds the row as it was counted (-1)
    hn   boolean := false; -- n holds the row as it counts now (+1)
    o    container_stat_delta;
    n    container_stat_delta;
    k    container_stat_delta;
    ks   container_stat_delta[];
    sc   text;
    pd   uuid;
    eta  timestamptz;
    tz   text;
    wk   date;
    ntz  text;
    otz  text;
    cnt  bigint;
BEGIN
    IF counters_off() THEN
        RETURN NULL;
    END IF;
    s := counter_slot();
    -- The account's list first (list_counts_row's work, for INSERT and
    -- DELETE): the rows in the order the two triggers took them, the
    -- list's slot row, then the shipment, then the rollups' rows.
    IF TG_OP = 'INSERT' THEN
        INSERT INTO list_counts AS c (account_id, list, slot, n) VALUES (NEW.account_id, 'containers', s, 1)
        ON CONFLICT (account_id, list, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO list_counts AS c (account_id, list, slot, n) VALUES (OLD.account_id, 'containers', s, -1)
        ON CONFLICT (account_id, list, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    -- The keys, from the shipment share-locked (a concurrent change of its
    -- line, port or ETA waits for this transaction, or this one reads its
    -- result): the shipment as it is now first, then the one it left (as
    -- 00024), read once when an update keeps it. A row whose shipment is
    -- gone (deleted in this transaction, its containers cascading) was
    -- subtracted by the shipment's delete. Each statement reads one table
    -- (a join's every relation costs its executor start-up in each call);
    -- a zone is looked up only where it decides a date: an ETA (a
    -- shipment's week) or an LFD (a container's day) that is not NULL
    -- ('infinity' in any zone).
    IF TG_OP <> 'DELETE' THEN
        SELECT sh.shipping_line_scac, sh.port_of_discharge_id, sh.pod_eta_at INTO sc, pd, eta
        FROM shipments sh WHERE sh.account_id = NEW.account_id AND sh.id = NEW.shipment_id FOR SHARE;
        hn := FOUND;
    END IF;
    IF TG_OP <> 'INSERT' AND NOT same THEN
        IF hn THEN
            -- The new shipment's week first (its values are overwritten).
            IF eta IS NOT NULL AND pd IS NOT NULL THEN
                SELECT p.time_zone INTO tz FROM ports p WHERE p.id = pd;
            END IF;
            n := ROW(NEW.account_id, NEW.current_status, coalesce(NEW.pod_terminal_id, z), sc, coalesce(pd, z), stats_week(eta, tz), NULL, 1);
            tz := NULL;
        END IF;
        SELECT sh.shipping_line_scac, sh.port_of_discharge_id, sh.pod_eta_at INTO sc, pd, eta
        FROM shipments sh WHERE sh.account_id = OLD.account_id AND sh.id = OLD.shipment_id FOR SHARE;
        ho := FOUND;
    ELSIF same THEN
        ho := hn;
    END IF;
    IF hn AND (same OR TG_OP = 'INSERT') OR ho AND NOT same THEN
        -- The week of the shipment read last (the only one, or the old one).
        IF eta IS NOT NULL AND pd IS NOT NULL THEN
            SELECT p.time_zone INTO tz FROM ports p WHERE p.id = pd;
        END IF;
        wk := stats_week(eta, tz);
    END IF;
    IF hn THEN
        IF NEW.pickup_lfd IS NOT NULL AND NEW.pod_terminal_id IS NOT NULL THEN
            SELECT p.time_zone INTO ntz FROM terminals t JOIN ports p ON p.id = t.port_id WHERE t.id = NEW.pod_terminal_id;
        END IF;
        IF same OR TG_OP = 'INSERT' THEN
            n := ROW(NEW.account_id, NEW.current_status, coalesce(NEW.pod_terminal_id, z), sc, coalesce(pd, z), wk,
                stats_day(NEW.pickup_lfd, ntz), 1);
        ELSE
            n.lfd_date := stats_day(NEW.pickup_lfd, ntz);
        END IF;
    END IF;
    IF ho THEN
        IF OLD.pickup_lfd IS NOT NULL AND OLD.pod_terminal_id IS NOT NULL THEN
            IF hn AND NEW.pickup_lfd IS NOT NULL AND NEW.pod_terminal_id = OLD.pod_terminal_id THEN
                otz := ntz;
            ELSE
                SELECT p.time_zone INTO otz FROM terminals t JOIN ports p ON p.id = t.port_id WHERE t.id = OLD.pod_terminal_id;
            END IF;
        END IF;
        o := ROW(OLD.account_id, OLD.current_status, coalesce(OLD.pod_terminal_id, z), sc, coalesce(pd, z), wk,
            stats_day(OLD.pickup_lfd, otz), -1);
    END IF;


    -- container_stats: nothing when the key stayed, else its rows in key order.
    IF ho AND hn THEN
        IF (o.account_id, o.status, o.pod_terminal_id, o.shipping_line_scac, o.port_of_discharge_id, o.eta_week)
                = (n.account_id, n.status, n.pod_terminal_id, n.shipping_line_scac, n.port_of_discharge_id, n.eta_week) THEN
            ks := '{}';
        ELSIF (o.account_id, o.status, o.pod_terminal_id, o.shipping_line_scac, o.port_of_discharge_id, o.eta_week)
                < (n.account_id, n.status, n.pod_terminal_id, n.shipping_line_scac, n.port_of_discharge_id, n.eta_week) THEN
            ks := ARRAY[o, n];
        ELSE
            ks := ARRAY[n, o];
        END IF;
    ELSIF ho THEN
        ks := ARRAY[o];
    ELSIF hn THEN
        ks := ARRAY[n];
    ELSE
        RETURN NULL;
    END IF;
    FOREACH k IN ARRAY ks LOOP
        INSERT INTO container_stats AS t (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot, n)
        VALUES (k.account_id, k.status, k.pod_terminal_id, k.shipping_line_scac, k.port_of_discharge_id, k.eta_week, s, k.d)
        ON CONFLICT (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot)
        DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.n INTO cnt;
        IF cnt = 0 THEN
            DELETE FROM container_stats t
            WHERE t.account_id = k.account_id AND t.status = k.status AND t.pod_terminal_id = k.pod_terminal_id
              AND t.shipping_line_scac = k.shipping_line_scac AND t.port_of_discharge_id = k.port_of_discharge_id
              AND t.eta_week = k.eta_week AND t.slot = s AND t.n = 0;
        END IF;
    END LOOP;

    -- container_lfd_stats, the same way.
    IF ho AND hn THEN
        IF (o.account_id, o.status, o.pod_terminal_id, o.lfd_date) = (n.account_id, n.status, n.pod_terminal_id, n.lfd_date) THEN
            ks := '{}';
        ELSIF (o.account_id, o.status, o.pod_terminal_id, o.lfd_date) < (n.account_id, n.status, n.pod_terminal_id, n.lfd_date) THEN
            ks := ARRAY[o, n];
        ELSE
            ks := ARRAY[n, o];
        END IF;
    END IF;
    FOREACH k IN ARRAY ks LOOP
        INSERT INTO container_lfd_stats AS t (account_id, status, pod_terminal_id, lfd_date, slot, n)
        VALUES (k.account_id, k.status, k.pod_terminal_id, k.lfd_date, s, k.d)
        ON CONFLICT (account_id, status, pod_terminal_id, lfd_date, slot) DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.n INTO cnt;
        IF cnt = 0 THEN
            DELETE FROM container_lfd_stats t
            WHERE t.account_id = k.account_id AND t.status = k.status AND t.pod_terminal_id = k.pod_terminal_id
              AND t.lfd_date = k.lfd_date AND t.slot = s AND t.n = 0;
        END IF;
    END LOOP;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipment_stats_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    z  CONSTANT uuid := '00000000-0000-0000-0000-000000000000';
    s  smallint;
    oz text;
    nz text;
    ow date;
    nw date;
    o  shipment_stat_delta;
    n  shipment_stat_delta;
    k  shipment_stat_delta;
    ks shipment_stat_delta[];
    cs container_stat_delta[];
    cnt bigint;
BEGIN
    IF counters_off() THEN
        RETURN NULL;
    END IF;
    s := counter_slot();
    -- The account's list (list_counts_row's work, for INSERT and DELETE).
    IF TG_OP = 'INSERT' THEN
        INSERT INTO list_counts AS c (account_id, list, slot, n) VALUES (NEW.account_id, 'shipments', s, 1)
        ON CONFLICT (account_id, list, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO list_counts AS c (account_id, list, slot, n) VALUES (OLD.account_id, 'shipments', s, -1)
        ON CONFLICT (account_id, list, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    -- The port of discharge's zone, looked up only where it decides the
    -- week (a port and an ETA: without an ETA the week is 'infinity' in
    -- any zone), once when an update keeps the port.
    IF TG_OP <> 'INSERT' THEN
        IF OLD.port_of_discharge_id IS NOT NULL AND OLD.pod_eta_at IS NOT NULL THEN
            SELECT p.time_zone INTO oz FROM ports p WHERE p.id = OLD.port_of_discharge_id;
        END IF;
        ow := stats_week(OLD.pod_eta_at, oz);
        o := ROW(OLD.account_id, coalesce(OLD.pod_terminal_id, z), OLD.shipping_line_scac, coalesce(OLD.port_of_discharge_id, z), ow, -1);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        IF TG_OP = 'UPDATE' AND NEW.port_of_discharge_id IS NOT DISTINCT FROM OLD.port_of_discharge_id AND OLD.pod_eta_at IS NOT NULL THEN
            nz := oz;
        ELSIF NEW.port_of_discharge_id IS NOT NULL AND NEW.pod_eta_at IS NOT NULL THEN
            SELECT p.time_zone INTO nz FROM ports p WHERE p.id = NEW.port_of_discharge_id;
        END IF;
        nw := stats_week(NEW.pod_eta_at, nz);
        n := ROW(NEW.account_id, coalesce(NEW.pod_terminal_id, z), NEW.shipping_line_scac, coalesce(NEW.port_of_discharge_id, z), nw, 1);
    END IF;
    IF TG_OP = 'UPDATE' AND (OLD.account_id, OLD.shipping_line_scac, OLD.port_of_discharge_id, ow)
            IS DISTINCT FROM (NEW.account_id, NEW.shipping_line_scac, NEW.port_of_discharge_id, nw) THEN
        -- Its containers, once as they were counted and once as they
        -- count now (the terminal is the container's own): 00024's.
        SELECT array_agg(ROW(b.account_id, b.status, b.pod_terminal_id, b.l, b.p, b.w, b.lfd_date, b.d)::container_stat_delta) INTO cs
        FROM (SELECT c.account_id, c.current_status AS status,
                coalesce(c.pod_terminal_id, '00000000-0000-0000-0000-000000000000') AS pod_terminal_id,
                stats_day(c.pickup_lfd, tp.time_zone) AS lfd_date, v.l, v.p, v.w, v.d
            FROM containers c LEFT JOIN terminals t ON t.id = c.pod_terminal_id LEFT JOIN ports tp ON tp.id = t.port_id
            CROSS JOIN (VALUES
                (OLD.shipping_line_scac, coalesce(OLD.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'::uuid), ow, -1),
                (NEW.shipping_line_scac, coalesce(NEW.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'::uuid), nw, 1))
                AS v(l, p, w, d)
            WHERE c.account_id = NEW.account_id AND c.shipment_id = NEW.id) b;
        -- A shipment moved to another account takes its containers' old
        -- counts from the old account.
        IF OLD.account_id IS DISTINCT FROM NEW.account_id THEN
            SELECT array_agg(CASE WHEN (x).d < 0 THEN ROW(OLD.account_id, (x).status, (x).pod_terminal_id, (x).shipping_line_scac,
                (x).port_of_discharge_id, (x).eta_week, (x).lfd_date, (x).d)::container_stat_delta ELSE x END) INTO cs
            FROM unnest(cs) AS x;
        END IF;
        IF cs IS NOT NULL THEN
            PERFORM container_stats_put(cs);
        END IF;
    END IF;
    -- shipment_stats: nothing when the key stayed, else its rows in key order.
    IF TG_OP = 'INSERT' THEN
        ks := ARRAY[n];
    ELSIF TG_OP = 'DELETE' THEN
        ks := ARRAY[o];
    ELSIF (o.account_id, o.pod_terminal_id, o.shipping_line_scac, o.port_of_discharge_id, o.eta_week)
            IS NOT DISTINCT FROM (n.account_id, n.pod_terminal_id, n.shipping_line_scac, n.port_of_discharge_id, n.eta_week) THEN
        RETURN NULL;
    ELSIF (o.account_id, o.pod_terminal_id, o.shipping_line_scac, o.port_of_discharge_id, o.eta_week)
            < (n.account_id, n.pod_terminal_id, n.shipping_line_scac, n.port_of_discharge_id, n.eta_week) THEN
        ks := ARRAY[o, n];
    ELSE
        ks := ARRAY[n, o];
    END IF;
    FOREACH k IN ARRAY ks LOOP
        INSERT INTO shipment_stats AS t (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot, n)
        VALUES (k.account_id, k.pod_terminal_id, k.shipping_line_scac, k.port_of_discharge_id, k.eta_week, s, k.d)
        ON CONFLICT (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot)
        DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.n INTO cnt;
        IF cnt = 0 THEN
            DELETE FROM shipment_stats t
            WHERE t.account_id = k.account_id AND t.pod_terminal_id = k.pod_terminal_id
              AND t.shipping_line_scac = k.shipping_line_scac AND t.port_of_discharge_id = k.port_of_discharge_id
              AND t.eta_week = k.eta_week AND t.slot = s AND t.n = 0;
        END IF;
    END LOOP;
    RETURN NULL;
END $$;
-- +goose StatementEnd

DROP TRIGGER containers_count ON containers;
DROP TRIGGER shipments_count ON shipments;

-- +goose Down
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- 00056's.
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

-- 00024's.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipment_stats_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ss shipment_stat_delta[];
    cs container_stat_delta[];
    ow date;
    nw date;
BEGIN
    IF counters_off() THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        ow := stats_week(OLD.pod_eta_at, (SELECT time_zone FROM ports WHERE id = OLD.port_of_discharge_id));
        ss := ss || ROW(OLD.account_id, coalesce(OLD.pod_terminal_id, '00000000-0000-0000-0000-000000000000'), OLD.shipping_line_scac,
            coalesce(OLD.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'), ow, -1)::shipment_stat_delta;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        nw := stats_week(NEW.pod_eta_at, (SELECT time_zone FROM ports WHERE id = NEW.port_of_discharge_id));
        ss := ss || ROW(NEW.account_id, coalesce(NEW.pod_terminal_id, '00000000-0000-0000-0000-000000000000'), NEW.shipping_line_scac,
            coalesce(NEW.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'), nw, 1)::shipment_stat_delta;
    END IF;
    IF TG_OP = 'UPDATE' AND (OLD.account_id, OLD.shipping_line_scac, OLD.port_of_discharge_id, ow)
            IS DISTINCT FROM (NEW.account_id, NEW.shipping_line_scac, NEW.port_of_discharge_id, nw) THEN
        -- Its containers, once as they were counted and once as they
        -- count now (the terminal is the container's own).
        SELECT array_agg(ROW(b.account_id, b.status, b.pod_terminal_id, b.l, b.p, b.w, b.lfd_date, b.d)::container_stat_delta) INTO cs
        FROM (SELECT c.account_id, c.current_status AS status,
                coalesce(c.pod_terminal_id, '00000000-0000-0000-0000-000000000000') AS pod_terminal_id,
                stats_day(c.pickup_lfd, tp.time_zone) AS lfd_date, v.l, v.p, v.w, v.d
            FROM containers c LEFT JOIN terminals t ON t.id = c.pod_terminal_id LEFT JOIN ports tp ON tp.id = t.port_id
            CROSS JOIN (VALUES
                (OLD.shipping_line_scac, coalesce(OLD.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'::uuid), ow, -1),
                (NEW.shipping_line_scac, coalesce(NEW.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'::uuid), nw, 1))
                AS v(l, p, w, d)
            WHERE c.account_id = NEW.account_id AND c.shipment_id = NEW.id) b;
        -- A shipment moved to another account takes its containers' old
        -- counts from the old account.
        IF OLD.account_id IS DISTINCT FROM NEW.account_id THEN
            SELECT array_agg(CASE WHEN (x).d < 0 THEN ROW(OLD.account_id, (x).status, (x).pod_terminal_id, (x).shipping_line_scac,
                (x).port_of_discharge_id, (x).eta_week, (x).lfd_date, (x).d)::container_stat_delta ELSE x END) INTO cs
            FROM unnest(cs) AS x;
        END IF;
    END IF;
    PERFORM container_stats_put(cs);
    PERFORM shipment_stats_put(ss);
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER shipments_count AFTER INSERT OR DELETE ON shipments
    FOR EACH ROW EXECUTE FUNCTION list_counts_row('shipments');
CREATE TRIGGER containers_count AFTER INSERT OR DELETE ON containers
    FOR EACH ROW EXECUTE FUNCTION list_counts_row('containers');
