-- A tracking poll's event rows carry only the keys and indexes a reader or
-- a delete needs.
--
-- A first poll inserts about 45 raw and 33 transport events. Each row paid
-- for every foreign key of its table (a FOR KEY SHARE lookup per key and
-- row: 7 on a transport event, 4 on a raw event, about 450 lookups a first
-- poll) and for every index (10 on transport_events, 6 on raw_events):
-- about a sixth of a first poll's statement time went to those key checks
-- alone (auto_explain's trigger times, docs/tracking.md).
--
-- Kept: the container key (ON DELETE CASCADE: deleting a shipment deletes
-- its containers, and they their events), the primary keys, the
-- (container, scac, carrier event) unique keys the inserts' ON CONFLICT use
-- (readers by container use them too) and transport_events' (container,
-- event time) index.
--
-- Dropped:
-- - the events' shipment keys and their (account, shipment) indexes: no
--   reader looks events up by shipment, and a shipment's delete reaches its
--   events through its containers;
-- - transport_events' key to its raw event and its index: raw events are
--   deleted only with their container, which deletes its transport events
--   in the same statement;
-- - the keys to the reference tables (ports, terminals, rail terminals,
--   vessels) and the indexes that served their ON DELETE SET NULL: nothing
--   deletes a port, terminal or vessel (the catalog and the engine only add
--   or update them), and the poll's statement takes each id from the
--   reference row it joins;
-- - transport_events (id) and raw_events (account, container, position,
--   id): every reader is account-scoped (the primary key) or by container
--   (the unique key), and no reader's order is the index's.

-- +goose Up
ALTER TABLE raw_events DROP CONSTRAINT IF EXISTS raw_events_account_id_shipment_id_fkey;
ALTER TABLE raw_events DROP CONSTRAINT IF EXISTS raw_events_port_id_fkey;
ALTER TABLE raw_events DROP CONSTRAINT IF EXISTS raw_events_vessel_id_fkey;
DROP INDEX IF EXISTS raw_events_account_shipment_idx;
DROP INDEX IF EXISTS raw_events_port_id_idx;
DROP INDEX IF EXISTS raw_events_vessel_id_idx;
DROP INDEX IF EXISTS raw_events_account_container_idx;

ALTER TABLE transport_events DROP CONSTRAINT IF EXISTS transport_events_account_id_shipment_id_fkey;
ALTER TABLE transport_events DROP CONSTRAINT IF EXISTS transport_events_account_id_raw_event_id_fkey;
ALTER TABLE transport_events DROP CONSTRAINT IF EXISTS transport_events_port_id_fkey;
ALTER TABLE transport_events DROP CONSTRAINT IF EXISTS transport_events_terminal_id_fkey;
ALTER TABLE transport_events DROP CONSTRAINT IF EXISTS transport_events_rail_terminal_id_fkey;
ALTER TABLE transport_events DROP CONSTRAINT IF EXISTS transport_events_vessel_id_fkey;
DROP INDEX IF EXISTS transport_events_account_shipment_idx;
DROP INDEX IF EXISTS transport_events_account_raw_idx;
DROP INDEX IF EXISTS transport_events_id_idx;
DROP INDEX IF EXISTS transport_events_port_id_idx;
DROP INDEX IF EXISTS transport_events_terminal_id_idx;
DROP INDEX IF EXISTS transport_events_rail_terminal_id_idx;
DROP INDEX IF EXISTS transport_events_vessel_id_idx;

-- +goose Down
-- On Citus, the keys to reference tables are added after the updates have
-- read those tables in this transaction; DDL over the shards in parallel
-- is then refused: one connection per worker (sequential). Plain
-- PostgreSQL keeps it as an unused placeholder setting.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
-- Rows written meanwhile may point at nothing (a vessel, port or raw event
-- deleted since): those references are cleared first, as the keys' ON
-- DELETE SET NULL would have; an event whose shipment is gone goes, as
-- ON DELETE CASCADE would have.
DELETE FROM transport_events e WHERE NOT EXISTS (SELECT 1 FROM shipments s WHERE s.account_id = e.account_id AND s.id = e.shipment_id);
DELETE FROM raw_events e WHERE NOT EXISTS (SELECT 1 FROM shipments s WHERE s.account_id = e.account_id AND s.id = e.shipment_id);
UPDATE transport_events e SET raw_event_id = NULL WHERE raw_event_id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM raw_events r WHERE r.account_id = e.account_id AND r.id = e.raw_event_id);
UPDATE raw_events SET port_id = NULL WHERE port_id IS NOT NULL AND port_id NOT IN (SELECT id FROM ports);
UPDATE raw_events SET vessel_id = NULL WHERE vessel_id IS NOT NULL AND vessel_id NOT IN (SELECT id FROM vessels);
UPDATE transport_events SET port_id = NULL WHERE port_id IS NOT NULL AND port_id NOT IN (SELECT id FROM ports);
UPDATE transport_events SET terminal_id = NULL WHERE terminal_id IS NOT NULL AND terminal_id NOT IN (SELECT id FROM terminals);
UPDATE transport_events SET rail_terminal_id = NULL WHERE rail_terminal_id IS NOT NULL
    AND rail_terminal_id NOT IN (SELECT id FROM rail_terminals);
