-- Grouped counts at any size (containerStats, shipmentStats; db/stats.go):
-- a GROUP BY over the 1.65 M containers of one account cannot answer in
-- 100 ms even from an index-only scan, so counts are kept per combination
-- of the grouping dimensions by statement-level triggers, as list_counts
-- (00003) keeps list totals, and summed at read time.
--
-- Three rollups, each narrow enough to sum in a few milliseconds at a
-- million shipments (docs/decisions.md, "Grouped counts at 1,000,000
-- shipments"):
--   container_stats      status, terminal, line, port of discharge, ETA week
--   container_lfd_stats  status, terminal, last free day (local date)
--   shipment_stats       terminal, line, port of discharge, ETA week
-- Dates are local: the last free day in the zone of the container's
-- terminal's port, the ETA's week (its Monday) in the zone of the port of
-- discharge, UTC without one; the buckets (overdue, today, ...) are whole
-- local days, so the stored date decides the bucket against "today" at
-- read time. A key is NOT NULL (primary keys are): no terminal or port is
-- the nil uuid, no date is 'infinity'.
--
-- Exactness under concurrent writers:
-- - a container's counts depend on its shipment's line, port and ETA: the
--   container triggers lock those shipments FOR SHARE (a shipment's UPDATE
--   takes FOR NO KEY UPDATE, which conflicts), so a shipment's change and a
--   write of one of its containers never both count from a stale side;
-- - each statement upserts one rollup's rows in key order, and the rollups
--   in one order (container_stats, container_lfd_stats, shipment_stats), so
--   two statements never take the same counters in opposite orders; rows
--   that reach zero are deleted by the statement holding them;
-- - a shipment's delete subtracts its containers before they cascade away
--   (a BEFORE ROW trigger: once the shipment is gone the containers'
--   delete trigger cannot see its line, and skips them).

-- +goose Up
CREATE TABLE container_stats (
    account_id           uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
    status               text NOT NULL,
    pod_terminal_id      uuid NOT NULL,
    shipping_line_scac   text NOT NULL,
    port_of_discharge_id uuid NOT NULL,
    eta_week             date NOT NULL,
    n                    bigint NOT NULL,
    PRIMARY KEY (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week)
);
CREATE TABLE container_lfd_stats (
    account_id      uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
    status          text NOT NULL,
    pod_terminal_id uuid NOT NULL,
    lfd_date        date NOT NULL,
    n               bigint NOT NULL,
    PRIMARY KEY (account_id, status, pod_terminal_id, lfd_date)
);
CREATE TABLE shipment_stats (
    account_id           uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
    pod_terminal_id      uuid NOT NULL,
    shipping_line_scac   text NOT NULL,
    port_of_discharge_id uuid NOT NULL,
    eta_week             date NOT NULL,
    n                    bigint NOT NULL,
    PRIMARY KEY (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week)
);
COMMENT ON TABLE container_stats IS 'shipgraph:tenant';
COMMENT ON TABLE container_lfd_stats IS 'shipgraph:tenant';
COMMENT ON TABLE shipment_stats IS 'shipgraph:tenant';

-- One container's (or shipment's) contribution: its keys and +1/-1.
CREATE TYPE container_stat_delta AS (
    account_id uuid, status text, pod_terminal_id uuid, shipping_line_scac text,
    port_of_discharge_id uuid, eta_week date, lfd_date date, d bigint);
CREATE TYPE shipment_stat_delta AS (
    account_id uuid, pod_terminal_id uuid, shipping_line_scac text, port_of_discharge_id uuid, eta_week date, d bigint);

-- The local date of ts in zone (UTC without one); 'infinity' for none.
-- +goose StatementBegin
CREATE FUNCTION stats_day(ts timestamptz, zone text) RETURNS date LANGUAGE sql STABLE AS $$
    SELECT coalesce((ts AT TIME ZONE coalesce(zone, 'UTC'))::date, 'infinity'::date)
$$;
-- +goose StatementEnd
-- The Monday of ts's week in zone; 'infinity' for none.
-- +goose StatementBegin
CREATE FUNCTION stats_week(ts timestamptz, zone text) RETURNS date LANGUAGE sql STABLE AS $$
    SELECT coalesce(date_trunc('week', ts AT TIME ZONE coalesce(zone, 'UTC'))::date, 'infinity'::date)
