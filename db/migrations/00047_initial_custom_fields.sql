-- Custom field values staged on a tracking request for the shipment and
-- containers its poll creates (the public API's initial_custom_fields):
-- checked at create against the account's definitions, stored here by
-- definition id ([{"definition_id", "entity": "shipment"|"container",
-- "value", "number"}]), written as custom field values when the request
-- first succeeds. NULL: none.

-- +goose Up
ALTER TABLE tracking_requests ADD COLUMN initial_custom_fields jsonb;

-- +goose Down
ALTER TABLE tracking_requests DROP COLUMN initial_custom_fields;
