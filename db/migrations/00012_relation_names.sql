-- Relationship names for tools that build an API from the database's
-- catalogue (PostGraphile and its smart tags, which the project's peer
-- benchmark ../shared/bench/compare.sh runs over this same database).
--
-- Since 00010 every foreign key between account tables is composite,
-- (account_id, shipment_id) rather than (shipment_id), and such tools name
-- a composite key's relationship by all its columns
-- (shipmentByAccountIdAndShipmentId). These comments keep the names a
-- single-column key had: the referencing column without _id forward
-- (shipment), the referencing table backward (containers). Shipgraph does
-- not read them. A later migration adding a composite key names it the
-- same way (COMMENT ON CONSTRAINT … IS '@fieldName …\n@foreignFieldName …').

-- +goose Up
-- +goose StatementBegin
DO $$
DECLARE
    c record;
BEGIN
    FOR c IN
        SELECT con.conname, cl.relname AS tbl, a.attname AS col
        FROM pg_constraint con
        JOIN pg_class cl ON cl.oid = con.conrelid
        JOIN pg_namespace ns ON ns.oid = cl.relnamespace
        JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = con.conkey[array_length(con.conkey, 1)]
        WHERE con.contype = 'f' AND ns.nspname = current_schema() AND array_length(con.conkey, 1) > 1
    LOOP
        EXECUTE format('COMMENT ON CONSTRAINT %I ON %I IS %L', c.conname, c.tbl,
            '@fieldName ' || lower(left(c.col, 1)) || substr(replace(initcap(regexp_replace(c.col, '_id$', '')), '_', ''), 2)
            || E'\n@foreignFieldName ' || lower(left(c.tbl, 1)) || substr(replace(initcap(c.tbl), '_', ''), 2));
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    c record;
BEGIN
    FOR c IN
        SELECT con.conname, cl.relname AS tbl
        FROM pg_constraint con
        JOIN pg_class cl ON cl.oid = con.conrelid
        JOIN pg_namespace ns ON ns.oid = cl.relnamespace
        WHERE con.contype = 'f' AND ns.nspname = current_schema() AND array_length(con.conkey, 1) > 1
    LOOP
        EXECUTE format('COMMENT ON CONSTRAINT %I ON %I IS NULL', c.conname, c.tbl);
    END LOOP;
END
$$;
-- +goose StatementEnd
