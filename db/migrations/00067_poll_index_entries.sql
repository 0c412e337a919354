-- +goose NO TRANSACTION
-- The index entries a tracking poll writes outside the change log
-- (issue 37 point 1; docs/tracking.md, "The index entries a first poll
-- writes").
--
-- A first poll inserts a shipment (26 indexes), its containers (17 each)
-- and updates its request (17 indexes: the update sets next_poll_at and
-- updated_at, both indexed and read, so it is never a HOT update and adds
-- an entry to every index of the table, every poll). Each index below had
-- no reader that another index does not serve as well:
--
-- Dropped:
-- - shipments_account_created_idx, containers_account_created_idx,
--   tracking_requests_account_created_idx: (account_id, created_at, id),
--   the same key as the table's *_search_recent_idx (00022), which holds
--   the searched text beside it (INCLUDE). Every reader of the one (the
--   lists' default order, created_at, and the count's window) reads the
--   other in the same order with the same conditions.
-- - shipments_account_scac_idx (account_id, shipping_line_scac): a left
--   prefix of the unique key shipments_account_line_number_key (account_id,
--   shipping_line_scac, upper(normalized_number)), no predicate on either;
--   the list's carrier filter reads the unique key's range instead.
-- - tracking_requests_id_idx (id): every reader of a request names its
--   account (the primary key (account_id, id)); nothing looks a request up
--   by its id alone (the same reason 00055 dropped transport_events (id)).
-- - transport_events_account_container_idx (account_id, container_id,
--   event_at, id): 32 entries a first poll. Every reader names containers
--   (the journeys and their ids, a container's ids in its row, the poll's
--   check of an estimate already held) and orders by event_at NULLS LAST,
--   created_at, id, which this index's order does not give either: each
--   sorted a container's few tens of events after reading them by the
--   (account_id, container_id) prefix, which the unique key (account_id,
--   container_id, scac, carrier_event_id) has too. The status history reads
--   the whole account (a table scan either way). A container's delete
--   finds its events by the unique key as well.
--
-- Made partial (WHERE the column IS NOT NULL): the indexes that serve only
-- a foreign key's ON DELETE SET NULL (a terminal, metro area or user
-- deleted) on columns a poll never sets. An entry per NULL served nothing:
-- the key's action looks rows up by `column = value` (a strict operator,
-- which implies IS NOT NULL, so the planner uses the partial index); the
-- stats recount of a terminal moved (stats_recount, 00036) by
-- `pod_terminal_id = ANY(terminals)`, the same.
-- - shipments: destination_metro_area_id, destination_terminal_id,
--   destination_rail_terminal_id, (account_id, line_tracking_stopped_by_user_id);
-- - containers: pickup_facility_id.
--
-- Kept (each has a reader no other index serves as well): every primary
-- and unique key; the lists' sorts and filters (eta, bill of lading, number,
-- last free day, status, holds, tags, reference numbers, customer); the
-- search indexes; the grouped counts' *_account_stats_idx; the recount's
-- shipments (port_of_discharge_id) and containers (pod_terminal_id); the
-- schedule's tracking_requests_due_idx (the due accounts, across accounts)
-- and tracking_requests_account_due_idx (the claim).
--
-- Dropping is instant; a partial index is built CONCURRENTLY under a
-- temporary name, then replaces the old one (drop, rename), so writes go on
-- while it is built (00022's way). Every step may be re-run.

-- +goose Up
DROP INDEX CONCURRENTLY IF EXISTS shipments_account_created_idx;
DROP INDEX CONCURRENTLY IF EXISTS containers_account_created_idx;
DROP INDEX CONCURRENTLY IF EXISTS tracking_requests_account_created_idx;
DROP INDEX CONCURRENTLY IF EXISTS shipments_account_scac_idx;
DROP INDEX CONCURRENTLY IF EXISTS tracking_requests_id_idx;
DROP INDEX CONCURRENTLY IF EXISTS transport_events_account_container_idx;

-- An index a failed concurrent build left INVALID would satisfy IF NOT
-- EXISTS below without ever serving a query: drop such leftovers first.
-- +goose StatementBegin
DO $$
DECLARE ix regclass;
BEGIN
    FOR ix IN SELECT i.indexrelid::regclass FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE NOT i.indisvalid AND c.relname LIKE '%\_nn' LOOP
        EXECUTE format('DROP INDEX %s', ix);
    END LOOP;
END $$;
-- +goose StatementEnd

CREATE INDEX CONCURRENTLY IF NOT EXISTS shipments_destination_metro_area_id_nn ON shipments (destination_metro_area_id)
    WHERE destination_metro_area_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS shipments_destination_metro_area_id_idx;
ALTER INDEX IF EXISTS shipments_destination_metro_area_id_nn RENAME TO shipments_destination_metro_area_id_idx;

CREATE INDEX CONCURRENTLY IF NOT EXISTS shipments_destination_terminal_id_nn ON shipments (destination_terminal_id)
    WHERE destination_terminal_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS shipments_destination_terminal_id_idx;
ALTER INDEX IF EXISTS shipments_destination_terminal_id_nn RENAME TO shipments_destination_terminal_id_idx;

CREATE INDEX CONCURRENTLY IF NOT EXISTS shipments_destination_rail_terminal_id_nn ON shipments (destination_rail_terminal_id)
    WHERE destination_rail_terminal_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS shipments_destination_rail_terminal_id_idx;
ALTER INDEX IF EXISTS shipments_destination_rail_terminal_id_nn RENAME TO shipments_destination_rail_terminal_id_idx;

CREATE INDEX CONCURRENTLY IF NOT EXISTS shipments_line_tracking_stopped_by_user_id_nn
    ON shipments (account_id, line_tracking_stopped_by_user_id) WHERE line_tracking_stopped_by_user_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS shipments_line_tracking_stopped_by_user_id_idx;
ALTER INDEX IF EXISTS shipments_line_tracking_stopped_by_user_id_nn RENAME TO shipments_line_tracking_stopped_by_user_id_idx;

CREATE INDEX CONCURRENTLY IF NOT EXISTS containers_pickup_facility_id_nn ON containers (pickup_facility_id)
    WHERE pickup_facility_id IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS containers_pickup_facility_id_idx;
ALTER INDEX IF EXISTS containers_pickup_facility_id_nn RENAME TO containers_pickup_facility_id_idx;

-- +goose Down
CREATE INDEX IF NOT EXISTS shipments_account_created_idx ON shipments (account_id, created_at, id);
CREATE INDEX IF NOT EXISTS containers_account_created_idx ON containers (account_id, created_at, id);
CREATE INDEX IF NOT EXISTS tracking_requests_account_created_idx ON tracking_requests (account_id, created_at, id);
CREATE INDEX IF NOT EXISTS shipments_account_scac_idx ON shipments (account_id, shipping_line_scac);
CREATE INDEX IF NOT EXISTS tracking_requests_id_idx ON tracking_requests (id);
CREATE INDEX IF NOT EXISTS transport_events_account_container_idx ON transport_events (account_id, container_id, event_at, id);
DROP INDEX IF EXISTS shipments_destination_metro_area_id_idx;
CREATE INDEX shipments_destination_metro_area_id_idx ON shipments (destination_metro_area_id);
DROP INDEX IF EXISTS shipments_destination_terminal_id_idx;
CREATE INDEX shipments_destination_terminal_id_idx ON shipments (destination_terminal_id);
DROP INDEX IF EXISTS shipments_destination_rail_terminal_id_idx;
CREATE INDEX shipments_destination_rail_terminal_id_idx ON shipments (destination_rail_terminal_id);
DROP INDEX IF EXISTS shipments_line_tracking_stopped_by_user_id_idx;
CREATE INDEX shipments_line_tracking_stopped_by_user_id_idx ON shipments (account_id, line_tracking_stopped_by_user_id);
DROP INDEX IF EXISTS containers_pickup_facility_id_idx;
CREATE INDEX containers_pickup_facility_id_idx ON containers (pickup_facility_id);
