-- +goose Up
-- A custom field value exists only while it is set: clearing a value
-- deletes the row (issue 8), so "unset" has one form. Rows an earlier
-- version cleared to NULL are removed, and NOT NULL keeps it that way.
DELETE FROM custom_fields WHERE value IS NULL OR value = 'null'::jsonb;
ALTER TABLE custom_fields ALTER COLUMN value SET NOT NULL;
ALTER TABLE custom_fields ADD CONSTRAINT custom_fields_value_not_json_null CHECK (value <> 'null'::jsonb);

-- GET /v2/custom_fields: the account's values, newest first, optionally of
-- one definition.
CREATE INDEX custom_fields_account_created_idx ON custom_fields (account_id, created_at, id);
CREATE INDEX custom_fields_definition_created_idx ON custom_fields (definition_id, created_at, id);

-- +goose Down
DROP INDEX custom_fields_definition_created_idx, custom_fields_account_created_idx;
ALTER TABLE custom_fields DROP CONSTRAINT custom_fields_value_not_json_null;
ALTER TABLE custom_fields ALTER COLUMN value DROP NOT NULL;
