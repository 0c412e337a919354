package db

import (
	"context"

	"shipgraph/model"
)

// Custom field values as records of their own: the account-wide list
// (GET /v2/custom_fields), and deletes. A value exists only while it is
// set; clearing one deletes its row.

var customFieldList = &listSpec{
	plural: "custom fields",
	from:   "custom_fields cf" + customFieldFrom,
	alias:  "cf",
	cols:   customFieldCols,
	orders: map[string]sortSpec{
		"created_at": {expr: "cf.created_at", typ: "timestamptz"},
	},
}

type customFieldRow struct {
	model.CustomField
	pageMeta
}

// ListCustomFields reads one page of the account's custom field values.
// The filter's ids must be UUIDs (an id that is not matches nothing).
func (db *DB) ListCustomFields(ctx context.Context, accountID string, f model.CustomFieldFilter, p model.PageRequest) (*model.Page[*model.CustomField], error) {
	filter, none := customFieldFilter(accountID, f)
	if none {
		return &model.Page[*model.CustomField]{Items: []*model.CustomField{}, Keys: []*string{}}, nil
	}
	st, err := customFieldList.pageQuery(filter, p, customFieldList.cols)
	if err != nil {
		return nil, err
	}
	return readPage(ctx, db.read(accountID), st, func(r *customFieldRow) (*model.CustomField, *pageMeta) {
		return &r.CustomField, &r.pageMeta
	})
}

// CountCustomFields counts the account's values that match f.
func (db *DB) CountCustomFields(ctx context.Context, accountID string, f model.CustomFieldFilter) (int, error) {
	filter, none := customFieldFilter(accountID, f)
	if none {
		return 0, nil
	}
	return count(ctx, db.read(accountID), customFieldList, filter)
}

// customFieldFilter builds the conditions of f; none reports a filter that
// can match nothing (an id that is not a UUID), answered without SQL.
func customFieldFilter(accountID string, f model.CustomFieldFilter) (c *conds, none bool) {
	c = &conds{}
	if !validUUID(accountID) {
		return c, true
	}
	c.add("cf.account_id = %s", accountID)
	if f.EntityType != nil {
		c.add("d.entity_type = %s", string(*f.EntityType))
	}
	if f.EntityID != nil {
		if !validUUID(*f.EntityID) {
			return c, true
		}
		c.add("cf.entity_id = %s", *f.EntityID)
	}
	if f.DefinitionID != nil {
		if !validUUID(*f.DefinitionID) {
			return c, true
		}
		c.add("cf.definition_id = %s", *f.DefinitionID)
	}
	return c, false
}

// DeleteCustomField deletes the value of a definition on an entity of the
// account and returns it as it was; no value is ENOTFOUND.
func (db *DB) DeleteCustomField(ctx context.Context, accountID, definitionID, entityID string) (*model.CustomField, error) {
	if !validUUID(accountID) || !validUUID(definitionID) || !validUUID(entityID) {
		return nil, model.NotFound("custom field")
	}
	return deleteCustomFields(ctx, db, accountID, "cf.definition_id = $2 AND cf.entity_id = $3", accountID, definitionID, entityID)
}

// DeleteCustomFieldByID deletes one value of the account by id and returns
// it as it was.
func (db *DB) DeleteCustomFieldByID(ctx context.Context, accountID, id string) (*model.CustomField, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, model.NotFound("custom field")
	}
	return deleteCustomFields(ctx, db, accountID, "cf.id = $2", accountID, id)
}

// deleteCustomFields deletes the account's one value matching where ($1 is
// the account) and reads it back with customFieldCols, in one statement.
// The option labels are read in the statement's snapshot, so an enum's
// display value is still there.
func deleteCustomFields(ctx context.Context, db *DB, accountID, where string, args ...any) (*model.CustomField, error) {
	return getOne[model.CustomField](ctx, db.write(accountID), "custom field",
		`WITH cf AS (
			DELETE FROM custom_fields cf WHERE cf.account_id = $1 AND `+where+`
			RETURNING `+customFieldReturning+`)
		 SELECT `+customFieldCols+` FROM cf`+customFieldFromAccount("$1"), args...)
}
