-- The rollups' row triggers do less for a row's own change.
--
-- A first tracking poll inserts a shipment and about two containers; each
-- insert's rollup trigger hands one delta to container_stats_put or
-- shipment_stats_put, which grouped it with three (two) queries over the
-- array before upserting each group. A one-delta array (every INSERT and
-- DELETE) now goes straight to its upserts: the same rows written, the
-- same head held first (00053), in the same order.
--
-- shipment_stats_row computed the week with the port's zone as a subquery
-- inside the expression; PostgreSQL chose a custom plan for that expression
-- at every call (planned about as often as it ran: pg_stat_statements,
-- docs/tracking.md). The zone is now read by a statement of its own and the
-- week computed from it, each with a plan kept for the session.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipment_stats_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ss shipment_stat_delta[];
    cs container_stat_delta[];
    ow date;
    nw date;
    tz text;
BEGIN
    IF counters_off() THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        tz := NULL;
        SELECT p.time_zone INTO tz FROM ports p WHERE p.id = OLD.port_of_discharge_id;
        ow := stats_week(OLD.pod_eta_at, tz);
        ss := ss || ROW(OLD.account_id, coalesce(OLD.pod_terminal_id, '00000000-0000-0000-0000-000000000000'), OLD.shipping_line_scac,
            coalesce(OLD.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'), ow, -1)::shipment_stat_delta;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        tz := NULL;
        SELECT p.time_zone INTO tz FROM ports p WHERE p.id = NEW.port_of_discharge_id;
        nw := stats_week(NEW.pod_eta_at, tz);
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

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION container_stats_put(ds container_stat_delta[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    s smallint := counter_slot();
    k record;
    a uuid;
    v bigint;
    one container_stat_delta;
BEGIN
    IF ds IS NULL THEN
        RETURN;
    END IF;
    IF cardinality(ds) = 1 THEN
        -- One row's change (an INSERT or DELETE): its key as it is, no
        -- grouping.
        one := ds[1];
        IF one.d = 0 THEN
            RETURN;
        END IF;
        PERFORM shipgraph_change_log_hold(one.account_id);
        INSERT INTO container_stats AS t (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot, n)
        VALUES (one.account_id, one.status, one.pod_terminal_id, one.shipping_line_scac, one.port_of_discharge_id, one.eta_week, s, one.d)
        ON CONFLICT (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot)
        DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.n INTO v;
        IF v = 0 THEN
            DELETE FROM container_stats t
            WHERE t.account_id = one.account_id AND t.status = one.status AND t.pod_terminal_id = one.pod_terminal_id
              AND t.shipping_line_scac = one.shipping_line_scac AND t.port_of_discharge_id = one.port_of_discharge_id
              AND t.eta_week = one.eta_week AND t.slot = s AND t.n = 0;
        END IF;
        INSERT INTO container_lfd_stats AS t (account_id, status, pod_terminal_id, lfd_date, slot, n)
        VALUES (one.account_id, one.status, one.pod_terminal_id, one.lfd_date, s, one.d)
        ON CONFLICT (account_id, status, pod_terminal_id, lfd_date, slot) DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.n INTO v;
        IF v = 0 THEN
            DELETE FROM container_lfd_stats t
            WHERE t.account_id = one.account_id AND t.status = one.status AND t.pod_terminal_id = one.pod_terminal_id
              AND t.lfd_date = one.lfd_date AND t.slot = s AND t.n = 0;
        END IF;
        RETURN;
    END IF;
    FOR a IN SELECT account_id FROM unnest(ds)
            GROUP BY account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week HAVING sum(d) <> 0
            UNION SELECT account_id FROM unnest(ds) GROUP BY account_id, status, pod_terminal_id, lfd_date HAVING sum(d) <> 0
            ORDER BY 1 LOOP
        PERFORM shipgraph_change_log_hold(a);
    END LOOP;
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
    a uuid;
    v bigint;
    one shipment_stat_delta;
BEGIN
    IF ds IS NULL THEN
        RETURN;
    END IF;
    IF cardinality(ds) = 1 THEN
        one := ds[1];
        IF one.d = 0 THEN
            RETURN;
        END IF;
        PERFORM shipgraph_change_log_hold(one.account_id);
        INSERT INTO shipment_stats AS t (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot, n)
        VALUES (one.account_id, one.pod_terminal_id, one.shipping_line_scac, one.port_of_discharge_id, one.eta_week, s, one.d)
        ON CONFLICT (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot)
        DO UPDATE SET n = t.n + EXCLUDED.n
        RETURNING t.n INTO v;
        IF v = 0 THEN
            DELETE FROM shipment_stats t
            WHERE t.account_id = one.account_id AND t.pod_terminal_id = one.pod_terminal_id
              AND t.shipping_line_scac = one.shipping_line_scac AND t.port_of_discharge_id = one.port_of_discharge_id
              AND t.eta_week = one.eta_week AND t.slot = s AND t.n = 0;
        END IF;
        RETURN;
    END IF;
    FOR a IN SELECT DISTINCT account_id FROM (SELECT account_id FROM unnest(ds)
            GROUP BY account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week HAVING sum(d) <> 0) x
            ORDER BY 1 LOOP
        PERFORM shipgraph_change_log_hold(a);
    END LOOP;
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

-- +goose Down
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

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION container_stats_put(ds container_stat_delta[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    s smallint := counter_slot();
    k record;
    a uuid;
    v bigint;
BEGIN
    IF ds IS NULL THEN
        RETURN;
    END IF;
    FOR a IN SELECT account_id FROM unnest(ds)
            GROUP BY account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week HAVING sum(d) <> 0
            UNION SELECT account_id FROM unnest(ds) GROUP BY account_id, status, pod_terminal_id, lfd_date HAVING sum(d) <> 0
            ORDER BY 1 LOOP
        PERFORM shipgraph_change_log_hold(a);
    END LOOP;
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
    a uuid;
    v bigint;
BEGIN
    IF ds IS NULL THEN
        RETURN;
    END IF;
    FOR a IN SELECT DISTINCT account_id FROM (SELECT account_id FROM unnest(ds)
            GROUP BY account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week HAVING sum(d) <> 0) x
            ORDER BY 1 LOOP
        PERFORM shipgraph_change_log_hold(a);
    END LOOP;
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
