-- A transaction's accounts with unnumbered change-log rows are kept in one
-- setting, and the rollups and counters no longer call the no-op hold.
--
-- Since 00056 a logged row is written without a position and the deferred
-- trigger numbers the transaction's rows of its account at commit; the
-- per-row shipgraph_change_log_pos marked the account pending in a setting
-- of its own, shipgraph.log_pos_<account>. PostgreSQL keeps every setting
-- name a backend ever set (a placeholder for the rest of the backend's
-- life) and sorts its whole list of settings each time a new name is added
-- (PostgreSQL 15: add_guc_variable's qsort); the transaction's end walks the
-- whole list (AtEOXact_GUC). So each backend grew a setting per account it
-- ever wrote, and each first write of an account in a backend sorted them
-- all: 2.5 % of PostgreSQL's CPU in BenchmarkPollThroughput's first polls
-- across accounts (perf: set_config_option_ext and its qsort), growing with
-- the accounts a backend writes (a server with tens of thousands of
-- accounts: a sort of tens of thousands of names per new account, a walk of
-- them at every commit).
--
-- Now one setting, shipgraph.log_pending, holds the transaction's pending
-- accounts (their ids, each followed by a space): shipgraph_change_log_pos
-- adds the account the first time, the deferred trigger removes it when it
-- numbers the account's rows. Transaction-local as before (a savepoint
-- rolled back restores the list as it was, with the rows it takes away).
-- The transport events' log trigger (a poll's most logged rows: 32 of 37 in
-- a first poll) marks the account itself instead of calling
-- shipgraph_change_log_pos for each row (1.7 % of the statement time).
--
-- shipgraph_change_log_hold does nothing since 00056; list_counts_row and
-- the rollups' put functions still called it for every account of every
-- write, container_stats_put and shipment_stats_put after a grouping query
-- of their deltas that served only that call (about 1 % of a first poll's
-- statement time in pg_stat_statements). Those calls and queries are gone;
-- the function stays (nothing calls it).

-- +goose Up
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

-- +goose Down
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

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_log_transport_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('shipgraph.notify', true) = 'off' THEN
        RETURN NULL;
    END IF;
    INSERT INTO change_log (account_id, pos, record_type, record_id, op, parent_id, changed, old, new)
    VALUES (NEW.account_id, shipgraph_change_log_pos(NEW.account_id), 'transport_event', NEW.id, 'INSERT', NEW.container_id, NULL, NULL,
            jsonb_build_object('event', NEW.event, 'event_at', NEW.event_at, 'timezone', NEW.timezone,
                               'location_locode', NEW.location_locode, 'voyage_number', NEW.voyage_number,
                               'data_source', NEW.data_source, 'created_at', NEW.created_at,
                               'shipment_id', NEW.shipment_id));
    RETURN NULL;
END
$$;
-- +goose StatementEnd