$$;
-- +goose StatementEnd

-- Applies container deltas (already summed per key) to both container
-- rollups, each in key order, and drops the rows that reached zero (locked
-- by this statement since its upsert: nobody else can have moved them).
-- +goose StatementBegin
CREATE FUNCTION container_stats_apply(ds container_stat_delta[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF ds IS NULL THEN
        RETURN;
    END IF;
    INSERT INTO container_stats AS t (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, n)
    SELECT account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, sum(d)
    FROM unnest(ds) GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week)
    DO UPDATE SET n = t.n + EXCLUDED.n;
    DELETE FROM container_stats t USING unnest(ds) x
    WHERE t.n = 0 AND t.account_id = x.account_id AND t.status = x.status AND t.pod_terminal_id = x.pod_terminal_id
      AND t.shipping_line_scac = x.shipping_line_scac AND t.port_of_discharge_id = x.port_of_discharge_id AND t.eta_week = x.eta_week;

    INSERT INTO container_lfd_stats AS t (account_id, status, pod_terminal_id, lfd_date, n)
    SELECT account_id, status, pod_terminal_id, lfd_date, sum(d)
    FROM unnest(ds) GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4
    ON CONFLICT (account_id, status, pod_terminal_id, lfd_date) DO UPDATE SET n = t.n + EXCLUDED.n;
    DELETE FROM container_lfd_stats t USING unnest(ds) x
    WHERE t.n = 0 AND t.account_id = x.account_id AND t.status = x.status AND t.pod_terminal_id = x.pod_terminal_id
      AND t.lfd_date = x.lfd_date;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION shipment_stats_apply(ds shipment_stat_delta[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF ds IS NULL THEN
        RETURN;
    END IF;
    INSERT INTO shipment_stats AS t (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, n)
    SELECT account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, sum(d)
    FROM unnest(ds) GROUP BY 1, 2, 3, 4, 5 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week)
    DO UPDATE SET n = t.n + EXCLUDED.n;
    DELETE FROM shipment_stats t USING unnest(ds) x
    WHERE t.n = 0 AND t.account_id = x.account_id AND t.pod_terminal_id = x.pod_terminal_id
      AND t.shipping_line_scac = x.shipping_line_scac AND t.port_of_discharge_id = x.port_of_discharge_id AND t.eta_week = x.eta_week;
END $$;
-- +goose StatementEnd

-- A container row as the triggers see it, and +1 (now counted) or -1.
CREATE TYPE container_stat_src AS (
    account_id uuid, current_status text, pod_terminal_id uuid, shipment_id uuid, pickup_lfd timestamptz, d bigint);

-- Counts container rows in or out: their keys come from their shipments
-- (locked FOR SHARE first, in key order, so that a concurrent change of a
-- shipment's line, port or ETA waits for this transaction or this one
-- reads its result) and the zones of their terminals and ports. Rows whose
-- shipment is gone (deleted in this transaction, its containers cascading)
-- were subtracted by the shipment's delete and are skipped.
-- +goose StatementBegin
CREATE FUNCTION container_stats_add(src container_stat_src[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE ds container_stat_delta[];
BEGIN
    IF src IS NULL THEN
        RETURN;
    END IF;
    PERFORM 1 FROM shipments s WHERE (s.account_id, s.id) IN (SELECT x.account_id, x.shipment_id FROM unnest(src) x)
    ORDER BY s.account_id, s.id FOR SHARE;
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
    PERFORM container_stats_apply(ds);
END $$;
-- +goose StatementEnd

-- Containers inserted (+1), deleted (-1), updated in what decides a key
-- (-1 as they were, +1 as they are; any other update touches no counter).
-- +goose StatementBegin
CREATE FUNCTION container_stats_ins() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM container_stats_add((SELECT array_agg(ROW(x.account_id, x.current_status, x.pod_terminal_id, x.shipment_id,
        x.pickup_lfd, 1)::container_stat_src) FROM new_rows x));
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION container_stats_del() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM container_stats_add((SELECT array_agg(ROW(x.account_id, x.current_status, x.pod_terminal_id, x.shipment_id,
        x.pickup_lfd, -1)::container_stat_src) FROM old_rows x));
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION container_stats_upd() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM container_stats_add((SELECT array_agg(r) FROM (
        SELECT ROW(o.account_id, o.current_status, o.pod_terminal_id, o.shipment_id, o.pickup_lfd, -1)::container_stat_src AS r
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.account_id, o.current_status, o.pod_terminal_id, o.shipment_id, o.pickup_lfd)
            IS DISTINCT FROM (n.account_id, n.current_status, n.pod_terminal_id, n.shipment_id, n.pickup_lfd)
        UNION ALL
        SELECT ROW(n.account_id, n.current_status, n.pod_terminal_id, n.shipment_id, n.pickup_lfd, 1)::container_stat_src
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.account_id, o.current_status, o.pod_terminal_id, o.shipment_id, o.pickup_lfd)
            IS DISTINCT FROM (n.account_id, n.current_status, n.pod_terminal_id, n.shipment_id, n.pickup_lfd)) m));
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION container_stats_trunc() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM container_stats;
    DELETE FROM container_lfd_stats;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER containers_stats_ins AFTER INSERT ON containers REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION container_stats_ins();
CREATE TRIGGER containers_stats_del AFTER DELETE ON containers REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION container_stats_del();
CREATE TRIGGER containers_stats_upd AFTER UPDATE ON containers REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION container_stats_upd();
CREATE TRIGGER containers_stats_trunc AFTER TRUNCATE ON containers
    FOR EACH STATEMENT EXECUTE FUNCTION container_stats_trunc();

-- Shipments: their own rollup by statement; a change of line, port of
-- discharge or ETA week moves their containers' counts; a deleted
-- shipment's containers are subtracted before they cascade away.
-- +goose StatementBegin
CREATE FUNCTION shipment_stats_ins() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM shipment_stats_apply((SELECT array_agg(ROW(x.account_id,
        coalesce(x.pod_terminal_id, '00000000-0000-0000-0000-000000000000'), x.shipping_line_scac,
        coalesce(x.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'), stats_week(x.pod_eta_at, pz.time_zone),
        1)::shipment_stat_delta) FROM new_rows x LEFT JOIN ports pz ON pz.id = x.port_of_discharge_id));
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION shipment_stats_del() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM shipment_stats_apply((SELECT array_agg(ROW(x.account_id,
        coalesce(x.pod_terminal_id, '00000000-0000-0000-0000-000000000000'), x.shipping_line_scac,
        coalesce(x.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'), stats_week(x.pod_eta_at, pz.time_zone),
        -1)::shipment_stat_delta) FROM old_rows x LEFT JOIN ports pz ON pz.id = x.port_of_discharge_id));
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION shipment_stats_upd() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cs container_stat_delta[];
    ss shipment_stat_delta[];
BEGIN
    -- Each updated shipment's keys as they were (o*) and are (n*); only
    -- those whose keys changed.
    WITH p AS MATERIALIZED (
        SELECT n.id, o.account_id AS oa, n.account_id AS na,
            coalesce(o.pod_terminal_id, '00000000-0000-0000-0000-000000000000') AS ot,
            coalesce(n.pod_terminal_id, '00000000-0000-0000-0000-000000000000') AS nt,
            o.shipping_line_scac AS ol, n.shipping_line_scac AS nl,
            coalesce(o.port_of_discharge_id, '00000000-0000-0000-0000-000000000000') AS op,
            coalesce(n.port_of_discharge_id, '00000000-0000-0000-0000-000000000000') AS np,
            stats_week(o.pod_eta_at, opz.time_zone) AS ow, stats_week(n.pod_eta_at, npz.time_zone) AS nw
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        LEFT JOIN ports opz ON opz.id = o.port_of_discharge_id LEFT JOIN ports npz ON npz.id = n.port_of_discharge_id),
    moved AS (SELECT * FROM p WHERE (oa, ot, ol, op, ow) IS DISTINCT FROM (na, nt, nl, np, nw)),
    -- Their containers (the terminal is the container's own: a change of
    -- the shipment's terminal moves none), once as they were counted and
    -- once as they count now.
    boxes AS (
        SELECT c.account_id, c.current_status AS status, coalesce(c.pod_terminal_id, '00000000-0000-0000-0000-000000000000') AS pod_terminal_id,
            stats_day(c.pickup_lfd, tp.time_zone) AS lfd_date, m.ol, m.op, m.ow, m.nl, m.np, m.nw
        FROM moved m JOIN containers c ON c.account_id = m.na AND c.shipment_id = m.id
        LEFT JOIN terminals t ON t.id = c.pod_terminal_id LEFT JOIN ports tp ON tp.id = t.port_id
        WHERE (m.ol, m.op, m.ow) IS DISTINCT FROM (m.nl, m.np, m.nw) OR m.oa IS DISTINCT FROM m.na),
    cd AS (
        SELECT account_id, status, pod_terminal_id, l, pt, w, lfd_date, sum(d) AS d FROM (
            SELECT account_id, status, pod_terminal_id, ol AS l, op AS pt, ow AS w, lfd_date, -1 AS d FROM boxes
            UNION ALL SELECT account_id, status, pod_terminal_id, nl, np, nw, lfd_date, 1 FROM boxes) b
        GROUP BY 1, 2, 3, 4, 5, 6, 7 HAVING sum(d) <> 0),
    sd AS (
        SELECT a, t, l, pt, w, sum(d) AS d FROM (
            SELECT oa AS a, ot AS t, ol AS l, op AS pt, ow AS w, -1 AS d FROM moved
            UNION ALL SELECT na, nt, nl, np, nw, 1 FROM moved) b
        GROUP BY 1, 2, 3, 4, 5 HAVING sum(d) <> 0)
    SELECT (SELECT array_agg(ROW(account_id, status, pod_terminal_id, l, pt, w, lfd_date, d)::container_stat_delta) FROM cd),
           (SELECT array_agg(ROW(a, t, l, pt, w, d)::shipment_stat_delta) FROM sd)
    INTO cs, ss;
    PERFORM container_stats_apply(cs);
    PERFORM shipment_stats_apply(ss);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- A shipment about to be deleted: its containers leave the container
-- rollups now, while its line, port and ETA are still known.
-- +goose StatementBegin
CREATE FUNCTION shipment_stats_before_del() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM container_stats_apply((SELECT array_agg(ROW(k.account_id, k.status, k.pod_terminal_id, OLD.shipping_line_scac,
        coalesce(OLD.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'),
        stats_week(OLD.pod_eta_at, (SELECT time_zone FROM ports WHERE id = OLD.port_of_discharge_id)),
        k.lfd_date, k.d)::container_stat_delta)
        FROM (SELECT c.account_id, c.current_status AS status,
                coalesce(c.pod_terminal_id, '00000000-0000-0000-0000-000000000000') AS pod_terminal_id,
                stats_day(c.pickup_lfd, tp.time_zone) AS lfd_date, -count(*) AS d
            FROM containers c LEFT JOIN terminals t ON t.id = c.pod_terminal_id LEFT JOIN ports tp ON tp.id = t.port_id
            WHERE c.account_id = OLD.account_id AND c.shipment_id = OLD.id
            GROUP BY 1, 2, 3, 4) k));
    RETURN OLD;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION shipment_stats_trunc() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM container_stats;
    DELETE FROM container_lfd_stats;
    DELETE FROM shipment_stats;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER shipments_stats_ins AFTER INSERT ON shipments REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION shipment_stats_ins();
CREATE TRIGGER shipments_stats_del AFTER DELETE ON shipments REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION shipment_stats_del();
CREATE TRIGGER shipments_stats_upd AFTER UPDATE ON shipments REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION shipment_stats_upd();
-- Named to fire after any other BEFORE DELETE trigger (by name), so that a
-- delete another one skips is not subtracted.
CREATE TRIGGER zz_shipments_stats_before_del BEFORE DELETE ON shipments
    FOR EACH ROW EXECUTE FUNCTION shipment_stats_before_del();
CREATE TRIGGER shipments_stats_trunc AFTER TRUNCATE ON shipments
    FOR EACH STATEMENT EXECUTE FUNCTION shipment_stats_trunc();

-- Reference data: the stored dates are local, so a port's new zone (or a
-- terminal moved to another port) recounts the rows that used it. Rare; it
-- locks out writers of shipments and containers until its commit so the
-- recount is exact.
-- +goose StatementBegin
CREATE FUNCTION stats_recount(ts uuid[], ps uuid[]) RETURNS void LANGUAGE plpgsql AS $$
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
CREATE FUNCTION stats_port_zone_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stats_recount(ARRAY(SELECT id FROM terminals WHERE port_id = NEW.id), ARRAY[NEW.id]);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION stats_terminal_port_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stats_recount(ARRAY[NEW.id], '{}');
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER ports_stats_zone AFTER UPDATE OF time_zone ON ports
    FOR EACH ROW WHEN (OLD.time_zone IS DISTINCT FROM NEW.time_zone) EXECUTE FUNCTION stats_port_zone_changed();
CREATE TRIGGER terminals_stats_port AFTER UPDATE OF port_id ON terminals
    FOR EACH ROW WHEN (OLD.port_id IS DISTINCT FROM NEW.port_id) EXECUTE FUNCTION stats_terminal_port_changed();

-- Backfill, the triggers already in place (and holding their tables'
-- locks until this migration commits): no row missed or counted twice.
INSERT INTO container_stats (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, n)
SELECT c.account_id, c.current_status, coalesce(c.pod_terminal_id, '00000000-0000-0000-0000-000000000000'),
    s.shipping_line_scac, coalesce(s.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'),
    stats_week(s.pod_eta_at, pz.time_zone), count(*)
FROM containers c JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id
LEFT JOIN ports pz ON pz.id = s.port_of_discharge_id
GROUP BY 1, 2, 3, 4, 5, 6;
INSERT INTO container_lfd_stats (account_id, status, pod_terminal_id, lfd_date, n)
SELECT c.account_id, c.current_status, coalesce(c.pod_terminal_id, '00000000-0000-0000-0000-000000000000'),
    stats_day(c.pickup_lfd, tp.time_zone), count(*)
FROM containers c LEFT JOIN terminals t ON t.id = c.pod_terminal_id LEFT JOIN ports tp ON tp.id = t.port_id
GROUP BY 1, 2, 3, 4;
INSERT INTO shipment_stats (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, n)
SELECT s.account_id, coalesce(s.pod_terminal_id, '00000000-0000-0000-0000-000000000000'), s.shipping_line_scac,
    coalesce(s.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'), stats_week(s.pod_eta_at, pz.time_zone), count(*)
FROM shipments s LEFT JOIN ports pz ON pz.id = s.port_of_discharge_id
GROUP BY 1, 2, 3, 4, 5;

-- +goose Down
DROP TRIGGER ports_stats_zone ON ports;
DROP TRIGGER terminals_stats_port ON terminals;
DROP TRIGGER containers_stats_ins ON containers;
DROP TRIGGER containers_stats_del ON containers;
DROP TRIGGER containers_stats_upd ON containers;
DROP TRIGGER containers_stats_trunc ON containers;
DROP TRIGGER shipments_stats_ins ON shipments;
DROP TRIGGER shipments_stats_del ON shipments;
DROP TRIGGER shipments_stats_upd ON shipments;
DROP TRIGGER zz_shipments_stats_before_del ON shipments;
DROP TRIGGER shipments_stats_trunc ON shipments;
DROP FUNCTION stats_port_zone_changed(), stats_terminal_port_changed(), stats_recount(uuid[], uuid[]),
    shipment_stats_trunc(), shipment_stats_before_del(), shipment_stats_upd(), shipment_stats_del(), shipment_stats_ins(),
    container_stats_trunc(), container_stats_upd(), container_stats_del(), container_stats_ins(),
    container_stats_add(container_stat_src[]), shipment_stats_apply(shipment_stat_delta[]),
    container_stats_apply(container_stat_delta[]), stats_week(timestamptz, text), stats_day(timestamptz, text);
DROP TYPE container_stat_src, container_stat_delta, shipment_stat_delta;
DROP TABLE container_stats, container_lfd_stats, shipment_stats;