UPDATE transport_events SET vessel_id = NULL WHERE vessel_id IS NOT NULL AND vessel_id NOT IN (SELECT id FROM vessels);

CREATE INDEX IF NOT EXISTS raw_events_account_container_idx ON raw_events (account_id, container_id, position, id);
CREATE INDEX IF NOT EXISTS raw_events_account_shipment_idx ON raw_events (account_id, shipment_id);
CREATE INDEX IF NOT EXISTS raw_events_port_id_idx ON raw_events (port_id);
CREATE INDEX IF NOT EXISTS raw_events_vessel_id_idx ON raw_events (vessel_id);

CREATE INDEX IF NOT EXISTS transport_events_id_idx ON transport_events (id);
CREATE INDEX IF NOT EXISTS transport_events_account_shipment_idx ON transport_events (account_id, shipment_id);
CREATE INDEX IF NOT EXISTS transport_events_account_raw_idx ON transport_events (account_id, raw_event_id);
CREATE INDEX IF NOT EXISTS transport_events_port_id_idx ON transport_events (port_id);
CREATE INDEX IF NOT EXISTS transport_events_terminal_id_idx ON transport_events (terminal_id);
CREATE INDEX IF NOT EXISTS transport_events_rail_terminal_id_idx ON transport_events (rail_terminal_id);
CREATE INDEX IF NOT EXISTS transport_events_vessel_id_idx ON transport_events (vessel_id);

-- The keys come back on plain PostgreSQL. On Citus adding them to the
-- distributed tables was refused (cannot create foreign key constraint);
-- no statement of the releases before needs them, so there the indexes
-- alone come back.
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        EXECUTE 'ALTER TABLE raw_events ADD CONSTRAINT raw_events_account_id_shipment_id_fkey FOREIGN KEY (account_id, shipment_id) REFERENCES shipments (account_id, id) ON DELETE CASCADE';
        EXECUTE 'ALTER TABLE raw_events ADD CONSTRAINT raw_events_port_id_fkey FOREIGN KEY (port_id) REFERENCES ports (id) ON DELETE SET NULL';
        EXECUTE 'ALTER TABLE raw_events ADD CONSTRAINT raw_events_vessel_id_fkey FOREIGN KEY (vessel_id) REFERENCES vessels (id) ON DELETE SET NULL';
        EXECUTE 'ALTER TABLE transport_events ADD CONSTRAINT transport_events_account_id_shipment_id_fkey FOREIGN KEY (account_id, shipment_id) REFERENCES shipments (account_id, id) ON DELETE CASCADE';
        EXECUTE 'ALTER TABLE transport_events ADD CONSTRAINT transport_events_account_id_raw_event_id_fkey FOREIGN KEY (account_id, raw_event_id) REFERENCES raw_events (account_id, id) ON DELETE SET NULL (raw_event_id)';
        EXECUTE 'ALTER TABLE transport_events ADD CONSTRAINT transport_events_port_id_fkey FOREIGN KEY (port_id) REFERENCES ports (id) ON DELETE SET NULL';
        EXECUTE 'ALTER TABLE transport_events ADD CONSTRAINT transport_events_terminal_id_fkey FOREIGN KEY (terminal_id) REFERENCES terminals (id) ON DELETE SET NULL';
        EXECUTE 'ALTER TABLE transport_events ADD CONSTRAINT transport_events_rail_terminal_id_fkey FOREIGN KEY (rail_terminal_id) REFERENCES rail_terminals (id) ON DELETE SET NULL';
        EXECUTE 'ALTER TABLE transport_events ADD CONSTRAINT transport_events_vessel_id_fkey FOREIGN KEY (vessel_id) REFERENCES vessels (id) ON DELETE SET NULL';
    END IF;
END $$;
-- +goose StatementEnd
