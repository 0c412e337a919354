package db

import (
	"context"
	"strings"
	"time"

	"github.com/lib/pq"

	"shipgraph/model"
)

const (
	customFieldDefinitionCols = `d.id, d.account_id, d.entity_type, d.api_slug, d.display_name, d.description, d.data_type,
	d.reference_type, d.validation, d.default_format, d.default_value, d.created_at, d.updated_at`
	customFieldOptionCols = `o.id, o.definition_id, o.label, o.value, o.position, o.created_at, o.updated_at`

	// customFieldCols reads a value (cf: custom_fields, or a CTE with its
	// columns) with what displaying it needs, from its definition d and
	// its options' labels ol (customFieldLabels): the slug, the data type
	// and, for enums, the labels of the selected options in the order of
	// the stored values. A page of values costs one statement, not one per
	// value for its options. The labels come from a join, not from a
	// subquery correlated with custom_field_options: Citus cannot push a
	// correlated subquery joining a table to a set-returning function down
	// to the account's shard.
	customFieldCols = `cf.id, cf.account_id, cf.definition_id, cf.shipment_id, cf.container_id, cf.tracking_request_id, cf.entity_id,
	cf.value, cf.created_at, cf.updated_at, d.api_slug, d.data_type, d.reference_type,
	CASE WHEN d.data_type IN ('enum', 'enum_multi') THEN ARRAY(
		SELECT ol.labels ->> v.value
		FROM jsonb_array_elements_text(CASE jsonb_typeof(cf.value)
			WHEN 'array' THEN cf.value
			WHEN 'string' THEN jsonb_build_array(cf.value)
			ELSE '[]'::jsonb END) WITH ORDINALITY AS v(value, n)
		WHERE ol.labels ? v.value
		ORDER BY v.n) END AS option_labels`

	// customFieldReturning is what an INSERT/UPDATE of custom_fields
	// returns so the outer SELECT can read customFieldCols from it.
	customFieldReturning = `id, account_id, definition_id, shipment_id, container_id, tracking_request_id, entity_id, value, created_at, updated_at`

	// optionInUse matches the stored values of definition $1 that use the
	// option value $2, for enum (a JSON string) and enum_multi (an array).
	optionInUse = `cf.definition_id = $1 AND (cf.value = to_jsonb($2::text) OR cf.value @> jsonb_build_array($2::text))`
)

var customFieldDefinitionList = &listSpec{
	plural: "custom field definitions",
	from:   "custom_field_definitions d",
	alias:  "d",
	cols:   customFieldDefinitionCols,
	orders: map[string]sortSpec{
		"created_at":   {expr: "d.created_at", typ: "timestamptz"},
		"display_name": {expr: "d.display_name", typ: "text"},
	},
}

type customFieldDefinitionRow struct {
	model.CustomFieldDefinition
	pageMeta
}

// OptionInput is a new option of an enum definition.
type OptionInput struct {
	Label, Value string
	Position     *int
}

// OptionPatch changes an option; nil fields keep their value, and
// ClearPosition sets the position to null.
type OptionPatch struct {
	Label, Value  *string
	Position      *int
	ClearPosition bool
}

// ---------------------------------------------------------------- definitions

// CustomFieldDefinitionsByIDs reads definitions of the account.
func (db *DB) CustomFieldDefinitionsByIDs(ctx context.Context, accountID string, ids []string) ([]*model.CustomFieldDefinition, error) {
	return byIDs[model.CustomFieldDefinition](ctx, db.read(accountID),
		`SELECT `+customFieldDefinitionCols+` FROM custom_field_definitions d WHERE d.id = ANY($1) AND d.account_id = $2`, ids, accountID)
}

