-- Journeys (issue 26): an INSERT of a transport event is logged with the
-- attributes its webhook notification needs (the change log keeps no row
-- values for other INSERTs): the container.transport.* event it raises is
-- named by the row's event, and its reference object's attributes are the
-- record's as they were inserted (webhook/events.go). UPDATE and DELETE
-- are logged as before, by the generic function.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION shipgraph_log_transport_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('shipgraph.notify', true) = 'off' THEN
        RETURN NULL;
    END IF;
    INSERT INTO change_log (account_id, record_type, record_id, op, parent_id, changed, old, new)
    VALUES (NEW.account_id, 'transport_event', NEW.id, 'INSERT', NEW.container_id, NULL, NULL,
            jsonb_build_object('event', NEW.event, 'event_at', NEW.event_at, 'timezone', NEW.timezone,
                               'location_locode', NEW.location_locode, 'voyage_number', NEW.voyage_number,
                               'data_source', NEW.data_source, 'created_at', NEW.created_at,
                               'shipment_id', NEW.shipment_id));
    PERFORM pg_notify('shipgraph_changes_' || replace(NEW.account_id::text, '-', ''), '');
    PERFORM pg_notify('shipgraph_change_log', '');
    RETURN NULL;
END
$$;
-- +goose StatementEnd
DROP TRIGGER transport_events_notify_change ON transport_events;
CREATE TRIGGER transport_events_log_insert AFTER INSERT ON transport_events
    FOR EACH ROW EXECUTE FUNCTION shipgraph_log_transport_event();
CREATE TRIGGER transport_events_notify_change AFTER UPDATE OR DELETE ON transport_events
    FOR EACH ROW EXECUTE FUNCTION shipgraph_notify_change('transport_event', 'container_id');

-- +goose Down
DROP TRIGGER transport_events_notify_change ON transport_events;
DROP TRIGGER transport_events_log_insert ON transport_events;
DROP FUNCTION shipgraph_log_transport_event();
CREATE TRIGGER transport_events_notify_change AFTER INSERT OR UPDATE OR DELETE ON transport_events
    FOR EACH ROW EXECUTE FUNCTION shipgraph_notify_change('transport_event', 'container_id');
