package resolve

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	"shipgraph/db"
	"shipgraph/load"
	"shipgraph/model"
)

// Custom field definition and option writes. Deleting a
// definition deletes its options and every value set for it, in one
// statement (the foreign keys cascade): a field that no longer exists has
// no values, as users of a custom field screen expect, and nothing is left
// orphaned.

// CreateDefinition creates a custom field definition. Invalid is an input
// error the transport found, reported after the key's role.
type CreateDefinition struct {
	Input   model.CustomFieldDefinitionInput
	Invalid error
}

// UpdateDefinition changes the editable attributes of a definition.
// Fixed are the attributes that cannot change (entity_type, api_slug,
// data_type) as the request gave them, by name, nil for a value that is
// not text: each must be the definition's (any case). Invalid as
// CreateDefinition, reported once the definition is found and its fixed
// attributes are checked.
type UpdateDefinition struct {
	ID      string
	Patch   model.CustomFieldDefinitionPatch
	Fixed   map[string]*string
	Invalid error
}

// CreateOption adds an option to an enum definition. Invalid is an input
// error the transport found, reported after the definition is found.
type CreateOption struct {
	DefinitionID string
	Input        model.CustomFieldOptionInput
	Invalid      error
}

// UpdateOption changes an option of a definition; Invalid as CreateOption.
type UpdateOption struct {
	DefinitionID, OptionID string
	Patch                  model.CustomFieldOptionPatch
	Invalid                error
}

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_]*$`)

// checkText trims a text attribute and bounds it; required ones must not be
// blank. Nil stays nil.
func checkText(name string, v *string, required bool, max int) (*string, error) {
	if v == nil {
		return nil, nil
	}
	s := strings.TrimSpace(*v)
	if required && s == "" {
		return nil, invalidField(name, "%s must not be blank", name)
	}
	if len(s) > max {
		return nil, invalidField(name, "%s must be at most %d characters", name, max)
	}
	return &s, nil
}

// checkValidation accepts a JSON object or null.
func checkValidation(v model.JSON) (model.JSON, error) {
	if v == nil || strings.TrimSpace(string(v)) == "null" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(v, &m); err != nil || m == nil {
		return nil, invalidField("validation", "validation must be a JSON object or null")
	}
	return v, nil
}

// checkDefault checks a default value against the definition like a value
// (enum values against its options).
func checkDefault(ctx context.Context, l *load.Loaders, def *model.CustomFieldDefinition, v model.JSON) (model.JSON, error) {
	if v == nil || strings.TrimSpace(string(v)) == "null" {
		return nil, nil
	}
	n, err := normalizeValue(ctx, l, def, v)
	if e, ok := model.AsError(err); ok && e.Field != "" {
		e.Field = "default_value"
		e.Message = "default_value: " + e.Message
	}
	return n, err
}

// CreateDefinition runs c and returns the definition created.
func (r *Resolver) CreateDefinition(ctx context.Context, p *model.Principal, c CreateDefinition) (*model.CustomFieldDefinition, error) {
	if err := checkRequest(p, c.Invalid); err != nil {
		return nil, err
	}
	p, l, err := writer(ctx, p)
	if err != nil {
		return nil, err
	}
	if c.Invalid != nil {
		return nil, c.Invalid
	}
	in := c.Input
	slug := strings.TrimSpace(in.APISlug)
	if slug == "" || len(slug) > 100 || !slugPattern.MatchString(slug) {
		return nil, invalidField("api_slug", "api_slug must be lower-case letters, digits and underscores, starting with a letter or digit, at most 100 characters")
	}
	name, err := checkText("display_name", &in.DisplayName, true, 255)
	if err != nil {
		return nil, err
	}
	d := &model.CustomFieldDefinition{EntityType: in.EntityType, APISlug: slug, DisplayName: *name, DataType: in.DataType}
	if d.Description, err = checkText("description", in.Description, false, 2000); err != nil {
		return nil, err
	}
	if d.ReferenceType, err = checkText("reference_type", in.ReferenceType, false, 255); err != nil {
		return nil, err
	}
	if d.DefaultFormat, err = checkText("default_format", in.DefaultFormat, false, 255); err != nil {
		return nil, err
	}
	if d.Validation, err = checkValidation(in.Validation); err != nil {
		return nil, err
	}
	if d.DefaultValue, err = checkDefault(ctx, l, d, in.DefaultValue); err != nil {
		return nil, err
	}
	if err := r.DB.CreateCustomFieldDefinition(ctx, p.AccountID, d); err != nil {
		if e, ok := model.AsError(err); ok && e.Code == model.ECONFLICT {
			e.Field = "api_slug"
		}
		return nil, err
	}
	l.DefinitionByID.Prime(d.ID, d)
	return d, nil
}

// UpdateDefinition runs c and returns the definition written.
func (r *Resolver) UpdateDefinition(ctx context.Context, p *model.Principal, c UpdateDefinition) (*model.CustomFieldDefinition, error) {
	if err := checkRequest(p, c.Invalid); err != nil {
		return nil, err
	}
	p, l, def, err := writeTarget(ctx, p, func(l *load.Loaders) *load.Loader[*model.CustomFieldDefinition] { return l.DefinitionByID }, c.ID, "custom field definition", nil)
	if err != nil {
		return nil, err
	}
	// Entity type, api_slug and data type are the definition's identity:
	// a new one is a new definition.
	for _, f := range []struct{ name, current string }{
		{"entity_type", string(def.EntityType)}, {"api_slug", def.APISlug}, {"data_type", string(def.DataType)},
	} {
		if v, ok := c.Fixed[f.name]; ok && (v == nil || !strings.EqualFold(*v, f.current)) {
			return nil, invalidField(f.name, "%s cannot be changed; create a new definition", f.name)
		}
	}
	if c.Invalid != nil {
		return nil, c.Invalid
	}
	in := c.Patch
	var patch db.DefinitionPatch
	if patch.DisplayName, err = checkText("display_name", in.DisplayName, true, 255); err != nil {
		return nil, err
	}
	if v, set := in.Description.ValueOK(); set {
		if patch.Description, err = checkText("description", v, false, 2000); err != nil {
			return nil, err
		}
		patch.SetDescription = true
	}
	if v, set := in.DefaultFormat.ValueOK(); set {
		if patch.DefaultFormat, err = checkText("default_format", v, false, 255); err != nil {
			return nil, err
		}
		patch.SetDefaultFormat = true
	}
	if v, set := in.Validation.ValueOK(); set {
		if patch.Validation, err = checkValidation(v); err != nil {
			return nil, err
		}
		patch.SetValidation = true
	}
	if v, set := in.DefaultValue.ValueOK(); set {
		if patch.DefaultValue, err = checkDefault(ctx, l, def, v); err != nil {
			return nil, err
		}
		patch.SetDefaultValue = true
	}
	d, err := r.DB.UpdateCustomFieldDefinition(ctx, p.AccountID, def.ID, patch)
	if err != nil {
		return nil, err
	}
	l.DefinitionByID.Clear(def.ID)
	l.DefinitionByID.Prime(d.ID, d)
	return d, nil
}

// DeleteDefinition deletes the definition id, its options and its values,
// and returns it.
func (r *Resolver) DeleteDefinition(ctx context.Context, p *model.Principal, id string) (*model.CustomFieldDefinition, error) {
	p, l, err := writer(ctx, p)
	if err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, model.NotFound("custom field definition")
	}
	d, err := r.DB.DeleteCustomFieldDefinition(ctx, p.AccountID, id)
	if err != nil {
		return nil, err
	}
	// Its options and values went with it.
	l.DefinitionByID.Clear(d.ID)
	l.OptionsByDefinitionID.Clear(d.ID)
	l.CustomFieldsByEntityID.ClearAll()
	return d, nil
}

// optionDefinition returns the definition an option write targets: not
// found, then the transport's input error (invalid), then a definition
// that does not own options is refused.
func optionDefinition(ctx context.Context, l *load.Loaders, definitionID string, invalid error) (*model.CustomFieldDefinition, error) {
	def, err := loadByID(ctx, l.DefinitionByID, definitionID)
	if err != nil {
		return nil, err
	}
	if def == nil {
		return nil, model.NotFound("custom field definition")
	}
	if invalid != nil {
		return nil, invalid
	}
	if !def.DataType.HasOptions() {
		return nil, model.Errorf(model.EINVALID, "options can only be added to enum and enum_multi definitions; %s is %s", def.APISlug, def.DataType).AtField(model.WholeInput)
	}
	return def, nil
}

func checkOptionText(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", invalidField(field, "%s must not be blank", field)
	}
	if len(v) > 255 {
		return "", invalidField(field, "%s must be at most 255 characters", field)
	}
	return v, nil
}

// CreateOption runs c and returns the option created.
func (r *Resolver) CreateOption(ctx context.Context, p *model.Principal, c CreateOption) (*model.CustomFieldOption, error) {
	if err := checkRequest(p, c.Invalid); err != nil {
		return nil, err
	}
	p, l, err := writer(ctx, p)
	if err != nil {
		return nil, err
	}
	def, err := optionDefinition(ctx, l, c.DefinitionID, c.Invalid)
	if err != nil {
		return nil, err
	}
	label, err := checkOptionText("label", c.Input.Label)
	if err != nil {
		return nil, err
	}
	value, err := checkOptionText("value", c.Input.Value)
	if err != nil {
		return nil, err
	}
	o, err := r.DB.CreateCustomFieldOption(ctx, p.AccountID, def.ID, db.OptionInput{Label: label, Value: value, Position: c.Input.Position})
	if err != nil {
		return nil, err // a duplicate value is the store's CONFLICT, naming it
	}
	l.OptionsByDefinitionID.Clear(def.ID)
	return o, nil
}

// UpdateOption runs c and returns the option written.
func (r *Resolver) UpdateOption(ctx context.Context, p *model.Principal, c UpdateOption) (*model.CustomFieldOption, error) {
	if err := checkRequest(p, c.Invalid); err != nil {
		return nil, err
	}
	p, l, err := writer(ctx, p)
	if err != nil {
		return nil, err
	}
	def, err := optionDefinition(ctx, l, c.DefinitionID, c.Invalid)
	if err != nil {
		return nil, err
	}
	if !validID(c.OptionID) {
		return nil, model.NotFound("custom field option")
	}
	var patch db.OptionPatch
	if pos, set := c.Patch.Position.ValueOK(); set {
		patch.Position, patch.ClearPosition = pos, pos == nil
	}
	if c.Patch.Label != nil {
		v, err := checkOptionText("label", *c.Patch.Label)
		if err != nil {
			return nil, err
		}
		patch.Label = &v
	}
	if c.Patch.Value != nil {
		v, err := checkOptionText("value", *c.Patch.Value)
		if err != nil {
			return nil, err
		}
		patch.Value = &v
	}
	o, err := r.DB.UpdateCustomFieldOption(ctx, p.AccountID, def.ID, c.OptionID, patch)
	if err != nil {
		return nil, err
	}
	l.OptionsByDefinitionID.Clear(def.ID)
	if patch.Value != nil {
		// Stored values were rewritten to the new option value.
		l.CustomFieldsByEntityID.ClearAll()
	}
	return o, nil
}

// DeleteOption deletes an option of a definition and returns it.
func (r *Resolver) DeleteOption(ctx context.Context, p *model.Principal, definitionID, optionID string) (*model.CustomFieldOption, error) {
	p, l, err := writer(ctx, p)
	if err != nil {
		return nil, err
	}
	def, err := optionDefinition(ctx, l, definitionID, nil)
	if err != nil {
		return nil, err
	}
	if !validID(optionID) {
		return nil, model.NotFound("custom field option")
	}
	o, err := r.DB.DeleteCustomFieldOption(ctx, p.AccountID, def.ID, optionID)
	if err != nil {
		return nil, err
	}
	l.OptionsByDefinitionID.Clear(def.ID)
	return o, nil
}