// FindCustomFieldDefinitionBySlug reads a definition by entity type
// ("Shipment", "Container", "TrackingRequest") and api slug, as the REST paths name them.
func (db *DB) FindCustomFieldDefinitionBySlug(ctx context.Context, accountID string, entityType string, apiSlug string) (*model.CustomFieldDefinition, error) {
	if !validUUID(accountID) {
		return nil, model.NotFound("custom field definition")
	}
	return getOne[model.CustomFieldDefinition](ctx, db.read(accountID), "custom field definition",
		`SELECT `+customFieldDefinitionCols+` FROM custom_field_definitions d
		 WHERE d.account_id = $1 AND d.entity_type = $2 AND d.api_slug = $3`, accountID, entityType, apiSlug)
}

// CreateCustomFieldDefinition stores d for the account and fills its id,
// account and timestamps. The database refuses a duplicate slug.
func (db *DB) CreateCustomFieldDefinition(ctx context.Context, accountID string, d *model.CustomFieldDefinition) error {
	if !validUUID(accountID) {
		return model.NotFound("account")
	}
	row := db.write(accountID).QueryRowxContext(ctx, `INSERT INTO custom_field_definitions
		(account_id, entity_type, api_slug, display_name, description, data_type, reference_type,
		 validation, default_format, default_value)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		RETURNING id, account_id, created_at, updated_at`,
		accountID, d.EntityType, d.APISlug, d.DisplayName, d.Description, d.DataType, d.ReferenceType,
		d.Validation, d.DefaultFormat, d.DefaultValue)
	if err := row.Scan(&d.ID, &d.AccountID, &d.CreatedAt, &d.UpdatedAt); err != nil {
		if model.ErrorCode(mapErr(err)) == model.ECONFLICT {
			return model.Errorf(model.ECONFLICT, "a %s custom field with api slug %q already exists", d.EntityType, d.APISlug)
		}
		return mapErr(err)
	}
	return nil
}

// ListCustomFieldDefinitions reads one page of the account's definitions.
func (db *DB) ListCustomFieldDefinitions(ctx context.Context, accountID string, f model.CustomFieldDefinitionFilter, p model.PageRequest) (*model.Page[*model.CustomFieldDefinition], error) {
	st, err := customFieldDefinitionList.pageQuery(customFieldDefinitionFilter(accountID, f), p, customFieldDefinitionList.cols)
	if err != nil {
		return nil, err
	}
	return readPage(ctx, db.read(accountID), st, func(r *customFieldDefinitionRow) (*model.CustomFieldDefinition, *pageMeta) {
		return &r.CustomFieldDefinition, &r.pageMeta
	})
}

// CountCustomFieldDefinitions counts the account's definitions that match f.
func (db *DB) CountCustomFieldDefinitions(ctx context.Context, accountID string, f model.CustomFieldDefinitionFilter) (int, error) {
	return count(ctx, db.read(accountID), customFieldDefinitionList, customFieldDefinitionFilter(accountID, f))
}

func customFieldDefinitionFilter(accountID string, f model.CustomFieldDefinitionFilter) *conds {
	c := &conds{}
	c.add("d.account_id = %s", accountID)
	if f.EntityType != nil {
		c.add("d.entity_type = %s", string(*f.EntityType))
	}
	if f.DataType != nil {
		c.add("d.data_type = %s", string(*f.DataType))
	}
	if f.DisplayName != "" {
		// Served by the (account_id, lower(display_name) text_pattern_ops) index.
		c.add(`lower(d.display_name) LIKE lower(%s) ESCAPE '\'`, escapeLike(f.DisplayName)+"%")
	}
	return c
}

// ---------------------------------------------------------------- options

// CustomFieldOptionsByIDs reads options whose definition is the account's.
func (db *DB) CustomFieldOptionsByIDs(ctx context.Context, accountID string, ids []string) ([]*model.CustomFieldOption, error) {
	return byIDs[model.CustomFieldOption](ctx, db.read(accountID),
		`SELECT `+customFieldOptionCols+` FROM custom_field_options o
		 WHERE o.id = ANY($1) AND o.account_id = $2`, ids, accountID)
}

