-- Custom fields on tracking requests: a third entity beside shipments and
-- containers (/v2/tracking_requests/{id}/custom_fields, GraphQL
-- TrackingRequest.customFields).
--
-- A value on a tracking request is a custom_fields row with
-- tracking_request_id set (exactly one of the three entity columns is),
-- keyed (account_id, tracking_request_id) to tracking_requests so the
-- request's delete takes its values with it. entity_id is generated from
-- the three; PostgreSQL 15 cannot change a generated column's expression,
-- so it is dropped and added again, which drops and here rebuilds the
-- unique key the upserts name (ON CONFLICT (account_id, definition_id,
-- entity_id)) and its index. The change-log trigger keeps entity_id as a
-- value's parent, so a request's values are logged with the request as
-- parent as a shipment's are with the shipment.
--
-- The table is rewritten (the stored generated column) under an ACCESS
-- EXCLUSIVE lock; the rewrite fires no row trigger, so nothing is logged.

-- +goose Up
ALTER TABLE custom_field_definitions DROP CONSTRAINT custom_field_definitions_entity_type_check,
    ADD CONSTRAINT custom_field_definitions_entity_type_check
        CHECK (entity_type IN ('Shipment', 'Container', 'TrackingRequest'));

ALTER TABLE custom_fields ADD COLUMN tracking_request_id uuid;
ALTER TABLE custom_fields DROP COLUMN entity_id;
ALTER TABLE custom_fields
    ADD COLUMN entity_id uuid GENERATED ALWAYS AS (coalesce(shipment_id, container_id, tracking_request_id)) STORED,
    DROP CONSTRAINT custom_fields_check,
    ADD CONSTRAINT custom_fields_check CHECK (num_nonnulls(shipment_id, container_id, tracking_request_id) = 1),
    ADD CONSTRAINT custom_fields_definition_id_entity_id_key UNIQUE (account_id, definition_id, entity_id),
    ADD CONSTRAINT custom_fields_tracking_request_id_fkey
        FOREIGN KEY (account_id, tracking_request_id) REFERENCES tracking_requests (account_id, id) ON DELETE CASCADE;
CREATE INDEX custom_fields_entity_id_idx ON custom_fields (account_id, entity_id);
CREATE INDEX custom_fields_tracking_request_id_idx ON custom_fields (account_id, tracking_request_id);
COMMENT ON CONSTRAINT custom_fields_tracking_request_id_fkey ON custom_fields IS
    E'@fieldName trackingRequest\n@foreignFieldName customFields';

-- +goose Down
DELETE FROM custom_fields WHERE tracking_request_id IS NOT NULL;
DELETE FROM custom_field_definitions WHERE entity_type = 'TrackingRequest';
ALTER TABLE custom_fields DROP COLUMN entity_id;
ALTER TABLE custom_fields DROP COLUMN tracking_request_id;
ALTER TABLE custom_fields
    ADD COLUMN entity_id uuid GENERATED ALWAYS AS (coalesce(shipment_id, container_id)) STORED,
    DROP CONSTRAINT IF EXISTS custom_fields_check,
    ADD CONSTRAINT custom_fields_check CHECK (num_nonnulls(shipment_id, container_id) = 1),
    ADD CONSTRAINT custom_fields_definition_id_entity_id_key UNIQUE (account_id, definition_id, entity_id);
CREATE INDEX custom_fields_entity_id_idx ON custom_fields (account_id, entity_id);
ALTER TABLE custom_field_definitions DROP CONSTRAINT custom_field_definitions_entity_type_check,
    ADD CONSTRAINT custom_field_definitions_entity_type_check CHECK (entity_type IN ('Shipment', 'Container'));
