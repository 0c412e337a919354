-- Counters and rollups kept row by row, striped, so that Citus can run
-- them on its shards and an account's writers do not queue on one row.
--
-- The list totals (00003) and grouped-count rollups (00021) were kept by
-- statement-level triggers with transition tables: Citus cannot run those
-- on shards, and every writer of an account waited on the account's one
-- counter row until commit (an account's first polls ran one at a time).
--
-- Now:
-- - row-level triggers (no transition tables), each touching only rows of
--   the account of the row that fired it (its counters, its shipment);
-- - every counter row has a slot (0–15): a transaction adds to the slot of
--   its backend (counter_slot()), so concurrent writers of one account
--   mostly touch different rows; a reader sums the slots (db/list.go,
--   db/stats_rollups.go already sum the rollups). One transaction always
--   uses one slot, so two transactions share counter rows only when their
--   backends share a slot. A slot's count may go below zero (a row counted
--   in by one slot, out by another): only the sum means anything. Rows
--   whose count reaches zero are deleted by the transaction holding them;
-- - the UPDATE triggers fire only when a column that decides a key
--   changed (WHEN), so most updates (a poll's milestones) call nothing.
--
-- Exactness under concurrent writers is as in 00021: a container's counts
-- lock its shipment FOR SHARE before reading its line, port and ETA.
-- TRUNCATE (statement) triggers and the recount on a port's zone change
-- (reference data, rare) stay as they were.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION counter_slot() RETURNS smallint LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT (pg_backend_pid() % 16)::smallint
$$;
-- +goose StatementEnd

-- A bulk load (the seeder: a whole database in one transaction) turns the
-- row triggers off (shipgraph.counters = 'off', transaction-local) and
-- counts everything once at the end with counters_recount(): a trigger per
-- row of millions would cost more than the load.
-- +goose StatementBegin
CREATE FUNCTION counters_off() RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT coalesce(current_setting('shipgraph.counters', true), '') = 'off'
$$;
-- +goose StatementEnd

ALTER TABLE list_counts ADD COLUMN slot smallint NOT NULL DEFAULT 0,
    DROP CONSTRAINT list_counts_n_check,
    DROP CONSTRAINT list_counts_pkey, ADD CONSTRAINT list_counts_pkey PRIMARY KEY (account_id, list, slot);
ALTER TABLE container_stats ADD COLUMN slot smallint NOT NULL DEFAULT 0,
    DROP CONSTRAINT container_stats_pkey, ADD CONSTRAINT container_stats_pkey
    PRIMARY KEY (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot);
ALTER TABLE container_lfd_stats ADD COLUMN slot smallint NOT NULL DEFAULT 0,
    DROP CONSTRAINT container_lfd_stats_pkey, ADD CONSTRAINT container_lfd_stats_pkey
    PRIMARY KEY (account_id, status, pod_terminal_id, lfd_date, slot);
ALTER TABLE shipment_stats ADD COLUMN slot smallint NOT NULL DEFAULT 0,
    DROP CONSTRAINT shipment_stats_pkey, ADD CONSTRAINT shipment_stats_pkey
    PRIMARY KEY (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, slot);

-- A row in (+1) or out (-1) of its account's list; a row that changes
-- account (nothing does today) moves.
-- +goose StatementBegin
CREATE FUNCTION list_counts_row() RETURNS trigger LANGUAGE plpgsql AS $$
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

DROP TRIGGER shipments_count_ins ON shipments;
DROP TRIGGER shipments_count_del ON shipments;
DROP TRIGGER shipments_count_move ON shipments;
DROP TRIGGER containers_count_ins ON containers;
DROP TRIGGER containers_count_del ON containers;
DROP TRIGGER containers_count_move ON containers;
DROP TRIGGER documents_count_ins ON documents;
DROP TRIGGER documents_count_del ON documents;
DROP TRIGGER documents_count_move ON documents;
CREATE TRIGGER shipments_count AFTER INSERT OR DELETE ON shipments
    FOR EACH ROW EXECUTE FUNCTION list_counts_row('shipments');
CREATE TRIGGER shipments_count_move AFTER UPDATE OF account_id ON shipments
    FOR EACH ROW WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id) EXECUTE FUNCTION list_counts_row('shipments');