// CustomFieldOptionsByDefinitionIDs reads the options of definitions, in
// (definition, position, value, id) order; options without a position last.
func (db *DB) CustomFieldOptionsByDefinitionIDs(ctx context.Context, accountID string, definitionIDs []string) ([]*model.CustomFieldOption, error) {
	return byIDs[model.CustomFieldOption](ctx, db.read(accountID),
		`SELECT `+customFieldOptionCols+` FROM custom_field_options o
		 WHERE o.definition_id = ANY($1) AND o.account_id = $2
		 ORDER BY o.definition_id, o.position NULLS LAST, o.value, o.id`, definitionIDs, accountID)
}

// checkOptionText refuses an empty label or value before the CHECK
// constraint would, with a message that says which.
func checkOptionText(field string, s *string) error {
	if s != nil && strings.TrimSpace(*s) == "" {
		return model.Errorf(model.EINVALID, "%s must not be empty", field).AtField(field)
	}
	return nil
}

// optionConflict names the duplicate value when the unique constraint on
// (definition_id, value) refuses a write, concurrent writes included.
func optionConflict(err error, value string) error {
	err = mapErr(err)
	if model.ErrorCode(err) == model.ECONFLICT {
		return model.Errorf(model.ECONFLICT, "an option with value %q already exists for this definition", value).AtField("value")
	}
	return err
}

// CreateCustomFieldOption adds an option to one of the account's enum
// definitions.
func (db *DB) CreateCustomFieldOption(ctx context.Context, accountID, definitionID string, in OptionInput) (*model.CustomFieldOption, error) {
	if err := checkOptionText("label", &in.Label); err != nil {
		return nil, err
	}
	if err := checkOptionText("value", &in.Value); err != nil {
		return nil, err
	}
	if !validUUID(accountID) || !validUUID(definitionID) {
		return nil, model.NotFound("custom field definition")
	}
	var opt *model.CustomFieldOption
	err := db.inTx(ctx, accountID, func(q ext) error {
		var dataType model.CustomFieldDataType
		if err := sqlxGet(ctx, q, &dataType, "custom field definition",
			`SELECT d.data_type FROM custom_field_definitions d WHERE d.id = $1 AND d.account_id = $2`,
			definitionID, accountID); err != nil {
			return err
		}
		if !dataType.HasOptions() {
			return model.Errorf(model.EINVALID, "only enum and enum_multi custom fields have options")
		}
		var err error
		opt, err = getOne[model.CustomFieldOption](ctx, q, "custom field definition",
			`WITH o AS (
				INSERT INTO custom_field_options (account_id, definition_id, label, value, position)
				VALUES ($5, $1, $2, $3, $4)
				RETURNING id, definition_id, label, value, position, created_at, updated_at)
			 SELECT `+customFieldOptionCols+` FROM o`,
			definitionID, in.Label, in.Value, in.Position, accountID)
		if err != nil {
			return optionConflict(err, in.Value)
		}
		return nil
	})
	return opt, err
}

// lockOption reads and row-locks an option of one of the account's
// definitions, telling a missing definition from a missing option.
// Deletes and renames call it first, before they count or rewrite the
// stored values that use the option: FOR UPDATE waits for a SetCustomField
// that share-locked the option to commit, so those later statements see
// its value (and a SetCustomField that comes second waits for this
// transaction and then finds the option gone or renamed).
func lockOption(ctx context.Context, q ext, accountID, definitionID, optionID string) (*model.CustomFieldOption, error) {
	opt, err := getOne[model.CustomFieldOption](ctx, q, "custom field option",
		`SELECT `+customFieldOptionCols+` FROM custom_field_options o
		 WHERE o.id = $1 AND o.definition_id = $2 AND o.account_id = $3
		 FOR UPDATE`, optionID, definitionID, accountID)
	if model.ErrorCode(err) != model.ENOTFOUND {
		return opt, err
	}
	// Only on the error path: which of the two is missing?
	var one int
	if err := sqlxGet(ctx, q, &one, "custom field definition",
		`SELECT 1 FROM custom_field_definitions d WHERE d.id = $1 AND d.account_id = $2`,
		definitionID, accountID); err != nil {
		return nil, err
	}
	return nil, model.NotFound("custom field option")
}

