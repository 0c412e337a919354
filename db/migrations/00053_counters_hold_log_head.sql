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
-- The rollup of a container also share-locks its shipment (so that a
-- change of the shipment's line, port or ETA waits for it), after the head;
-- an UPDATE of the shipment holds its row and then takes the head. A BEFORE
-- trigger on containers takes that share lock first now: rows, then the
-- head, then counters, for every single statement. (A transaction that
-- holds the head from an earlier statement and then waits for a row
-- another writer holds can still deadlock; PostgreSQL ends one of them and
-- the API answers 503, retryable.)

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

-- A container's write share-locks its shipment before anything else, in a
-- BEFORE trigger: the rollup (container_stats_row) reads the shipment's
-- line, port and ETA and locks it FOR SHARE so that a concurrent change of
-- those waits, but it fires after the head is held; an UPDATE of that
-- shipment holds the shipment's row and then takes the head. Taken here,
-- the order is the same for both: the shipment's row, then the head.
-- +goose StatementBegin
CREATE FUNCTION containers_share_shipment() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF counters_off() THEN
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM 1 FROM shipments s WHERE s.account_id = OLD.account_id AND s.id = OLD.shipment_id FOR SHARE;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    PERFORM 1 FROM shipments s WHERE s.account_id = NEW.account_id AND s.id = NEW.shipment_id FOR SHARE;
    RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER containers_share_shipment BEFORE INSERT OR DELETE ON containers
    FOR EACH ROW EXECUTE FUNCTION containers_share_shipment();
-- The rollup's WHEN, with the generated pickup_lfd's inputs (a BEFORE
-- trigger sees no generated value yet).
CREATE TRIGGER containers_share_shipment_upd BEFORE UPDATE ON containers
    FOR EACH ROW WHEN ((OLD.account_id, OLD.current_status, OLD.pod_terminal_id, OLD.shipment_id,
            OLD.pickup_lfd_line, OLD.pickup_lfd_terminal, OLD.pickup_lfd_rail)
        IS DISTINCT FROM (NEW.account_id, NEW.current_status, NEW.pod_terminal_id, NEW.shipment_id,
            NEW.pickup_lfd_line, NEW.pickup_lfd_terminal, NEW.pickup_lfd_rail))
    EXECUTE FUNCTION containers_share_shipment();

-- +goose Down
-- On Citus, dropping a trigger runs on the shards in parallel, and a
-- function command after it in one transaction is refused (as 00041's).
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
DROP TRIGGER containers_share_shipment_upd ON containers;
DROP TRIGGER containers_share_shipment ON containers;
DROP FUNCTION containers_share_shipment();
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

DROP FUNCTION shipgraph_change_log_hold(uuid);
