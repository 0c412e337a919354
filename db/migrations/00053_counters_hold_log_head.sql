-- Every counter and rollup write holds its account's change-log head
-- first: one lock order for every writer of an account.
--
-- A logged change takes the account's change_log_heads row and holds it to
-- the end of its transaction (00041). The counters (list_counts) and the
-- rollups (container_stats, container_lfd_stats, shipment_stats) are rows
-- of the account too, one per counter slot (the backend's pid modulo 16).
-- The count triggers fire before the change-log trigger (trigger order is
-- by name) and the rollup before a shipment's delete fires before any
-- AFTER trigger, so a statement could take a counter row and then wait for
-- the head, while a transaction that already held the head (its first
-- statement logged a change) waited for that counter row: two backends on
-- one slot deadlocked (seen as 40P01 on an INSERT INTO containers while a
-- writer inserted a shipment and its container in one statement).
--
-- Now each counter or rollup write first holds the head
-- (shipgraph_change_log_hold: the head row's lock, taken once per
-- transaction as shipgraph_change_log_pos takes it, without using a
-- position). Every transaction that writes an account's counters then
-- takes its head before any of them; those are serialised on the head
-- anyway, since each of them logs a change. With the log off
-- (shipgraph.notify = 'off', a bulk load) nothing takes the head, and the
-- counters keep such writers apart by slot as before.
--
-- The rollup of a container also share-locked its shipment (so that a
-- change of the shipment's line, port or ETA waited for it), after the
-- head; an UPDATE of the shipment holds its row and then takes the head.
-- Now the rollup holds the head before it reads the shipment and takes no
-- lock on it: whoever changes those columns logs the change and waits for
-- the head. (Taking the share lock earlier, in a BEFORE trigger, starved
-- the shipment's UPDATE: share lockers queued on the head kept the row
-- share-locked.) A single statement takes its own rows, then the head,
-- then counters. A transaction that holds the head from an earlier
-- statement and then waits for a row another writer holds can still
-- deadlock; PostgreSQL ends one of them and the API answers 503,
-- retryable.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION shipgraph_change_log_hold(account uuid) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    key  text := 'shipgraph.log_pos_' || replace(account::text, '-', '');
    last text := current_setting(key, true);
    pos  bigint;
BEGIN
    IF (last IS NULL OR last = '') AND current_setting('shipgraph.notify', true) IS DISTINCT FROM 'off' THEN
        INSERT INTO change_log_heads AS h (account_id, pos) VALUES (account, 0)
        ON CONFLICT (account_id) DO UPDATE SET pos = h.pos
        RETURNING h.pos INTO pos;
        PERFORM set_config(key, pos::text, true);
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION list_counts_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF counters_off() THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM shipgraph_change_log_hold(OLD.account_id);
        INSERT INTO list_counts AS c (account_id, list, slot, n) VALUES (OLD.account_id, TG_ARGV[0], counter_slot(), -1)
        ON CONFLICT (account_id, list, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        PERFORM shipgraph_change_log_hold(NEW.account_id);
        INSERT INTO list_counts AS c (account_id, list, slot, n) VALUES (NEW.account_id, TG_ARGV[0], counter_slot(), 1)
        ON CONFLICT (account_id, list, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
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

-- A container's rollup read its shipment's line, port and ETA under a share
-- lock on the shipment, taken after the head; an UPDATE of the shipment
-- holds its row and then takes the head. With the head held first, the
-- share lock is not needed: whoever changes those columns waits for the
-- head. It stays for writers with the log off.
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
    IF current_setting('shipgraph.notify', true) IS DISTINCT FROM 'off' THEN
        -- The account's head, held to commit: every writer that changes a
        -- shipment's line, port or ETA logs it and so holds the head too;
        -- the shipments read below stay as read, with no lock on them.
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            PERFORM shipgraph_change_log_hold(OLD.account_id);
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
            PERFORM shipgraph_change_log_hold(NEW.account_id);
        END IF;
    ELSE
        -- With the log off nothing holds the head: the shipment as it is
        -- now first, then the one it left (as 00024), share-locked.
        IF TG_OP = 'DELETE' THEN
            PERFORM 1 FROM shipments s WHERE s.account_id = OLD.account_id AND s.id = OLD.shipment_id FOR SHARE;
        ELSE
            PERFORM 1 FROM shipments s WHERE s.account_id = NEW.account_id AND s.id = NEW.shipment_id FOR SHARE;
        END IF;
        IF TG_OP = 'UPDATE' AND (OLD.account_id, OLD.shipment_id) IS DISTINCT FROM (NEW.account_id, NEW.shipment_id) THEN
            PERFORM 1 FROM shipments s WHERE s.account_id = OLD.account_id AND s.id = OLD.shipment_id FOR SHARE;
        END IF;
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


-- +goose Down
-- On Citus, dropping a trigger runs on the shards in parallel, and a
-- function command after it in one transaction is refused (as 00041's).
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION list_counts_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF counters_off() THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO list_counts AS c (account_id, list, slot, n) VALUES (OLD.account_id, TG_ARGV[0], counter_slot(), -1)
        ON CONFLICT (account_id, list, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO list_counts AS c (account_id, list, slot, n) VALUES (NEW.account_id, TG_ARGV[0], counter_slot(), 1)
        ON CONFLICT (account_id, list, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

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

DROP FUNCTION shipgraph_change_log_hold(uuid);