// UpdateCustomFieldOption changes an option. A new value is written through
// to every stored value of the definition in the same transaction (the enum
// scalar, or the element of an enum_multi array), so no selection is lost.
func (db *DB) UpdateCustomFieldOption(ctx context.Context, accountID, definitionID, optionID string, p OptionPatch) (*model.CustomFieldOption, error) {
	if err := checkOptionText("label", p.Label); err != nil {
		return nil, err
	}
	if err := checkOptionText("value", p.Value); err != nil {
		return nil, err
	}
	if !validUUID(accountID) || !validUUID(definitionID) {
		return nil, model.NotFound("custom field definition")
	}
	if !validUUID(optionID) {
		return nil, model.NotFound("custom field option")
	}
	var opt *model.CustomFieldOption
	err := db.inTx(ctx, accountID, func(q ext) error {
		old, err := lockOption(ctx, q, accountID, definitionID, optionID)
		if err != nil {
			return err
		}
		opt, err = getOne[model.CustomFieldOption](ctx, q, "custom field option",
			`WITH o AS (
				UPDATE custom_field_options SET
					label = coalesce($2, label),
					value = coalesce($3, value),
					position = CASE WHEN $4::boolean THEN NULL ELSE coalesce($5::integer, position) END,
					updated_at = now()
				WHERE id = $1 AND account_id = $6
				RETURNING id, definition_id, label, value, position, created_at, updated_at)
			 SELECT `+customFieldOptionCols+` FROM o`,
			optionID, p.Label, p.Value, p.ClearPosition, p.Position, accountID)
		if err != nil {
			return optionConflict(err, deref(p.Value))
		}
		if opt.Value == old.Value {
			return nil
		}
		// The values that use the option take its new value: arrays
		// (enum_multi) element by element, in place, then single values
		// (enum). Two statements rather than one CASE on the value's type:
		// Citus refuses a function that is not immutable (jsonb_agg,
		// to_jsonb) inside CASE in a write.
		for _, set := range []string{
			`value = (SELECT jsonb_agg(CASE WHEN v.value = $2 THEN $3 ELSE v.value END ORDER BY v.n)
				FROM jsonb_array_elements_text(cf.value) WITH ORDINALITY AS v(value, n))
			WHERE jsonb_typeof(cf.value) = 'array' AND `,
			`value = to_jsonb($3::text) WHERE jsonb_typeof(cf.value) <> 'array' AND `,
		} {
			if _, err := q.ExecContext(ctx, `UPDATE custom_fields cf SET updated_at = now(), `+set+optionInUse+` AND cf.account_id = $4`,
				definitionID, old.Value, opt.Value, accountID); err != nil {
				return mapErr(err)
			}
		}
		return nil
	})
	return opt, err
}

// DeleteCustomFieldOption deletes an option that no stored value uses; one
// in use is refused, so no value is left pointing at nothing. It returns
// the deleted option.
func (db *DB) DeleteCustomFieldOption(ctx context.Context, accountID, definitionID, optionID string) (*model.CustomFieldOption, error) {
	if !validUUID(accountID) || !validUUID(definitionID) {
		return nil, model.NotFound("custom field definition")
	}
	if !validUUID(optionID) {
		return nil, model.NotFound("custom field option")
	}
	var opt *model.CustomFieldOption
	err := db.inTx(ctx, accountID, func(q ext) error {
		var err error
		if opt, err = lockOption(ctx, q, accountID, definitionID, optionID); err != nil {
			return err
		}
		var n int
		if err := sqlxGet(ctx, q, &n, "", `SELECT count(*) FROM custom_fields cf WHERE `+optionInUse+` AND cf.account_id = $3`,
			definitionID, opt.Value, accountID); err != nil {
			return err
		}
		if n > 0 {
			noun := "values"
			if n == 1 {
				noun = "value"
			}
			return model.Errorf(model.ECONFLICT, "option is in use by %d %s", n, noun)
		}
		_, err = q.ExecContext(ctx, `DELETE FROM custom_field_options WHERE id = $1 AND account_id = $2`, optionID, accountID)
		return mapErr(err)
	})
	return opt, err
}

