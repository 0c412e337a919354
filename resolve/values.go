package resolve

import (
	"context"

	"shipgraph/load"
	"shipgraph/model"
)

// Custom field values: set, create, clear and delete on shipments,
// containers and tracking requests, by slug or by the value's id. The rules are every
// write's: the key may write, the entity is the account's (404), then the
// definition by slug (404), then the value (422). A value exists only while
// it is set: clearing deletes it.

// SetValue sets the value of the definition APISlug on a shipment,
// container or tracking request (EntityType); a null Value clears it. Invalid is an input
// error the transport found, reported once the entity is found.
type SetValue struct {
	EntityType model.CustomFieldEntityType
	EntityID   string
	APISlug    string
	Value      model.JSON
	Invalid    error
	create     bool
}

// CreateValue creates a value on an entity that has none for the
// definition yet; without EntityType, the entity may be any kind.
type CreateValue struct {
	EntityID   string
	EntityType *model.CustomFieldEntityType
	APISlug    string
	Value      model.JSON
	Invalid    error
}

// UpdateValue sets (or with a null Value clears) the value ID.
type UpdateValue struct {
	ID      string
	Value   model.JSON
	Invalid error
}

// entityOf reads a shipment, container or tracking request of the
// account, as kind says;
// not found when it is not one.
func entityOf(ctx context.Context, l *load.Loaders, kind model.CustomFieldEntityType, id string) (string, error) {
	switch kind {
	case "Shipment":
		s, err := loadByID(ctx, l.ShipmentByID, id)
		if err != nil {
			return "", err
		}
		if s != nil {
			return s.ID, nil
		}
		return "", model.NotFound("shipment")
	case "Container":
		c, err := loadByID(ctx, l.ContainerByID, id)
		if err != nil {
			return "", err
		}
		if c != nil {
			return c.ID, nil
		}
		return "", model.NotFound("container")
	case "TrackingRequest":
		t, err := loadByID(ctx, l.TrackingRequestByID, id)
		if err != nil {
			return "", err
		}
		if t != nil {
			return t.ID, nil
		}
		return "", model.NotFound("tracking request")
	}
	return "", model.Errorf(model.EINVALID, "custom fields are set on shipments, containers and tracking requests")
}

// entityKind finds which kind of entity id is (a shipment, container or
// tracking request of the account); not found when it is none.
func entityKind(ctx context.Context, l *load.Loaders, id string) (model.CustomFieldEntityType, error) {
	for _, kind := range model.EntityTypes.Values() {
		if _, err := entityOf(ctx, l, model.CustomFieldEntityType(kind), id); err == nil {
			return model.CustomFieldEntityType(kind), nil
		} else if model.ErrorCode(err) != model.ENOTFOUND {
			return "", err
		}
	}
	return "", model.NotFound("shipment, container or tracking request")
}

// definitionBySlug reads the account's definition of slug for kind.
func (r *Resolver) definitionBySlug(ctx context.Context, accountID string, kind model.CustomFieldEntityType, slug string) (*model.CustomFieldDefinition, error) {
	def, err := r.DB.FindCustomFieldDefinitionBySlug(ctx, accountID, string(kind), slug)
	if model.ErrorCode(err) == model.ENOTFOUND {
		return nil, model.Errorf(model.ENOTFOUND, "custom field %q not found", slug)
	}
	return def, err
}

// normalizeValue checks value against def (and its options).
func normalizeValue(ctx context.Context, l *load.Loaders, def *model.CustomFieldDefinition, value model.JSON) (model.JSON, error) {
	var options []*model.CustomFieldOption
	if def.DataType.HasOptions() {
		var err error
		if options, err = loadMany(ctx, l.OptionsByDefinitionID, def.ID); err != nil {
			return nil, err
		}
	}
	return model.NormalizeCustomFieldValue(def, options, value)
}

// valueTarget is what a write of the value of the definition slug on an
// entity of kind needs: the writer, the request's loaders, the entity's id
// (found in the account) and the definition.
func (r *Resolver) valueTarget(ctx context.Context, p *model.Principal, kind model.CustomFieldEntityType, entityID, slug string, invalid error) (*model.Principal, *load.Loaders, string, *model.CustomFieldDefinition, error) {
	if err := checkRequest(p, invalid); err != nil {
		return nil, nil, "", nil, err
	}
	p, l, err := writer(ctx, p)
	if err != nil {
		return nil, nil, "", nil, err
	}
	if entityID, err = entityOf(ctx, l, kind, entityID); err != nil {
		return nil, nil, "", nil, err
	}
	if invalid != nil {
		return nil, nil, "", nil, invalid
	}
	def, err := r.definitionBySlug(ctx, p.AccountID, kind, slug)
	if err != nil {
		return nil, nil, "", nil, err
	}
	return p, l, entityID, def, nil
}

