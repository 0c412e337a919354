-- The change feed of live subscriptions. Whatever writes the rows that
-- subscribers watch — Shipgraph's own writes, /v2, or another system with
-- plain SQL — announces the change on the account's channel
-- shipgraph_changes_<account id without dashes> with a small JSON payload,
-- never the row:
--
--   {"t":"container","id":"…","op":"UPDATE","p":"<parent id>",
--    "c":["current_status","updated_at"],"was":{"current_status":"on_ship"}}
--
-- t: the record type; op: INSERT, UPDATE or DELETE; p: the parent the
-- subscriptions filter on (a container's shipment, a custom field's entity,
-- an option's definition); c: the columns an UPDATE changed (null when the
-- list would not fit the 8000-byte payload limit); was: the previous values
-- of the columns named in the trigger's extra arguments, when they changed
-- (a container leaving a subscriber's status or terminal filter is news to
-- that subscriber). An UPDATE that changes nothing announces nothing.
--
-- Bulk loads switch the feed off for their transaction with
-- SET LOCAL shipgraph.notify = 'off' (the demo seeder does).

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION shipgraph_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    rec     jsonb;
    old_rec jsonb;
    account text;
    cols    text[];
    was     jsonb := '{}';
    payload jsonb;
    i       int;
BEGIN
    IF current_setting('shipgraph.notify', true) = 'off' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'DELETE' THEN
        rec := to_jsonb(OLD);
    ELSE
        rec := to_jsonb(NEW);
    END IF;
    IF TG_OP = 'UPDATE' THEN
        old_rec := to_jsonb(OLD);
        SELECT array_agg(n.key ORDER BY n.key) INTO cols
        FROM jsonb_each(rec) n JOIN jsonb_each(old_rec) o ON o.key = n.key
        WHERE n.value IS DISTINCT FROM o.value;
        IF cols IS NULL THEN
            RETURN NULL;
        END IF;
        FOR i IN 2 .. coalesce(TG_NARGS, 0) - 1 LOOP
            IF TG_ARGV[i] = ANY (cols) THEN
                was := was || jsonb_build_object(TG_ARGV[i], old_rec -> TG_ARGV[i]);
            END IF;
        END LOOP;
    END IF;
    account := rec ->> 'account_id';
    IF account IS NULL AND rec ? 'definition_id' THEN
        -- Options carry no account: their definition's. A definition
        -- deleted with its options (CASCADE) is gone already; its own
        -- DELETE was announced.
        SELECT d.account_id::text INTO account FROM custom_field_definitions d
        WHERE d.id = (rec ->> 'definition_id')::uuid;
    END IF;
    IF account IS NULL THEN
        RETURN NULL;
    END IF;
    payload := jsonb_build_object('t', TG_ARGV[0], 'id', rec ->> 'id', 'op', TG_OP);
    IF TG_ARGV[1] <> '' THEN
        payload := payload || jsonb_build_object('p', rec ->> TG_ARGV[1]);
    END IF;
    IF was <> '{}' THEN
        payload := payload || jsonb_build_object('was', was);
    END IF;
    IF cols IS NOT NULL THEN
        payload := payload || jsonb_build_object('c', to_jsonb(cols));
        IF octet_length(payload::text) > 7900 THEN
            payload := payload || jsonb_build_object('c', NULL);
        END IF;
    END IF;
    PERFORM pg_notify('shipgraph_changes_' || replace(account, '-', ''), payload::text);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER shipments_notify_change AFTER INSERT OR UPDATE OR DELETE ON shipments
    FOR EACH ROW EXECUTE FUNCTION shipgraph_notify_change('shipment', '');
CREATE TRIGGER containers_notify_change AFTER INSERT OR UPDATE OR DELETE ON containers
    FOR EACH ROW EXECUTE FUNCTION shipgraph_notify_change('container', 'shipment_id', 'current_status', 'pod_terminal_id', 'shipment_id');
CREATE TRIGGER custom_fields_notify_change AFTER INSERT OR UPDATE OR DELETE ON custom_fields
    FOR EACH ROW EXECUTE FUNCTION shipgraph_notify_change('custom_field', 'entity_id');
CREATE TRIGGER custom_field_definitions_notify_change AFTER INSERT OR UPDATE OR DELETE ON custom_field_definitions
    FOR EACH ROW EXECUTE FUNCTION shipgraph_notify_change('custom_field_definition', '');
CREATE TRIGGER custom_field_options_notify_change AFTER INSERT OR UPDATE OR DELETE ON custom_field_options
    FOR EACH ROW EXECUTE FUNCTION shipgraph_notify_change('custom_field_option', 'definition_id');
CREATE TRIGGER documents_notify_change AFTER INSERT OR UPDATE OR DELETE ON documents
    FOR EACH ROW EXECUTE FUNCTION shipgraph_notify_change('document', '');

-- +goose Down
DROP TRIGGER documents_notify_change ON documents;
DROP TRIGGER custom_field_options_notify_change ON custom_field_options;
DROP TRIGGER custom_field_definitions_notify_change ON custom_field_definitions;
DROP TRIGGER custom_fields_notify_change ON custom_fields;
DROP TRIGGER containers_notify_change ON containers;
DROP TRIGGER shipments_notify_change ON shipments;
DROP FUNCTION shipgraph_notify_change();