// ---------------------------------------------------------------- values

// CustomFieldsByEntityIDs reads the values set on shipments, containers or
// tracking requests, with slug, data type and option labels, in one
// statement; rows come in (entity, definition display name, id) order.
func (db *DB) CustomFieldsByEntityIDs(ctx context.Context, accountID string, entityIDs []string) ([]*model.CustomField, error) {
	return CustomFieldsByEntity.Read(ctx, db, accountID, entityIDs)
}

// CustomFieldsByEntity is CustomFieldsByEntityIDs as a batch read that a
// joint read (ReadJoint) may run with others.
var CustomFieldsByEntity = newBatch[model.CustomField](func(db *DB, ids, account string) (string, string) {
	return db.cols("CustomField"), `FROM custom_fields cf` + customFieldFrom + `
		 WHERE cf.entity_id = ANY(` + ids + `) AND cf.account_id = ` + account + `
		 ORDER BY cf.entity_id, d.display_name, cf.id`
})

// CustomFieldsByIDs reads values of the account by id (Query.node), with
// what displaying them needs, as CustomFieldsByEntityIDs does.
func (db *DB) CustomFieldsByIDs(ctx context.Context, accountID string, ids []string) ([]*model.CustomField, error) {
	return byIDs[model.CustomField](ctx, db.read(accountID),
		`SELECT `+customFieldCols+` FROM custom_fields cf`+customFieldFrom+`
		 WHERE cf.id = ANY($1) AND cf.account_id = $2`, ids, accountID)
}

// customFieldFrom joins what customFieldCols reads to cf: the definition
// and the labels of its options by value. It suits a statement that
// filters cf.account_id by a value (PostgreSQL pushes the account into the
// grouped options); customFieldFromAccount names it where cf is a CTE.
var customFieldFrom = customFieldFromAccount("")

// customFieldFromAccount is customFieldFrom with the options filtered by
// the account in param ("$1"), unless param is empty.
func customFieldFromAccount(param string) string {
	where, andAccount := "", ""
	if param != "" {
		// The definitions' account too: after a writing CTE (cf), Citus
		// routes the read-back to the account's shard only when every
		// distributed table in it names the account.
		where, andAccount = " WHERE o.account_id = "+param, " AND d.account_id = "+param
	}
	return ` JOIN custom_field_definitions d ON d.account_id = cf.account_id AND d.id = cf.definition_id` + andAccount + `
	LEFT JOIN (SELECT o.account_id, o.definition_id, jsonb_object_agg(o.value, o.label) AS labels
		FROM custom_field_options o` + where + ` GROUP BY 1, 2) ol ON ol.account_id = cf.account_id AND ol.definition_id = cf.definition_id`
}

