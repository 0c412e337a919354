package db

import (
	"context"
	"strconv"
	"strings"

	"shipgraph/model"
)

// Definition writes beyond create (customfields.go): update and delete.

// definitionReturning is what a write of custom_field_definitions returns
// for the outer SELECT to read customFieldDefinitionCols from.
const definitionReturning = `id, account_id, entity_type, api_slug, display_name, description, data_type,
	reference_type, validation, default_format, default_value, created_at, updated_at`

// DefinitionPatch changes a definition: nil fields keep their value; the
// Set flags say a nullable field is written (nil then clears it).
type DefinitionPatch struct {
	DisplayName      *string
	Description      *string
	SetDescription   bool
	Validation       model.JSON
	SetValidation    bool
	DefaultFormat    *string
	SetDefaultFormat bool
	DefaultValue     model.JSON
	SetDefaultValue  bool
}

// UpdateCustomFieldDefinition changes the editable attributes of one of
// the account's definitions and returns it as it now is.
func (db *DB) UpdateCustomFieldDefinition(ctx context.Context, accountID, id string, p DefinitionPatch) (*model.CustomFieldDefinition, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, model.NotFound("custom field definition")
	}
	args := []any{id, accountID}
	set := []string{"updated_at = now()"}
	col := func(name string, v any) {
		args = append(args, v)
		set = append(set, name+" = $"+strconv.Itoa(len(args)))
	}
	if p.DisplayName != nil {
		col("display_name", *p.DisplayName)
	}
	if p.SetDescription {
		col("description", p.Description)
	}
	if p.SetValidation {
		col("validation", nullJSON(p.Validation))
	}
	if p.SetDefaultFormat {
		col("default_format", p.DefaultFormat)
	}
	if p.SetDefaultValue {
		col("default_value", nullJSON(p.DefaultValue))
	}
	return getOne[model.CustomFieldDefinition](ctx, db.write(accountID), "custom field definition",
		`WITH d AS (
			UPDATE custom_field_definitions SET `+strings.Join(set, ", ")+`
			WHERE id = $1 AND account_id = $2
			RETURNING `+definitionReturning+`)
		 SELECT `+customFieldDefinitionCols+` FROM d`, args...)
}

// DeleteCustomFieldDefinition deletes one of the account's definitions with
// its options and every value set for it (the foreign keys cascade, in the
// same statement: nothing is left pointing at it), and returns it as it was.
func (db *DB) DeleteCustomFieldDefinition(ctx context.Context, accountID, id string) (*model.CustomFieldDefinition, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, model.NotFound("custom field definition")
	}
	return getOne[model.CustomFieldDefinition](ctx, db.write(accountID), "custom field definition",
		`WITH d AS (
			DELETE FROM custom_field_definitions WHERE id = $1 AND account_id = $2
			RETURNING `+definitionReturning+`)
		 SELECT `+customFieldDefinitionCols+` FROM d`, id, accountID)
}

// nullJSON stores a JSON null (or nothing) as SQL NULL.
func nullJSON(v model.JSON) any {
	if v == nil || strings.TrimSpace(string(v)) == "null" {
		return nil
	}
	return string(v) // text: a []byte would go binary behind a pooler
}
