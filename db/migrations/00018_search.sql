-- Search (issue 28, point 1): GET /v2/search and GraphQL search(query:)
-- over the account's shipments, containers and tracking requests, and the
-- file-name filter of documents, through ONE tokenizer.
--
-- shipgraph_fold(text) is that tokenizer: accents folded by unaccent
-- (Müller → muller, Straße → strasse), lower-cased and split on anything but
-- letters and digits, Unicode-aware. The database runs with --locale=C, in
-- which lower() and the regex class [:alnum:] only know ASCII: both run under
-- the ICU root collation ("und-x-icu", in every PostgreSQL built with ICU, as
-- Debian's and the official images are). unaccent is STABLE because its
-- dictionary could change; with the dictionary named explicitly the wrapper is
-- IMMUTABLE (the usual practice), so it can be indexed. Its body is SQL
-- standard (RETURN), bound when created, so no search_path can change it.
--
-- shipgraph_search_doc(text[]) is the searched text of a record: its parts
-- folded and joined. Each table gets a trigram index on it (infix matches of
-- numbers: "1234567" finds MEDUA1234567) and a full-text index (every word
-- of the query as a prefix, in any order: "sodor steam" finds "Sodor
-- Steamworks"). The query side folds the input with the same function
-- (db/search.go).
--
-- The documents' file_name_tsv (ASCII-only: 'ü' and "'" were dropped) is
-- rebuilt from shipgraph_fold. pg_trgm and unaccent ship with PostgreSQL's
-- contrib and are trusted extensions: a database owner may create them.

-- +goose Up
CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public;

CREATE FUNCTION shipgraph_fold(t text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN btrim(regexp_replace(lower(public.unaccent('public.unaccent'::regdictionary, t) COLLATE "und-x-icu"),
        '[^[:alnum:]]+', ' ', 'g'));

CREATE FUNCTION shipgraph_search_doc(parts text[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN coalesce(shipgraph_fold(array_to_string(parts, ' ')), '');

-- shipgraph_tsquery(text) is a query's words, each a prefix, all required;
-- NULL when the input has no word (so it matches nothing). The words hold
-- only letters and digits, and are quoted besides: no tsquery syntax comes
-- from the input.
CREATE FUNCTION shipgraph_tsquery(q text) RETURNS tsquery
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN (SELECT to_tsquery('simple'::regconfig, string_agg(quote_literal(w) || ':*', ' & '))
        FROM unnest(string_to_array(shipgraph_fold(q), ' ')) AS w WHERE w <> '');

-- The searched text of each record is stored (search_doc, a generated
-- column) with its tsvector (search_tsv): folding is not cheap (unaccent,
-- ICU lower-casing, a regular expression), and a common word matches many
-- rows, each of which the bitmap heap scan re-checks; on a stored column
-- that check is a LIKE on a short text. Adding them rewrites the three
-- tables once (minutes at a million shipments, under an exclusive lock).
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
CREATE INDEX shipments_search_trgm_idx ON shipments USING gin (search_doc gin_trgm_ops);
CREATE INDEX shipments_search_tsv_idx ON shipments USING gin (search_tsv);
CREATE INDEX containers_search_trgm_idx ON containers USING gin (search_doc gin_trgm_ops);
CREATE INDEX containers_search_tsv_idx ON containers USING gin (search_tsv);
CREATE INDEX tracking_requests_search_trgm_idx ON tracking_requests USING gin (search_doc gin_trgm_ops);
CREATE INDEX tracking_requests_search_tsv_idx ON tracking_requests USING gin (search_tsv);

ALTER TABLE documents DROP COLUMN file_name_tsv;
ALTER TABLE documents ADD COLUMN file_name_tsv tsvector GENERATED ALWAYS AS (
    to_tsvector('simple'::regconfig, coalesce(shipgraph_fold(file_name), ''))) STORED;
CREATE INDEX documents_file_name_tsv_idx ON documents USING gin (file_name_tsv);

-- +goose Down
ALTER TABLE documents DROP COLUMN file_name_tsv;
ALTER TABLE documents ADD COLUMN file_name_tsv tsvector GENERATED ALWAYS AS (
    to_tsvector('simple', regexp_replace(lower(file_name), '[^a-z0-9]+', ' ', 'g'))) STORED;
CREATE INDEX documents_file_name_tsv_idx ON documents USING gin (file_name_tsv);
ALTER TABLE tracking_requests DROP COLUMN search_doc, DROP COLUMN search_tsv;
ALTER TABLE containers DROP COLUMN search_doc, DROP COLUMN search_tsv;
ALTER TABLE shipments DROP COLUMN search_doc, DROP COLUMN search_tsv;
DROP FUNCTION shipgraph_search_doc(text[]);
DROP FUNCTION shipgraph_tsquery(text);
DROP FUNCTION shipgraph_fold(text);