// SetCustomField sets (creates or replaces) the value of def on an entity
// of the account, in one statement: the upsert only inserts when the entity
// is the account's and of the definition's type, and the outer SELECT reads
// the row back as CustomFieldsByEntityIDs does. The value must already be
// normalized (model.NormalizeCustomFieldValue); nil stores SQL NULL.
//
// For an enum or enum_multi definition the statement also share-locks the
// options its value names and writes only when every one of them still
// exists; otherwise it writes nothing and the error is EINVALID, naming
// the first missing value. The caller validated the value against options
// read a moment earlier, which a concurrent delete or rename of an option
// may since have changed; the lock closes that gap:
//
//   - FOR SHARE conflicts with the FOR UPDATE that lockOption takes, and
//     with any UPDATE or DELETE of the option row (FOR KEY SHARE would let
//     an update of a non-key column through). Under READ COMMITTED a
//     locking read that had to wait re-checks its WHERE against the row as
//     committed, so a deleted option, or one whose value was renamed, is
//     not found and the set fails.
//   - A delete or rename that comes second waits for this statement to
//     commit, and DeleteCustomFieldOption and UpdateCustomFieldOption lock
//     the option before they count or rewrite stored values, in statements
//     of their own whose snapshots then include the value written here: the
//     delete is refused, the rename rewrites this value too.
func (db *DB) SetCustomField(ctx context.Context, accountID string, def *model.CustomFieldDefinition, entityID string, value model.JSON) (*model.CustomField, error) {
	return db.setCustomField(ctx, accountID, def, entityID, value, false)
}

// CreateCustomField is SetCustomField for a value the entity does not have
// yet: when it has one, nothing is written and the error is ECONFLICT (the
// unique constraint decides, also between concurrent creates).
func (db *DB) CreateCustomField(ctx context.Context, accountID string, def *model.CustomFieldDefinition, entityID string, value model.JSON) (*model.CustomField, error) {
	return db.setCustomField(ctx, accountID, def, entityID, value, true)
}

func (db *DB) setCustomField(ctx context.Context, accountID string, def *model.CustomFieldDefinition, entityID string, value model.JSON, create bool) (*model.CustomField, error) {
	if value == nil || string(value) == "null" {
		// A value is a row only while it is set: clearing is
		// DeleteCustomField.
		return nil, model.Errorf(model.EINVALID, "value must not be null").AtField("value")
	}
	// updated_at comes in with the row (the statement's now(), as its
	// default would be): Citus refuses a function other than an immutable
	// one in DO UPDATE SET.
	onConflict := "DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at"
	if create {
		onConflict = "DO NOTHING"
	}
	var column, table, kind string
	switch def.EntityType {
	case "Shipment":
		column, table, kind = "shipment_id", "shipments", "shipment"
	case "Container":
		column, table, kind = "container_id", "containers", "container"
	case "TrackingRequest":
		column, table, kind = "tracking_request_id", "tracking_requests", "tracking request"
	default:
		return nil, model.Errorf(model.EINVALID, "custom fields cannot be set on %q", def.EntityType)
	}
	if def.AccountID != accountID || !validUUID(def.ID) || !validUUID(accountID) {
		return nil, model.NotFound("custom field definition")
	}
	if !validUUID(entityID) {
		return nil, model.NotFound(kind)
	}
	// target: the entity and definition, when both are the account's.
	// named: the option values the value names, in value order, for enum
	// types only (the data type is the stored one, not def's).
	// opt: those that exist, share-locked. missing: the first that does not.
	// The outer SELECT returns one row: the missing value, or the written
	// row's columns, or neither (no such entity).
	r, err := getOne[setCustomFieldRow](ctx, db.write(accountID), kind,
		`WITH target AS (
			SELECT e.account_id, d.id AS definition_id, e.id AS entity_id, d.data_type
			FROM `+table+` e
			JOIN custom_field_definitions d ON d.id = $2 AND d.account_id = e.account_id AND d.entity_type = $5
			WHERE e.id = $3 AND e.account_id = $1),
		named AS (
			SELECT v.value, v.n
			FROM target t, jsonb_array_elements_text(CASE jsonb_typeof($4::jsonb)
				WHEN 'array' THEN $4::jsonb
				WHEN 'string' THEN jsonb_build_array($4::jsonb)
				ELSE '[]'::jsonb END) WITH ORDINALITY AS v(value, n)
			WHERE t.data_type IN ('enum', 'enum_multi')),
		opt AS (
			SELECT o.value FROM custom_field_options o
			WHERE o.account_id = $1 AND o.definition_id = $2 AND o.value = ANY(ARRAY(SELECT value FROM named))
			FOR SHARE),
		missing AS (
			SELECT coalesce(n.value, 'null') AS value FROM named n
			WHERE NOT EXISTS (SELECT 1 FROM opt WHERE opt.value = n.value)
			ORDER BY n.n LIMIT 1),
		cf AS (
			INSERT INTO custom_fields (account_id, definition_id, `+column+`, value, updated_at)
			SELECT t.account_id, t.definition_id, t.entity_id, $4::jsonb, now()
			FROM target t
			WHERE NOT EXISTS (SELECT 1 FROM missing)
			ON CONFLICT (account_id, definition_id, entity_id) `+onConflict+`
			RETURNING `+customFieldReturning+`)
		 SELECT m.value AS missing_option, EXISTS (SELECT 1 FROM target) AS target_found, `+customFieldCols+`
		 FROM (SELECT) one
		 LEFT JOIN missing m ON true
		 LEFT JOIN (cf`+customFieldFromAccount("$1")+`) ON true`,
		accountID, def.ID, entityID, value, string(def.EntityType))
	switch {
	case err != nil:
		return nil, err
	case r.MissingOption != nil:
		return nil, model.Errorf(model.EINVALID, "%q is not an option of %s", *r.MissingOption, def.APISlug).
			AtField("value")
	case r.ID == nil && r.TargetFound && create:
		return nil, model.Errorf(model.ECONFLICT, "%s already has a value for %s; PATCH it instead", kind, def.APISlug).
			AtField("api_slug")
	case r.ID == nil:
		return nil, model.NotFound(kind)
	}
	return r.customField(), nil
}