CREATE TRIGGER containers_count AFTER INSERT OR DELETE ON containers
    FOR EACH ROW EXECUTE FUNCTION list_counts_row('containers');
CREATE TRIGGER containers_count_move AFTER UPDATE OF account_id ON containers
    FOR EACH ROW WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id) EXECUTE FUNCTION list_counts_row('containers');
CREATE TRIGGER documents_count AFTER INSERT OR DELETE ON documents
    FOR EACH ROW EXECUTE FUNCTION list_counts_row('documents');
CREATE TRIGGER documents_count_move AFTER UPDATE OF account_id ON documents
    FOR EACH ROW WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id) EXECUTE FUNCTION list_counts_row('documents');

-- container_stats_apply and shipment_stats_apply of 00021, into this
-- transaction's slot; a row of the slot that reached zero is deleted (the
-- delete runs only when an upsert returned a zero).
-- +goose StatementBegin
CREATE FUNCTION container_stats_put(ds container_stat_delta[]) RETURNS void LANGUAGE plpgsql AS $$
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
CREATE FUNCTION shipment_stats_put(ds shipment_stat_delta[]) RETURNS void LANGUAGE plpgsql AS $$
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

-- One container row counted in (+1) or out (-1): its keys from its
-- shipment, locked FOR SHARE first (a concurrent change of the shipment's
-- line, port or ETA waits for this transaction, or this one reads its
-- result). A row whose shipment is gone (deleted in this transaction, its
-- containers cascading) was subtracted by the shipment's delete.
-- +goose StatementBegin
CREATE FUNCTION container_stats_row() RETURNS trigger LANGUAGE plpgsql AS $$
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

DROP TRIGGER containers_stats_ins ON containers;
DROP TRIGGER containers_stats_del ON containers;
DROP TRIGGER containers_stats_upd ON containers;
CREATE TRIGGER containers_stats AFTER INSERT OR DELETE ON containers
    FOR EACH ROW EXECUTE FUNCTION container_stats_row();
CREATE TRIGGER containers_stats_upd AFTER UPDATE ON containers
    FOR EACH ROW WHEN ((OLD.account_id, OLD.current_status, OLD.pod_terminal_id, OLD.shipment_id, OLD.pickup_lfd)
        IS DISTINCT FROM (NEW.account_id, NEW.current_status, NEW.pod_terminal_id, NEW.shipment_id, NEW.pickup_lfd))
    EXECUTE FUNCTION container_stats_row();