// SetValue runs c: the value set, or nil after a clear.
func (r *Resolver) SetValue(ctx context.Context, p *model.Principal, c SetValue) (*model.CustomField, error) {
	p, l, entityID, def, err := r.valueTarget(ctx, p, c.EntityType, c.EntityID, c.APISlug, c.Invalid)
	if err != nil {
		return nil, err
	}
	v, err := normalizeValue(ctx, l, def, c.Value)
	if err != nil {
		return nil, err
	}
	defer l.CustomFieldsByEntityID.Clear(entityID)
	switch {
	case v == nil && c.create:
		return nil, invalidField("value", "value is required")
	case v == nil:
		_, err := r.DB.DeleteCustomField(ctx, p.AccountID, def.ID, entityID)
		if model.ErrorCode(err) == model.ENOTFOUND {
			err = nil // already unset
		}
		return nil, err
	case c.create:
		return r.DB.CreateCustomField(ctx, p.AccountID, def, entityID, v)
	}
	return r.DB.SetCustomField(ctx, p.AccountID, def, entityID, v)
}

// RemoveValue deletes the value of the definition slug on an entity of
// kind and returns it; an unset value is not found.
func (r *Resolver) RemoveValue(ctx context.Context, p *model.Principal, kind model.CustomFieldEntityType, entityID, slug string) (*model.CustomField, error) {
	p, l, entityID, def, err := r.valueTarget(ctx, p, kind, entityID, slug, nil)
	if err != nil {
		return nil, err
	}
	cf, err := r.DB.DeleteCustomField(ctx, p.AccountID, def.ID, entityID)
	if model.ErrorCode(err) == model.ENOTFOUND {
		return nil, model.Errorf(model.ENOTFOUND, "custom field %q is not set", slug)
	}
	l.CustomFieldsByEntityID.Clear(entityID)
	return cf, err
}

// CreateValue runs c and returns the value created.
func (r *Resolver) CreateValue(ctx context.Context, p *model.Principal, c CreateValue) (*model.CustomField, error) {
	if err := checkRequest(p, c.Invalid); err != nil {
		return nil, err
	}
	l, err := load.For(ctx)
	if err != nil {
		return nil, err
	}
	kind := model.CustomFieldEntityType("")
	if c.EntityType != nil {
		kind = *c.EntityType
	} else if kind, err = entityKind(ctx, l, c.EntityID); err != nil {
		return nil, err
	}
	return r.SetValue(ctx, p, SetValue{EntityType: kind, EntityID: c.EntityID, APISlug: c.APISlug, Value: c.Value, Invalid: c.Invalid, create: true})
}

// UpdateValue runs c: the value set, or nil after a clear.
func (r *Resolver) UpdateValue(ctx context.Context, p *model.Principal, c UpdateValue) (*model.CustomField, error) {
	if err := checkRequest(p, c.Invalid); err != nil {
		return nil, err
	}
	if _, err := mayWrite(p); err != nil {
		return nil, err
	}
	cf, err := r.CustomField(ctx, p, c.ID, nil)
	if err != nil {
		return nil, err
	}
	if c.Invalid != nil {
		return nil, c.Invalid
	}
	return r.SetValue(ctx, p, SetValue{EntityType: cf.EntityKind(), EntityID: cf.EntityID, APISlug: cf.APISlug, Value: c.Value})
}

// DeleteValue deletes the value id and returns it.
func (r *Resolver) DeleteValue(ctx context.Context, p *model.Principal, id string) (*model.CustomField, error) {
	p, l, err := writer(ctx, p)
	if err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, model.NotFound("custom field")
	}
	cf, err := r.DB.DeleteCustomFieldByID(ctx, p.AccountID, id)
	if err != nil {
		return nil, err
	}
	l.CustomFieldsByEntityID.Clear(cf.EntityID)
	return cf, nil
}
