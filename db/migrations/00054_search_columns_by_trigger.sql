-- The search columns (search_doc, search_tsv of shipments, containers and
-- tracking requests; 00018) kept by a BEFORE trigger instead of GENERATED.
--
-- PostgreSQL 15 recomputes a stored generated column on every UPDATE of
-- its row, whatever the statement changed: a tracking poll's milestones,
-- statuses and poll times folded every searched text again (unaccent, ICU
-- lower-casing, a regular expression; about 15 folds a poll). Now the
-- columns are ordinary ones, written by a row trigger that fires on INSERT
-- and on an UPDATE OF an input column, and then only when one of the
-- inputs changed (WHEN): the same expression, so the same values
-- (db/search_columns_test.go compares them with it).
--
-- DROP EXPRESSION keeps the stored values and the indexes (no rewrite) on
-- one PostgreSQL.
-- The triggers touch only their own row: they run on a Citus shard as they
-- do on one node.

-- +goose Up
-- On Citus (a cluster already distributed when it migrates), DDL on a
-- distributed table runs on its shards in parallel, and a function
-- command after a parallel operation in the same transaction is refused;
-- one connection per worker (sequential) lets both run (as 00041's down).
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
-- Citus refuses DROP EXPRESSION on a distributed table: there the columns
-- are dropped and added again as plain ones, with the indexes built on
-- them, and filled below once the triggers exist (a rewrite, as 00018's
-- ADD was).
-- +goose StatementBegin
DO $$
DECLARE
    tb          text;
    distributed boolean;
BEGIN
    FOREACH tb IN ARRAY ARRAY['shipments', 'containers', 'tracking_requests'] LOOP
        distributed := false;
        IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
            EXECUTE 'SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition WHERE logicalrelid = $1::regclass)'
                INTO distributed USING tb;
        END IF;
        IF distributed THEN
            EXECUTE format('ALTER TABLE %I DROP COLUMN search_doc, DROP COLUMN search_tsv', tb);
            EXECUTE format('ALTER TABLE %I ADD COLUMN search_doc text, ADD COLUMN search_tsv tsvector', tb);
            EXECUTE format('CREATE INDEX %I ON %I USING gin (account_id, search_doc gin_trgm_ops)', tb || '_search_trgm_idx', tb);
            EXECUTE format('CREATE INDEX %I ON %I USING gin (account_id, search_tsv)', tb || '_search_tsv_idx', tb);
            EXECUTE format('CREATE INDEX %I ON %I (account_id, created_at, id) INCLUDE (search_doc%s)', tb || '_search_recent_idx', tb,
                CASE WHEN tb = 'tracking_requests' THEN ', request_number' ELSE '' END);
        ELSE
            EXECUTE format('ALTER TABLE %I ALTER COLUMN search_doc DROP EXPRESSION, ALTER COLUMN search_tsv DROP EXPRESSION', tb);
        END IF;
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION shipments_search_columns() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_doc := shipgraph_search_doc(ARRAY[NEW.bill_of_lading_number, NEW.normalized_number, NEW.customer_name,
        NEW.port_of_lading_name, NEW.port_of_discharge_name, NEW.destination_name, NEW.pod_vessel_name]
        || coalesce(NEW.ref_numbers, '{}') || NEW.tags);
    NEW.search_tsv := to_tsvector('simple'::regconfig, NEW.search_doc);
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION containers_search_columns() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_doc := shipgraph_search_doc(ARRAY[NEW.number, NEW.seal_number] || NEW.ref_numbers);
    NEW.search_tsv := to_tsvector('simple'::regconfig, NEW.search_doc);
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION tracking_requests_search_columns() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_doc := shipgraph_search_doc(ARRAY[NEW.request_number] || NEW.ref_numbers || NEW.tags);
    NEW.search_tsv := to_tsvector('simple'::regconfig, NEW.search_doc);
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- The UPDATE triggers also fire when a statement sets search_doc or
-- search_tsv themselves, so that no writer can store other values.
CREATE TRIGGER shipments_search_ins BEFORE INSERT ON shipments
    FOR EACH ROW EXECUTE FUNCTION shipments_search_columns();
CREATE TRIGGER shipments_search_upd BEFORE UPDATE OF bill_of_lading_number, normalized_number, customer_name,
    port_of_lading_name, port_of_discharge_name, destination_name, pod_vessel_name, ref_numbers, tags, search_doc, search_tsv
    ON shipments FOR EACH ROW
    WHEN ((OLD.bill_of_lading_number, OLD.normalized_number, OLD.customer_name, OLD.port_of_lading_name,
           OLD.port_of_discharge_name, OLD.destination_name, OLD.pod_vessel_name, OLD.ref_numbers, OLD.tags,
           OLD.search_doc, OLD.search_tsv)
          IS DISTINCT FROM
          (NEW.bill_of_lading_number, NEW.normalized_number, NEW.customer_name, NEW.port_of_lading_name,
           NEW.port_of_discharge_name, NEW.destination_name, NEW.pod_vessel_name, NEW.ref_numbers, NEW.tags,
           NEW.search_doc, NEW.search_tsv))
    EXECUTE FUNCTION shipments_search_columns();

CREATE TRIGGER containers_search_ins BEFORE INSERT ON containers
    FOR EACH ROW EXECUTE FUNCTION containers_search_columns();
CREATE TRIGGER containers_search_upd BEFORE UPDATE OF number, seal_number, ref_numbers, search_doc, search_tsv
    ON containers FOR EACH ROW
    WHEN ((OLD.number, OLD.seal_number, OLD.ref_numbers, OLD.search_doc, OLD.search_tsv)
          IS DISTINCT FROM (NEW.number, NEW.seal_number, NEW.ref_numbers, NEW.search_doc, NEW.search_tsv))
    EXECUTE FUNCTION containers_search_columns();

CREATE TRIGGER tracking_requests_search_ins BEFORE INSERT ON tracking_requests
    FOR EACH ROW EXECUTE FUNCTION tracking_requests_search_columns();
CREATE TRIGGER tracking_requests_search_upd BEFORE UPDATE OF request_number, ref_numbers, tags, search_doc, search_tsv
    ON tracking_requests FOR EACH ROW
    WHEN ((OLD.request_number, OLD.ref_numbers, OLD.tags, OLD.search_doc, OLD.search_tsv)
          IS DISTINCT FROM (NEW.request_number, NEW.ref_numbers, NEW.tags, NEW.search_doc, NEW.search_tsv))
    EXECUTE FUNCTION tracking_requests_search_columns();

-- The columns added again above (Citus) are empty: an update that sets
-- them fires the triggers, which fill them. Elsewhere no row is NULL there
-- (the expression gave '' at least): a scan that writes nothing.
UPDATE shipments SET search_doc = '' WHERE search_doc IS NULL;
UPDATE containers SET search_doc = '' WHERE search_doc IS NULL;
UPDATE tracking_requests SET search_doc = '' WHERE search_doc IS NULL;

-- +goose Down
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
DROP TRIGGER shipments_search_ins ON shipments;
DROP TRIGGER shipments_search_upd ON shipments;
DROP TRIGGER containers_search_ins ON containers;
DROP TRIGGER containers_search_upd ON containers;
DROP TRIGGER tracking_requests_search_ins ON tracking_requests;
DROP TRIGGER tracking_requests_search_upd ON tracking_requests;
DROP FUNCTION shipments_search_columns();
DROP FUNCTION containers_search_columns();
DROP FUNCTION tracking_requests_search_columns();
-- PostgreSQL 15 cannot give a column its expression back: the columns are
-- added again as 00018 made them, with the indexes 00022 built on them
-- (dropped with the columns).
ALTER TABLE shipments DROP COLUMN search_doc, DROP COLUMN search_tsv;
ALTER TABLE containers DROP COLUMN search_doc, DROP COLUMN search_tsv;
ALTER TABLE tracking_requests DROP COLUMN search_doc, DROP COLUMN search_tsv;
ALTER TABLE shipments
    ADD COLUMN search_doc text GENERATED ALWAYS AS (shipgraph_search_doc(
        ARRAY[bill_of_lading_number, normalized_number, customer_name, port_of_lading_name, port_of_discharge_name,
              destination_name, pod_vessel_name] || coalesce(ref_numbers, '{}') || tags)) STORED,
    ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, shipgraph_search_doc(
        ARRAY[bill_of_lading_number, normalized_number, customer_name, port_of_lading_name, port_of_discharge_name,
              destination_name, pod_vessel_name] || coalesce(ref_numbers, '{}') || tags))) STORED;