-- One shipment row: its own rollup (-1 as it was, +1 as it is); a change
-- of line, port of discharge or ETA week (or account) also moves its
-- containers' counts.
-- +goose StatementBegin
CREATE FUNCTION shipment_stats_row() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- A shipment about to be deleted: its containers leave the container
-- rollups now, while its line, port and ETA are still known (00021's
-- shipment_stats_before_del, into this transaction's slot).
-- +goose StatementBegin
CREATE FUNCTION shipment_stats_row_before_del() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF counters_off() THEN
        RETURN OLD;
    END IF;
    PERFORM container_stats_put((SELECT array_agg(ROW(k.account_id, k.status, k.pod_terminal_id, OLD.shipping_line_scac,
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

DROP TRIGGER shipments_stats_ins ON shipments;
DROP TRIGGER shipments_stats_del ON shipments;
DROP TRIGGER shipments_stats_upd ON shipments;
DROP TRIGGER zz_shipments_stats_before_del ON shipments;
CREATE TRIGGER shipments_stats AFTER INSERT OR DELETE ON shipments
    FOR EACH ROW EXECUTE FUNCTION shipment_stats_row();
CREATE TRIGGER shipments_stats_upd AFTER UPDATE ON shipments
    FOR EACH ROW WHEN ((OLD.account_id, OLD.pod_terminal_id, OLD.shipping_line_scac, OLD.port_of_discharge_id, OLD.pod_eta_at)
        IS DISTINCT FROM (NEW.account_id, NEW.pod_terminal_id, NEW.shipping_line_scac, NEW.port_of_discharge_id, NEW.pod_eta_at))
    EXECUTE FUNCTION shipment_stats_row();
-- Named to fire after any other BEFORE DELETE trigger (by name), so that a
-- delete another one skips is not subtracted.
CREATE TRIGGER zz_shipments_stats_before_del BEFORE DELETE ON shipments
    FOR EACH ROW EXECUTE FUNCTION shipment_stats_row_before_del();

-- Every counter and rollup counted afresh, for every account (the
-- seeder's end; 00003's and 00021's backfills).
-- +goose StatementBegin
CREATE FUNCTION counters_recount() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM list_counts;
    INSERT INTO list_counts (account_id, list, n)
    SELECT account_id, 'shipments', count(*) FROM shipments GROUP BY account_id
    UNION ALL SELECT account_id, 'containers', count(*) FROM containers GROUP BY account_id
    UNION ALL SELECT account_id, 'documents', count(*) FROM documents GROUP BY account_id;
    DELETE FROM container_stats;
    INSERT INTO container_stats (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, n)
    SELECT c.account_id, c.current_status, coalesce(c.pod_terminal_id, '00000000-0000-0000-0000-000000000000'),
        s.shipping_line_scac, coalesce(s.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'),
        stats_week(s.pod_eta_at, pz.time_zone), count(*)
    FROM containers c JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id
    LEFT JOIN ports pz ON pz.id = s.port_of_discharge_id
    GROUP BY 1, 2, 3, 4, 5, 6;
    DELETE FROM container_lfd_stats;
    INSERT INTO container_lfd_stats (account_id, status, pod_terminal_id, lfd_date, n)
    SELECT c.account_id, c.current_status, coalesce(c.pod_terminal_id, '00000000-0000-0000-0000-000000000000'),
        stats_day(c.pickup_lfd, tp.time_zone), count(*)
    FROM containers c LEFT JOIN terminals t ON t.id = c.pod_terminal_id LEFT JOIN ports tp ON tp.id = t.port_id
    GROUP BY 1, 2, 3, 4;
    DELETE FROM shipment_stats;
    INSERT INTO shipment_stats (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, n)
    SELECT s.account_id, coalesce(s.pod_terminal_id, '00000000-0000-0000-0000-000000000000'), s.shipping_line_scac,
        coalesce(s.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'), stats_week(s.pod_eta_at, pz.time_zone), count(*)
    FROM shipments s LEFT JOIN ports pz ON pz.id = s.port_of_discharge_id
    GROUP BY 1, 2, 3, 4, 5;
END $$;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER zz_shipments_stats_before_del ON shipments;
DROP TRIGGER shipments_stats ON shipments;
DROP TRIGGER shipments_stats_upd ON shipments;
DROP TRIGGER containers_stats ON containers;
DROP TRIGGER containers_stats_upd ON containers;
DROP TRIGGER shipments_count ON shipments;
DROP TRIGGER shipments_count_move ON shipments;
DROP TRIGGER containers_count ON containers;
DROP TRIGGER containers_count_move ON containers;
DROP TRIGGER documents_count ON documents;
DROP TRIGGER documents_count_move ON documents;
DROP FUNCTION counters_recount(), shipment_stats_row_before_del(), shipment_stats_row(), container_stats_row(),
    shipment_stats_put(shipment_stat_delta[]), container_stats_put(container_stat_delta[]), list_counts_row();

-- The slots summed back into one row per key.
CREATE TEMPORARY TABLE lc ON COMMIT DROP AS SELECT account_id, list, sum(n)::bigint AS n FROM list_counts GROUP BY 1, 2;
CREATE TEMPORARY TABLE cst ON COMMIT DROP AS SELECT account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id,
    eta_week, sum(n)::bigint AS n FROM container_stats GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0;
CREATE TEMPORARY TABLE clf ON COMMIT DROP AS SELECT account_id, status, pod_terminal_id, lfd_date, sum(n)::bigint AS n
    FROM container_lfd_stats GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0;
CREATE TEMPORARY TABLE sst ON COMMIT DROP AS SELECT account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id,
    eta_week, sum(n)::bigint AS n FROM shipment_stats GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0;
DELETE FROM list_counts;
DELETE FROM container_stats;
DELETE FROM container_lfd_stats;
DELETE FROM shipment_stats;
ALTER TABLE list_counts DROP CONSTRAINT list_counts_pkey, DROP COLUMN slot,
    ADD CONSTRAINT list_counts_pkey PRIMARY KEY (account_id, list), ADD CONSTRAINT list_counts_n_check CHECK (n >= 0);
ALTER TABLE container_stats DROP CONSTRAINT container_stats_pkey, DROP COLUMN slot, ADD CONSTRAINT container_stats_pkey
    PRIMARY KEY (account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week);
ALTER TABLE container_lfd_stats DROP CONSTRAINT container_lfd_stats_pkey, DROP COLUMN slot, ADD CONSTRAINT container_lfd_stats_pkey
    PRIMARY KEY (account_id, status, pod_terminal_id, lfd_date);
ALTER TABLE shipment_stats DROP CONSTRAINT shipment_stats_pkey, DROP COLUMN slot, ADD CONSTRAINT shipment_stats_pkey
    PRIMARY KEY (account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week);
INSERT INTO list_counts SELECT * FROM lc;
INSERT INTO container_stats SELECT * FROM cst;
INSERT INTO container_lfd_stats SELECT * FROM clf;
INSERT INTO shipment_stats SELECT * FROM sst;
DROP FUNCTION counter_slot(), counters_off();

CREATE TRIGGER shipments_count_ins AFTER INSERT ON shipments REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_inserted('shipments');
CREATE TRIGGER shipments_count_del AFTER DELETE ON shipments REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_deleted('shipments');
CREATE TRIGGER shipments_count_move AFTER UPDATE OF account_id ON shipments
    FOR EACH ROW WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id) EXECUTE FUNCTION list_counts_moved('shipments');
CREATE TRIGGER containers_count_ins AFTER INSERT ON containers REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_inserted('containers');
CREATE TRIGGER containers_count_del AFTER DELETE ON containers REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_deleted('containers');
CREATE TRIGGER containers_count_move AFTER UPDATE OF account_id ON containers
    FOR EACH ROW WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id) EXECUTE FUNCTION list_counts_moved('containers');
CREATE TRIGGER documents_count_ins AFTER INSERT ON documents REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_inserted('documents');
CREATE TRIGGER documents_count_del AFTER DELETE ON documents REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_deleted('documents');
CREATE TRIGGER documents_count_move AFTER UPDATE OF account_id ON documents
    FOR EACH ROW WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id) EXECUTE FUNCTION list_counts_moved('documents');
CREATE TRIGGER containers_stats_ins AFTER INSERT ON containers REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION container_stats_ins();
CREATE TRIGGER containers_stats_del AFTER DELETE ON containers REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION container_stats_del();
CREATE TRIGGER containers_stats_upd AFTER UPDATE ON containers REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION container_stats_upd();
CREATE TRIGGER shipments_stats_ins AFTER INSERT ON shipments REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION shipment_stats_ins();
CREATE TRIGGER shipments_stats_del AFTER DELETE ON shipments REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION shipment_stats_del();
CREATE TRIGGER shipments_stats_upd AFTER UPDATE ON shipments REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION shipment_stats_upd();
CREATE TRIGGER zz_shipments_stats_before_del BEFORE DELETE ON shipments
    FOR EACH ROW EXECUTE FUNCTION shipment_stats_before_del();
