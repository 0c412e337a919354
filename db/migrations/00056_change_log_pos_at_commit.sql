-- Change-log positions given at commit: an account's head is held only
-- while a transaction numbers its rows, not from its first logged change.
--
-- Since 00035 the first change an account logged in a transaction took the
-- account's change_log_heads row and held it to commit, so that positions
-- commit in the order they were taken, dense. Every writer of an account
-- (a batch of tracking polls, an API write) ran after the one before it had
-- committed, whatever it wrote: one account's polls were written by one
-- backend at a time, and its POSTs waited for a whole batch.
--
-- Now a change is logged without a position (pos NULL: no reader sees it
-- before it commits, and readers ask for positions above theirs) and the
-- deferred trigger of 00041 numbers the transaction's rows of the account at
-- commit: it takes the head (its lock, held to the end of the transaction,
-- as before), gives the rows the positions after it in the order they were
-- written (their ids), and moves the head past them. Positions still commit
-- in the order they were given, without gaps: a rollback gives nothing
-- back, since nothing was taken; a savepoint rolled back takes its rows with
-- it. Writers of one account now wait for each other only for that moment
-- (and on the rows they both write). The unique (account, pos) index finds a
-- transaction's unnumbered rows: rows of other transactions are numbered
-- before they commit, so the only ones it sees are its own.
--
-- Lock order: a transaction takes the head last, at commit, and afterwards
-- only numbers its own rows; so nothing waits for a row while holding the
-- head, and 00053's hold (every counter and rollup write took the head
-- first, to keep that order) is not needed: shipgraph_change_log_hold does
-- nothing. The container rollup reads its shipment under a share lock again
-- (00024, 00036), which the head made unnecessary: a writer that changes a
-- shipment's line, port or ETA waits for the containers being added to it,
-- and they for it.

-- +goose Up
-- On Citus the ALTER runs on the shards in parallel, and a function command
-- after a parallel operation in one transaction is refused (as 00041's
-- Down); plain PostgreSQL keeps it as an unused placeholder setting.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
ALTER TABLE change_log ALTER COLUMN pos DROP NOT NULL;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_pos(account uuid) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    -- The account's rows wait for the deferred trigger's numbering.
    PERFORM set_config('shipgraph.log_pos_' || replace(account::text, '-', ''), 'pending', true);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- Fires once per change_log row at commit; the first firing of an account
-- numbers all of the transaction's rows of it, the others find nothing to
-- do. A SET CONSTRAINTS … IMMEDIATE mid-transaction numbers the rows so far
-- (and holds the head from then on); later rows are numbered at commit.
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

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_hold(account uuid) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    -- The head is taken at commit only (see above): nothing to hold.
END
$$;
-- +goose StatementEnd

-- 00053's, with the shipment share-locked whether the log is on or off.
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

-- +goose Down
-- Rows are numbered before every commit: none is left without a position.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_pos(account uuid) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    key  text := 'shipgraph.log_pos_' || replace(account::text, '-', '');
    last text := current_setting(key, true);
    pos  bigint;
BEGIN
    IF last IS NULL OR last = '' THEN
        INSERT INTO change_log_heads AS h (account_id, pos) VALUES (account, 0)
        ON CONFLICT (account_id) DO UPDATE SET pos = h.pos
        RETURNING h.pos INTO pos;
        pos := pos + 1;
    ELSE
        pos := last::bigint + 1;
    END IF;
    PERFORM set_config(key, pos::text, true);
    RETURN pos;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_head() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    key  text := 'shipgraph.log_pos_' || replace(NEW.account_id::text, '-', '');
    last text := current_setting(key, true);
BEGIN
    IF last IS NOT NULL AND last <> '' THEN
        UPDATE change_log_heads SET pos = last::bigint WHERE account_id = NEW.account_id;
        PERFORM set_config(key, '', true);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_hold(account uuid) RETURNS void LANGUAGE plpgsql AS $$
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
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            PERFORM shipgraph_change_log_hold(OLD.account_id);
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
            PERFORM shipgraph_change_log_hold(NEW.account_id);
        END IF;
    ELSE
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

ALTER TABLE change_log ALTER COLUMN pos SET NOT NULL;