// setCustomFieldRow is the one row SetCustomField's statement returns: an
// option value that is missing (and nothing written), or the columns of
// customFieldCols for the row written, all NULL when none was.
type setCustomFieldRow struct {
	MissingOption *string                    `db:"missing_option"`
	TargetFound   bool                       `db:"target_found"`
	ID            *string                    `db:"id"`
	AccountID     *string                    `db:"account_id"`
	DefinitionID  *string                    `db:"definition_id"`
	ShipmentID    *string                    `db:"shipment_id"`
	ContainerID   *string                    `db:"container_id"`
	TrackingReqID *string                    `db:"tracking_request_id"`
	EntityID      *string                    `db:"entity_id"`
	Value         model.JSON                 `db:"value"`
	CreatedAt     *time.Time                 `db:"created_at"`
	UpdatedAt     *time.Time                 `db:"updated_at"`
	APISlug       *string                    `db:"api_slug"`
	DataType      *model.CustomFieldDataType `db:"data_type"`
	ReferenceType *string                    `db:"reference_type"`
	OptionLabels  pq.StringArray             `db:"option_labels"`
}

// customField is the written row; only for a row whose ID is set.
func (r *setCustomFieldRow) customField() *model.CustomField {
	return &model.CustomField{
		ID:                *r.ID,
		AccountID:         *r.AccountID,
		DefinitionID:      *r.DefinitionID,
		ShipmentID:        r.ShipmentID,
		ContainerID:       r.ContainerID,
		TrackingRequestID: r.TrackingReqID,
		EntityID:          *r.EntityID,
		Value:             r.Value,
		CreatedAt:         *r.CreatedAt,
		UpdatedAt:         *r.UpdatedAt,
		APISlug:           *r.APISlug,
		DataType:          *r.DataType,
		ReferenceType:     r.ReferenceType,
		OptionLabels:      r.OptionLabels,
	}
}

// ---------------------------------------------------------------- helpers

// sqlxGet scans one value; no row is a not-found error naming kind.
func sqlxGet(ctx context.Context, q ext, dest any, kind, query string, args ...any) error {
	err := q.QueryRowxContext(ctx, query, args...).Scan(dest)
	if err != nil && kind != "" && model.ErrorCode(mapErr(err)) == model.ENOTFOUND {
		return model.NotFound(kind)
	}
	return mapErr(err)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
