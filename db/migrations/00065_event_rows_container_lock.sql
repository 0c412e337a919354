-- The event rows' container keys go; a trigger on containers deletes a
-- container's events, and every writer of event rows holds the container.
--
-- raw_events and transport_events each had a foreign key (account_id,
-- container_id) → containers ON DELETE CASCADE (00013, kept by 00055). Its
-- check ran for every event row inserted: an SPI SELECT … FOR KEY SHARE on
-- containers per row, with its own executor start-up and a tuple lock
-- taken again on the same few containers (a first poll: ~37 raw and ~32
-- transport events of 2–4 containers; 114,765 checks in 1,500 first polls,
-- docs/tracking.md).
--
-- The guarantees they gave, and how they are kept now:
-- - ON DELETE CASCADE: containers_events_cascade, an AFTER DELETE row
--   trigger on containers, deletes the container's raw and transport events
--   (each statement names the row's account: a local task on Citus, 00036).
--   Its statements run in READ COMMITTED with a snapshot of their own, so
--   they see the events of a poll that committed while the delete waited
--   for the container's lock (below).
-- - No event row of a container that does not exist: the one writer of
--   event rows, ApplyPolls (db/tracking_apply.go), writes events only of the
--   containers its statement locked FOR KEY SHARE (the ck CTE: a container
--   deleted meanwhile is skipped, and the poll inserts its container again)
--   or inserted itself (uncommitted: no other transaction sees it, and a
--   delete of its shipment waits for the insert's key check on shipments).
--   A delete of a container the poll holds waits for the poll's commit, and
--   the trigger then deletes the events it wrote. The seed (db/seed) writes
--   the events of the containers it inserts in the same transaction.
-- - TRUNCATE containers CASCADE emptied the event tables:
--   containers_events_truncate empties them (TRUNCATE, as the cascade did).
--
-- docs/decisions.md ("The event rows' container keys") has the argument,
-- TestEventRowsFollowTheirContainer (db) the races.

-- +goose Up
-- The functions first: on Citus a function is created on every node, which
-- it refuses after a parallel operation on a distributed table (the DDL
-- below) in the same transaction.
-- +goose StatementBegin
CREATE FUNCTION container_events_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM transport_events WHERE account_id = OLD.account_id AND container_id = OLD.id;
    DELETE FROM raw_events WHERE account_id = OLD.account_id AND container_id = OLD.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION container_events_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r text[] := shipgraph_shard_group(TG_TABLE_NAME, ARRAY['transport_events', 'raw_events']);
BEGIN
    -- A TRUNCATE naming the event tables too (the seed's, db/seed) empties
    -- them itself and holds them open: truncating them again here fails
    -- (55006, in use by this session; on Citus too, where their shards may
    -- still have rows when this runs), and is not needed.
    BEGIN
        EXECUTE format('TRUNCATE %s, %s', r[1], r[2]);
    EXCEPTION WHEN object_in_use THEN
        NULL;
    END;
    RETURN NULL;
END $$;
-- +goose StatementEnd

ALTER TABLE raw_events DROP CONSTRAINT raw_events_account_id_container_id_fkey;
ALTER TABLE transport_events DROP CONSTRAINT transport_events_account_id_container_id_fkey;
CREATE TRIGGER containers_events_cascade AFTER DELETE ON containers
    FOR EACH ROW EXECUTE FUNCTION container_events_delete();
-- A TRUNCATE trigger fires once, on the table (on Citus on the coordinator's
-- table standing for its shards: 00036), and truncates the event tables
-- (their shards, through shipgraph_shard_group, on Citus).
CREATE TRIGGER containers_events_truncate AFTER TRUNCATE ON containers
    FOR EACH STATEMENT EXECUTE FUNCTION container_events_truncate();

-- +goose Down
DROP TRIGGER containers_events_truncate ON containers;
DROP FUNCTION container_events_truncate();
DROP TRIGGER containers_events_cascade ON containers;
DROP FUNCTION container_events_delete();
-- Rows whose container is gone (none, if every writer held its container)
-- go, as the cascade would have taken them.
DELETE FROM transport_events e
WHERE NOT EXISTS (SELECT 1 FROM containers c WHERE c.account_id = e.account_id AND c.id = e.container_id);
DELETE FROM raw_events e
WHERE NOT EXISTS (SELECT 1 FROM containers c WHERE c.account_id = e.account_id AND c.id = e.container_id);
ALTER TABLE raw_events ADD CONSTRAINT raw_events_account_id_container_id_fkey
    FOREIGN KEY (account_id, container_id) REFERENCES containers (account_id, id) ON DELETE CASCADE;
ALTER TABLE transport_events ADD CONSTRAINT transport_events_account_id_container_id_fkey
    FOREIGN KEY (account_id, container_id) REFERENCES containers (account_id, id) ON DELETE CASCADE;
