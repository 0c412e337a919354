-- +goose NO TRANSACTION
-- Search at a million shipments (issue 28; db/search.go has the reads).
--
-- The account inside the text indexes: btree_gin lets a GIN index lead
-- with account_id, so a search's bitmap holds the account's matches alone.
-- With the text indexes of 00018 the planner, which cannot see how rare a
-- searched number is (the query is folded in the statement), ANDed their
-- bitmap with one of every row of the account (two thirds of a million
-- entries: most of a number's 90 ms). The new indexes replace those of
-- 00018, one for one.
--
-- The newest records with their searched text: a search reads an
-- account's newest records first (a common word finds its 25 there), as
-- an index-only scan of these, which hold the text beside the key
-- (tracking requests their number too, to leave out a shipment's
-- duplicate): a few index pages instead of a heap page per record.
--
-- Exact numbers: a search puts the records whose number (or, for
-- shipments, a reference number) is the query itself first. Once a common
-- word reads only the newest matches, those records are looked up by
-- these indexes, whatever their age: shipgraph_fold_all folds each
-- element of an array as shipgraph_fold does.
--
-- Building them reads the three tables once: minutes at a million
-- shipments (9 min 52 s on the loaded 2-core machine). So the migration
-- runs outside a transaction and builds CONCURRENTLY: writes go on while
-- it runs, and search keeps answering from the old indexes until the new
-- ones, built under a temporary name, replace them (drop, then rename).
-- Every step may be re-run (IF NOT EXISTS / IF EXISTS / OR REPLACE): a
-- migration stopped half way is finished by the next start. An index left
-- INVALID by a failed concurrent build is dropped before it is rebuilt.

-- +goose Up
CREATE EXTENSION IF NOT EXISTS btree_gin SCHEMA public;

CREATE OR REPLACE FUNCTION shipgraph_fold_all(parts text[]) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN ARRAY(SELECT shipgraph_fold(p) FROM unnest(parts) AS p WHERE p IS NOT NULL);

-- An index a failed concurrent build left INVALID would satisfy IF NOT
-- EXISTS below without ever serving a query: drop such leftovers first.
-- +goose StatementBegin
DO $$
DECLARE ix regclass;
BEGIN
    FOR ix IN SELECT i.indexrelid::regclass FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE NOT i.indisvalid AND c.relname LIKE '%\_search\_%\_idx%' LOOP
        EXECUTE format('DROP INDEX %s', ix);
    END LOOP;
END $$;
-- +goose StatementEnd

CREATE INDEX CONCURRENTLY IF NOT EXISTS shipments_search_trgm_acct_idx ON shipments USING gin (account_id, search_doc gin_trgm_ops);
CREATE INDEX CONCURRENTLY IF NOT EXISTS shipments_search_tsv_acct_idx ON shipments USING gin (account_id, search_tsv);
DROP INDEX CONCURRENTLY IF EXISTS shipments_search_trgm_idx;
DROP INDEX CONCURRENTLY IF EXISTS shipments_search_tsv_idx;
ALTER INDEX IF EXISTS shipments_search_trgm_acct_idx RENAME TO shipments_search_trgm_idx;
ALTER INDEX IF EXISTS shipments_search_tsv_acct_idx RENAME TO shipments_search_tsv_idx;

CREATE INDEX CONCURRENTLY IF NOT EXISTS containers_search_trgm_acct_idx ON containers USING gin (account_id, search_doc gin_trgm_ops);
CREATE INDEX CONCURRENTLY IF NOT EXISTS containers_search_tsv_acct_idx ON containers USING gin (account_id, search_tsv);
DROP INDEX CONCURRENTLY IF EXISTS containers_search_trgm_idx;
DROP INDEX CONCURRENTLY IF EXISTS containers_search_tsv_idx;
ALTER INDEX IF EXISTS containers_search_trgm_acct_idx RENAME TO containers_search_trgm_idx;
ALTER INDEX IF EXISTS containers_search_tsv_acct_idx RENAME TO containers_search_tsv_idx;

CREATE INDEX CONCURRENTLY IF NOT EXISTS tracking_requests_search_trgm_acct_idx ON tracking_requests USING gin (account_id, search_doc gin_trgm_ops);
CREATE INDEX CONCURRENTLY IF NOT EXISTS tracking_requests_search_tsv_acct_idx ON tracking_requests USING gin (account_id, search_tsv);
DROP INDEX CONCURRENTLY IF EXISTS tracking_requests_search_trgm_idx;
DROP INDEX CONCURRENTLY IF EXISTS tracking_requests_search_tsv_idx;
ALTER INDEX IF EXISTS tracking_requests_search_trgm_acct_idx RENAME TO tracking_requests_search_trgm_idx;
ALTER INDEX IF EXISTS tracking_requests_search_tsv_acct_idx RENAME TO tracking_requests_search_tsv_idx;

CREATE INDEX CONCURRENTLY IF NOT EXISTS shipments_search_recent_idx ON shipments (account_id, created_at, id) INCLUDE (search_doc);
CREATE INDEX CONCURRENTLY IF NOT EXISTS containers_search_recent_idx ON containers (account_id, created_at, id) INCLUDE (search_doc);
CREATE INDEX CONCURRENTLY IF NOT EXISTS tracking_requests_search_recent_idx ON tracking_requests (account_id, created_at, id)
    INCLUDE (search_doc, request_number);

CREATE INDEX CONCURRENTLY IF NOT EXISTS shipments_search_exact_idx ON shipments USING gin
    (account_id, shipgraph_fold_all(ARRAY[bill_of_lading_number] || coalesce(ref_numbers, '{}')));
CREATE INDEX CONCURRENTLY IF NOT EXISTS containers_search_exact_idx ON containers (account_id, shipgraph_fold(number));
CREATE INDEX CONCURRENTLY IF NOT EXISTS tracking_requests_search_exact_idx ON tracking_requests (account_id, shipgraph_fold(request_number));

-- +goose Down
DROP INDEX shipments_search_exact_idx, containers_search_exact_idx, tracking_requests_search_exact_idx;
DROP INDEX shipments_search_recent_idx, containers_search_recent_idx, tracking_requests_search_recent_idx;
DROP INDEX shipments_search_trgm_idx, shipments_search_tsv_idx, containers_search_trgm_idx,
    containers_search_tsv_idx, tracking_requests_search_trgm_idx, tracking_requests_search_tsv_idx;
CREATE INDEX shipments_search_trgm_idx ON shipments USING gin (search_doc gin_trgm_ops);
CREATE INDEX shipments_search_tsv_idx ON shipments USING gin (search_tsv);
CREATE INDEX containers_search_trgm_idx ON containers USING gin (search_doc gin_trgm_ops);
CREATE INDEX containers_search_tsv_idx ON containers USING gin (search_tsv);
CREATE INDEX tracking_requests_search_trgm_idx ON tracking_requests USING gin (search_doc gin_trgm_ops);
CREATE INDEX tracking_requests_search_tsv_idx ON tracking_requests USING gin (search_tsv);
DROP FUNCTION shipgraph_fold_all(text[]);
