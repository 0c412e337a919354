-- The search tokenizer (shipgraph_fold, 00018) and its two callers
-- (shipgraph_search_doc, shipgraph_fold_all) as PL/pgSQL functions with the
-- same expression, instead of SQL functions.
--
-- shipgraph_fold calls unaccent, which is STABLE, from an IMMUTABLE body,
-- so PostgreSQL never inlines it (nor shipgraph_fold_all, whose body is a
-- subquery): every call ran the SQL function executor (fmgr_sql), which
-- reads the function's body and plans it once per calling expression and
-- statement (each index expression of a written row, each search-columns
-- trigger's transaction) and starts an executor for every call. A first
-- poll folds about 11 times (its containers' and shipment's search
-- columns, the search_exact indexes of containers, shipments and its
-- request): fmgr_sql was 3.1 % of PostgreSQL's CPU in
-- BenchmarkPollThroughput's first polls (docs/tracking.md, "Where a first
-- poll's PostgreSQL CPU goes at stop 46"). A PL/pgSQL function keeps its
-- compiled body and its expression's plan for the backend's life and
-- evaluates a one-expression body without an executor.
--
-- Same values: the same expression, character for character (the indexes
-- on shipgraph_fold and shipgraph_fold_all stay valid; db/search_columns_test.go
-- and TestFoldFunctionsUnchanged compare them). No search_path can change
-- them, as 00018's SQL-standard bodies promised: every function and the
-- dictionary are named with their schema, and shipgraph_search_doc and
-- shipgraph_fold_all do not call shipgraph_fold by name (a restore runs
-- with an empty search_path and builds the indexes on them).

-- +goose Up
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_fold(t text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
BEGIN
    RETURN pg_catalog.btrim(pg_catalog.regexp_replace(
        pg_catalog.lower(public.unaccent('public.unaccent'::pg_catalog.regdictionary, t) COLLATE pg_catalog."und-x-icu"),
        '[^[:alnum:]]+', ' ', 'g'));
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_search_doc(parts text[]) RETURNS text
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN coalesce(pg_catalog.btrim(pg_catalog.regexp_replace(
        pg_catalog.lower(public.unaccent('public.unaccent'::pg_catalog.regdictionary,
                                         pg_catalog.array_to_string(parts, ' ')) COLLATE pg_catalog."und-x-icu"),
        '[^[:alnum:]]+', ' ', 'g')), '');
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION shipgraph_fold_all(parts text[]) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
DECLARE
    p   text;
    out text[] := '{}';
BEGIN
    FOREACH p IN ARRAY parts LOOP
        IF p IS NOT NULL THEN
            out := pg_catalog.array_append(out, pg_catalog.btrim(pg_catalog.regexp_replace(
                pg_catalog.lower(public.unaccent('public.unaccent'::pg_catalog.regdictionary, p) COLLATE pg_catalog."und-x-icu"),
                '[^[:alnum:]]+', ' ', 'g')));
        END IF;
    END LOOP;
    RETURN out;
END
$$;
-- +goose StatementEnd

-- +goose Down
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- 00018's and 00022's.
CREATE OR REPLACE FUNCTION shipgraph_fold(t text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN btrim(regexp_replace(lower(public.unaccent('public.unaccent'::regdictionary, t) COLLATE "und-x-icu"),
        '[^[:alnum:]]+', ' ', 'g'));

CREATE OR REPLACE FUNCTION shipgraph_search_doc(parts text[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN coalesce(shipgraph_fold(array_to_string(parts, ' ')), '');

CREATE OR REPLACE FUNCTION shipgraph_fold_all(parts text[]) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN ARRAY(SELECT shipgraph_fold(p) FROM unnest(parts) AS p WHERE p IS NOT NULL);