ALTER TABLE containers
    ADD COLUMN search_doc text GENERATED ALWAYS AS (shipgraph_search_doc(ARRAY[number, seal_number] || ref_numbers)) STORED,
    ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig,
        shipgraph_search_doc(ARRAY[number, seal_number] || ref_numbers))) STORED;
ALTER TABLE tracking_requests
    ADD COLUMN search_doc text GENERATED ALWAYS AS (shipgraph_search_doc(ARRAY[request_number] || ref_numbers || tags)) STORED,
    ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig,
        shipgraph_search_doc(ARRAY[request_number] || ref_numbers || tags))) STORED;
CREATE INDEX shipments_search_trgm_idx ON shipments USING gin (account_id, search_doc gin_trgm_ops);
CREATE INDEX shipments_search_tsv_idx ON shipments USING gin (account_id, search_tsv);
CREATE INDEX containers_search_trgm_idx ON containers USING gin (account_id, search_doc gin_trgm_ops);
CREATE INDEX containers_search_tsv_idx ON containers USING gin (account_id, search_tsv);
CREATE INDEX tracking_requests_search_trgm_idx ON tracking_requests USING gin (account_id, search_doc gin_trgm_ops);
CREATE INDEX tracking_requests_search_tsv_idx ON tracking_requests USING gin (account_id, search_tsv);
CREATE INDEX shipments_search_recent_idx ON shipments (account_id, created_at, id) INCLUDE (search_doc);
CREATE INDEX containers_search_recent_idx ON containers (account_id, created_at, id) INCLUDE (search_doc);
CREATE INDEX tracking_requests_search_recent_idx ON tracking_requests (account_id, created_at, id)
    INCLUDE (search_doc, request_number);
