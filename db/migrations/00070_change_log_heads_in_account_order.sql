-- The numbering at commit takes every pending account's change-log head
-- in account order, in its first firing of the transaction, on plain
-- PostgreSQL; the tracking writers' extra statement that took them first
-- is gone (db/tracking_poll.go inTrackingTxs).
--
-- Since 00056 the deferred constraint trigger change_log_head numbers a
-- transaction's change-log rows at commit, and since 00062/00068 it is
-- queued once per account, by the account's first row since it was last
-- numbered (queued true): each firing took its own account's head (an
-- INSERT … ON CONFLICT DO UPDATE on change_log_heads, held to the end of
-- the transaction), so a transaction took its accounts' heads in the order
-- their first rows were logged. A batch of polls of several accounts is
-- one ApplyPolls statement that logs in the statement's row order, not
-- the accounts': two such transactions sharing two accounts could take the
-- heads in opposite orders and deadlock (40P01). inTrackingTxs therefore
-- ran SELECT … FROM change_log_heads … ORDER BY account_id FOR UPDATE
-- before COMMIT: one statement a batch more, and it could not cover an
-- account's first change (no head row yet to lock: the head is made by
-- the numbering's INSERT, and an INSERT … ON CONFLICT of a key another
-- transaction inserted and has not committed waits for it, in the rows'
-- order again).
--
-- Now, on plain PostgreSQL (the trigger fires on change_log itself), the
-- first firing at commit numbers the rows of every account listed in
-- shipgraph.log_pending (and its own row's account), one account after
-- the other in account order, each as 00066 numbered its own: its
-- unnumbered rows (from the firing's own id on: the firings run in the
-- order they were queued, which is the rows' id order on one node's
-- sequence, and every unnumbered row of the transaction was logged at or
-- after an unfired queued row of its account), its head upserted (the
-- row's lock taken, or another transaction's uncommitted insert of the
-- key waited for), its rows' positions. It empties the list; every later
-- firing of a row its writer marked finds its account no longer pending
-- and returns without a statement. Any order of logging now takes the
-- heads in one order, existing heads or new ones. (One statement for all
-- the accounts, a CTE upserting the heads in order and a join setting the
-- positions, cost ×1.8 PostgreSQL CPU a transaction in
-- BenchmarkBatchNumbering, growing with the table: as if its join read
-- change_log sequentially; not examined further.)
--
-- A row written without the queued column (no writer of ours: tests, an
-- operator) did not mark its account in the list; its column's default is
-- now NULL rather than true, so its firing (WHEN queued IS NOT FALSE, as
-- before) is told from a marked row's and always numbers: its own account
-- and the listed ones, as the first firing does.
--
-- On a Citus cluster the trigger fires on a shard (change_log_<shard>) on
-- a worker, where a statement over several accounts would be a
-- distributed query started from a shard's trigger (00036): there the
-- function numbers NEW's account alone, as 00066's did, and a transaction
-- is one account's anyway (db.GroupsAccounts).
--
-- Savepoints: a savepoint rolled back takes its rows, their queued
-- firings and its change of the list with it (as since 00061); a firing
-- run inside a savepoint that is rolled back (SET CONSTRAINTS … IMMEDIATE)
-- is run again, and the list is as it was before it.

-- +goose Up
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

ALTER TABLE change_log ALTER COLUMN queued DROP DEFAULT;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_head() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    pending  text := current_setting('shipgraph.log_pending', true);
    accounts uuid[];
    acct uuid;
    ids  bigint[];
    n    bigint;
    head bigint;
BEGIN
    IF TG_TABLE_NAME = 'change_log' THEN
        -- Plain PostgreSQL. A marked row whose account is no longer
        -- pending: numbered by an earlier firing of the transaction.
        IF NEW.queued AND strpos(coalesce(pending, ''), NEW.account_id::text) = 0 THEN
            RETURN NULL;
        END IF;
        -- Every pending account (and NEW's), in account order.
        PERFORM set_config('shipgraph.log_pending', '', true);
        accounts := (SELECT array_agg(DISTINCT u ORDER BY u) FROM unnest(string_to_array(rtrim(pending), ' ')::uuid[] || NEW.account_id) u);
    ELSE
        -- A shard of a Citus cluster: NEW's account alone (00066's).
        PERFORM set_config('shipgraph.log_pending', replace(pending, NEW.account_id::text || ' ', ''), true);
        accounts := ARRAY[NEW.account_id];
    END IF;
    FOREACH acct IN ARRAY accounts LOOP
        -- The transaction's unnumbered rows of the account: from the
        -- firing's own row on (see above), by the primary key.
        SELECT array_agg(c.id ORDER BY c.id) INTO ids FROM change_log c
        WHERE c.account_id = acct AND c.id >= NEW.id AND c.pos IS NULL;
        n := coalesce(cardinality(ids), 0);
        CONTINUE WHEN n = 0;
        INSERT INTO change_log_heads AS h (account_id, pos) VALUES (acct, n)
        ON CONFLICT (account_id) DO UPDATE SET pos = h.pos + EXCLUDED.pos
        RETURNING h.pos INTO head;
        -- width_bucket(id, ids): how many of the sorted ids are <= id, the
        -- row's rank (1 … n).
        UPDATE change_log l SET pos = head - n + width_bucket(l.id, ids)
        WHERE l.account_id = acct AND l.id BETWEEN ids[1] AND ids[n] AND l.pos IS NULL;
    END LOOP;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

ALTER TABLE change_log ALTER COLUMN queued SET DEFAULT true;

-- 00066's.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_head() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids  bigint[];
    n    bigint;
    head bigint;
BEGIN
    -- Queued by the account's first row since it was last numbered (the
    -- trigger's WHEN): NEW. A row logged after this marks it again.
    PERFORM set_config('shipgraph.log_pending',
                       replace(current_setting('shipgraph.log_pending', true), NEW.account_id::text || ' ', ''), true);
    -- The transaction's unnumbered rows of the account: NEW and the ones
    -- written after it (larger ids), by the primary key.
    SELECT array_agg(c.id ORDER BY c.id) INTO ids FROM change_log c
    WHERE c.account_id = NEW.account_id AND c.id >= NEW.id AND c.pos IS NULL;
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
    WHERE l.account_id = NEW.account_id AND l.id BETWEEN ids[1] AND ids[n] AND l.pos IS NULL;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
