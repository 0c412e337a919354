-- A change-log position per change, the account's head row written twice
-- per transaction instead of once per change.
--
-- shipgraph_change_log_pos upserted the account's change_log_heads row for
-- every change logged. Updating one row many times in one transaction
-- grows that row's chain of versions (none can be pruned before the
-- transaction ends) and every update walks it: a transaction logging n
-- changes of one account cost O(n²) (a batch of tracking polls writing
-- 600 events took seconds in that function alone).
--
-- Now the first change of an account in a transaction takes the head row
-- (its lock, held until the transaction ends, as before: positions commit
-- in the order they were taken, dense) and keeps the next position in a
-- transaction-local setting; later changes count on from it; a deferred
-- trigger on change_log writes the last position taken to the head row at
-- commit (its first firing does; the rest find nothing to write). A
-- savepoint rolled back takes back its positions with its setting; a
-- SET CONSTRAINTS … IMMEDIATE mid-transaction writes the head early and
-- the next change starts again from it.

-- +goose Up
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
CREATE FUNCTION shipgraph_change_log_head() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE CONSTRAINT TRIGGER change_log_head AFTER INSERT ON change_log
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION shipgraph_change_log_head();

-- +goose Down
-- On Citus, dropping the trigger runs on the shards in parallel, and a
-- function command after a parallel operation in the same transaction is
-- refused; one connection per worker (sequential) lets both run. Plain
-- PostgreSQL keeps it as an unused placeholder setting.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
DROP TRIGGER change_log_head ON change_log;
DROP FUNCTION shipgraph_change_log_head();
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_change_log_pos(account uuid) RETURNS bigint LANGUAGE sql AS $$
    INSERT INTO change_log_heads AS h (account_id, pos) VALUES (account, 1)
    ON CONFLICT (account_id) DO UPDATE SET pos = h.pos + 1
    RETURNING h.pos
$$;
-- +goose StatementEnd
