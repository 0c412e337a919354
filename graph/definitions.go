package graph

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	"shipgraph/db"
	"shipgraph/load"
	"shipgraph/model"
)

// Custom field definition writes (issue 8). Deleting a definition deletes
// its options and every value set for it, in one statement (the foreign
// keys cascade): a field that no longer exists has no values, as users of
// a custom field screen expect, and nothing is left orphaned.

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_]*$`)

func attrErr(name, format string, args ...any) error {
	return model.Errorf(model.EINVALID, format, args...).AtPointer("/data/attributes/" + name)
}

// checkText trims a text attribute and bounds it; required ones must not be
// blank. Nil stays nil.
func checkText(name string, v *string, required bool, max int) (*string, error) {
	if v == nil {
		return nil, nil
	}
	s := strings.TrimSpace(*v)
	if required && s == "" {
		return nil, attrErr(name, "%s must not be blank", name)
	}
	if len(s) > max {
		return nil, attrErr(name, "%s must be at most %d characters", name, max)
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
		return nil, attrErr("validation", "validation must be a JSON object or null")
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
	if e, ok := model.AsError(err); ok && e.Pointer != "" {
		e.Pointer = "/data/attributes/default_value"
		e.Message = "default_value: " + e.Message
	}
	return n, err
}

func (r *mutationResolver) createDefinition(ctx context.Context, in model.CustomFieldDefinitionInput) (*model.CustomFieldDefinition, error) {
	p, l, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	slug := strings.TrimSpace(in.APISlug)
	if slug == "" || len(slug) > 100 || !slugPattern.MatchString(slug) {
		return nil, attrErr("api_slug", "api_slug must be lower-case letters, digits and underscores, starting with a letter or digit, at most 100 characters")
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
			e.Pointer = "/data/attributes/api_slug"
		}
		return nil, err
	}
	l.DefinitionByID.Prime(d.ID, d)
	return d, nil
}

func (r *mutationResolver) updateDefinition(ctx context.Context, id string, in model.CustomFieldDefinitionPatch) (*model.CustomFieldDefinition, error) {
	p, l, def, err := writeTarget(ctx, func(l *load.Loaders) *load.Loader[*model.CustomFieldDefinition] { return l.DefinitionByID }, id, "custom field definition")
	if err != nil {
		return nil, err
	}
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

func (r *mutationResolver) deleteDefinition(ctx context.Context, id string) (*model.CustomFieldDefinition, error) {
	p, l, err := writer(ctx)
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
