-- Exact unfiltered list totals without counting: every /v2 list answers
-- meta.total, and count(*) over an account's rows grows with the account
-- (tens of ms at a million shipments). Statement-level triggers keep one
-- row per account and list, by the number of rows each statement inserted
-- or deleted; a filtered total is still counted by its query.
--
-- Writers of one account serialise on its counter row until commit (the
-- cost of exactness); a statement touches the counters of its accounts in
-- account order, so two statements never lock them in opposite orders.

-- +goose Up
CREATE TABLE list_counts (
    account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
    list       text NOT NULL,
    n          bigint NOT NULL CHECK (n >= 0),
    PRIMARY KEY (account_id, list)
);

-- +goose StatementBegin
CREATE FUNCTION list_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO list_counts (account_id, list, n)
    SELECT account_id, TG_ARGV[0], count(*) FROM new_rows GROUP BY account_id ORDER BY account_id
    ON CONFLICT (account_id, list) DO UPDATE SET n = list_counts.n + EXCLUDED.n;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION list_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE list_counts c SET n = c.n - d.n
    FROM (SELECT account_id, count(*) AS n FROM old_rows GROUP BY account_id ORDER BY account_id) d
    WHERE c.account_id = d.account_id AND c.list = TG_ARGV[0];
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION list_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM list_counts WHERE list = TG_ARGV[0];
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- A row that changes account (nothing does today) moves between counters;
-- row-level, because transition tables cannot watch one column, and an
-- UPDATE trigger over every update would copy every updated row.
-- +goose StatementBegin
CREATE FUNCTION list_counts_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE list_counts SET n = n - 1 WHERE account_id = OLD.account_id AND list = TG_ARGV[0];
    INSERT INTO list_counts (account_id, list, n) VALUES (NEW.account_id, TG_ARGV[0], 1)
    ON CONFLICT (account_id, list) DO UPDATE SET n = list_counts.n + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER shipments_count_ins AFTER INSERT ON shipments REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_inserted('shipments');
CREATE TRIGGER shipments_count_del AFTER DELETE ON shipments REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_deleted('shipments');
CREATE TRIGGER shipments_count_trunc AFTER TRUNCATE ON shipments
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_truncated('shipments');
CREATE TRIGGER shipments_count_move AFTER UPDATE OF account_id ON shipments
    FOR EACH ROW WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id) EXECUTE FUNCTION list_counts_moved('shipments');

CREATE TRIGGER containers_count_ins AFTER INSERT ON containers REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_inserted('containers');
CREATE TRIGGER containers_count_del AFTER DELETE ON containers REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_deleted('containers');
CREATE TRIGGER containers_count_trunc AFTER TRUNCATE ON containers
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_truncated('containers');
CREATE TRIGGER containers_count_move AFTER UPDATE OF account_id ON containers
    FOR EACH ROW WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id) EXECUTE FUNCTION list_counts_moved('containers');

CREATE TRIGGER documents_count_ins AFTER INSERT ON documents REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_inserted('documents');
CREATE TRIGGER documents_count_del AFTER DELETE ON documents REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_deleted('documents');
CREATE TRIGGER documents_count_trunc AFTER TRUNCATE ON documents
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_truncated('documents');
CREATE TRIGGER documents_count_move AFTER UPDATE OF account_id ON documents
    FOR EACH ROW WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id) EXECUTE FUNCTION list_counts_moved('documents');

-- The triggers exist (and hold their tables' locks) before the backfill,
-- so no row is missed or counted twice.
INSERT INTO list_counts (account_id, list, n)
SELECT account_id, 'shipments', count(*) FROM shipments GROUP BY account_id
UNION ALL SELECT account_id, 'containers', count(*) FROM containers GROUP BY account_id
UNION ALL SELECT account_id, 'documents', count(*) FROM documents GROUP BY account_id;

-- +goose Down
DROP TRIGGER shipments_count_ins ON shipments;
DROP TRIGGER shipments_count_del ON shipments;
DROP TRIGGER shipments_count_trunc ON shipments;
DROP TRIGGER shipments_count_move ON shipments;
DROP TRIGGER containers_count_ins ON containers;
DROP TRIGGER containers_count_del ON containers;
DROP TRIGGER containers_count_trunc ON containers;
DROP TRIGGER containers_count_move ON containers;
DROP TRIGGER documents_count_ins ON documents;
DROP TRIGGER documents_count_del ON documents;
DROP TRIGGER documents_count_trunc ON documents;
DROP TRIGGER documents_count_move ON documents;
DROP FUNCTION list_counts_inserted(), list_counts_deleted(), list_counts_truncated(), list_counts_moved();
DROP TABLE list_counts;
