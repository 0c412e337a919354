package graph

import (
	"context"
	"strings"

	"shipgraph/db"
	"shipgraph/load"
	"shipgraph/model"
)

// Writes: the same rules for GraphQL and /v2. Authorization first (viewer
// keys are refused), then existence (404 before 422, so another account's
// records stay invisible), then the value; the database decides uniqueness.

func (r *mutationResolver) updateShipmentCustomField(ctx context.Context, shipmentID, apiSlug string, value model.JSON) (*model.CustomField, error) {
	return r.setValue(ctx, "Shipment", shipmentID, apiSlug, value, false)
}

// optionDefinition returns the definition an option write targets, refusing
// definitions that do not own options.
func (r *mutationResolver) optionDefinition(ctx context.Context, l *load.Loaders, definitionID string) (*model.CustomFieldDefinition, error) {
	def, err := loadByID(ctx, l.DefinitionByID, definitionID)
	if err != nil {
		return nil, err
	}
	if def == nil {
		return nil, model.NotFound("custom field definition")
	}
	if !def.DataType.HasOptions() {
		e := model.Errorf(model.EINVALID, "options can only be added to enum and enum_multi definitions; %s is %s", def.APISlug, def.DataType)
		e.Pointer = "/data"
		return nil, e
	}
	return def, nil
}

func checkOptionText(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		e := model.Errorf(model.EINVALID, "%s must not be blank", field)
		e.Pointer = "/data/attributes/" + field
		return "", e
	}
	if len(v) > 255 {
		e := model.Errorf(model.EINVALID, "%s must be at most 255 characters", field)
		e.Pointer = "/data/attributes/" + field
		return "", e
	}
	return v, nil
}

func (r *mutationResolver) createCustomFieldOption(ctx context.Context, definitionID string, in model.CustomFieldOptionInput) (*model.CustomFieldOption, error) {
	p, l, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	def, err := r.optionDefinition(ctx, l, definitionID)
	if err != nil {
		return nil, err
	}
	label, err := checkOptionText("label", in.Label)
	if err != nil {
		return nil, err
	}
	value, err := checkOptionText("value", in.Value)
	if err != nil {
		return nil, err
	}
	o, err := r.DB.CreateCustomFieldOption(ctx, p.AccountID, def.ID, db.OptionInput{Label: label, Value: value, Position: in.Position})
	if err != nil {
		return nil, err // a duplicate value is the store's CONFLICT, naming it
	}
	l.OptionsByDefinitionID.Clear(def.ID)
	return o, nil
}

func (r *mutationResolver) updateCustomFieldOption(ctx context.Context, definitionID, optionID string, in model.CustomFieldOptionPatch) (*model.CustomFieldOption, error) {
	p, l, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	def, err := r.optionDefinition(ctx, l, definitionID)
	if err != nil {
		return nil, err
	}
	if !validID(optionID) {
		return nil, model.NotFound("custom field option")
	}
	var patch db.OptionPatch
	if pos, set := in.Position.ValueOK(); set {
		patch.Position, patch.ClearPosition = pos, pos == nil
	}
	if in.Label != nil {
		v, err := checkOptionText("label", *in.Label)
		if err != nil {
			return nil, err
		}
		patch.Label = &v
	}
	if in.Value != nil {
		v, err := checkOptionText("value", *in.Value)
		if err != nil {
			return nil, err
		}
		patch.Value = &v
	}
	o, err := r.DB.UpdateCustomFieldOption(ctx, p.AccountID, def.ID, optionID, patch)
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

func (r *mutationResolver) deleteCustomFieldOption(ctx context.Context, definitionID, optionID string) (*model.CustomFieldOption, error) {
	p, l, err := writer(ctx)
	if err != nil {
		return nil, err
	}
	def, err := r.optionDefinition(ctx, l, definitionID)
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
