package graph

import (
	"context"

	"shipgraph/load"
	"shipgraph/model"
)

// Custom field values (issue 8): set, create, clear and delete on shipments
// and containers, by slug or by the value's id, and the account-wide list.
// The rules are the writes' (mutations.go): the key may write, the entity
// is the account's (404), then the definition by slug (404), then the
// value (422). A value exists only while it is set: clearing deletes it.

// entityOf reads a shipment or container of the account, as kind says
// ("Shipment", "Container"); not found when it is not one.
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
	}
	return "", model.Errorf(model.EINVALID, "custom fields are set on shipments and containers")
}

// entityKind finds which kind of entity id is (a shipment or container of
// the account); not found when it is neither.
func entityKind(ctx context.Context, l *load.Loaders, id string) (model.CustomFieldEntityType, error) {
	if _, err := entityOf(ctx, l, "Shipment", id); err == nil {
		return "Shipment", nil
	} else if model.ErrorCode(err) != model.ENOTFOUND {
		return "", err
	}
	if _, err := entityOf(ctx, l, "Container", id); err == nil {
		return "Container", nil
	} else if model.ErrorCode(err) != model.ENOTFOUND {
		return "", err
	}
	return "", model.NotFound("shipment or container")
}

// definitionBySlug reads the account's definition of slug for kind.
func (r *mutationResolver) definitionBySlug(ctx context.Context, accountID string, kind model.CustomFieldEntityType, slug string) (*model.CustomFieldDefinition, error) {
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
func (r *mutationResolver) valueTarget(ctx context.Context, kind model.CustomFieldEntityType, entityID, slug string) (*model.Principal, *load.Loaders, string, *model.CustomFieldDefinition, error) {
	p, l, err := writer(ctx)
	if err != nil {
		return nil, nil, "", nil, err
	}
	if entityID, err = entityOf(ctx, l, kind, entityID); err != nil {
		return nil, nil, "", nil, err
	}
	def, err := r.definitionBySlug(ctx, p.AccountID, kind, slug)
	if err != nil {
		return nil, nil, "", nil, err
	}
	return p, l, entityID, def, nil
}

// setValue sets the value of the definition slug on an entity of kind;
// null clears it (deletes the value, if any) and returns nil. With create,
// an entity that has a value already is a conflict and null is refused.
func (r *mutationResolver) setValue(ctx context.Context, kind model.CustomFieldEntityType, entityID, slug string, value model.JSON, create bool) (*model.CustomField, error) {
	p, l, entityID, def, err := r.valueTarget(ctx, kind, entityID, slug)
	if err != nil {
		return nil, err
	}
	v, err := normalizeValue(ctx, l, def, value)
	if err != nil {
		return nil, err
	}
	defer l.CustomFieldsByEntityID.Clear(entityID)
	switch {
	case v == nil && create:
		return nil, model.Errorf(model.EINVALID, "value is required").AtPointer("/data/attributes/value")
	case v == nil:
		_, err := r.DB.DeleteCustomField(ctx, p.AccountID, def.ID, entityID)
		if model.ErrorCode(err) == model.ENOTFOUND {
			err = nil // already unset
		}
		return nil, err
	case create:
		return r.DB.CreateCustomField(ctx, p.AccountID, def, entityID, v)
	}
	return r.DB.SetCustomField(ctx, p.AccountID, def, entityID, v)
}

// removeValue deletes the value of the definition slug on an entity of
// kind and returns it; an unset value is not found.
func (r *mutationResolver) removeValue(ctx context.Context, kind model.CustomFieldEntityType, entityID, slug string) (*model.CustomField, error) {
	p, l, entityID, def, err := r.valueTarget(ctx, kind, entityID, slug)
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

func (r *mutationResolver) createValue(ctx context.Context, in model.CustomFieldInput) (*model.CustomField, error) {
	if _, err := model.RequireWrite(ctx); err != nil {
		return nil, err
	}
	l, err := load.For(ctx)
	if err != nil {
		return nil, err
	}
	kind := model.CustomFieldEntityType("")
	if in.EntityType != nil {
		kind = *in.EntityType
	} else if kind, err = entityKind(ctx, l, in.EntityID); err != nil {
		return nil, err
	}
	return r.setValue(ctx, kind, in.EntityID, in.APISlug, in.Value, true)
}

// valueByID reads one value of the account; nil when there is none.
func (r *Resolver) valueByID(ctx context.Context, id string) (*model.CustomField, error) {
	p, err := model.RequirePrincipal(ctx)
	if err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, nil
	}
	cfs, err := r.DB.CustomFieldsByIDs(ctx, p.AccountID, []string{id})
	if err != nil || len(cfs) == 0 {
		return nil, err
	}
	return cfs[0], nil
}

// updateValue sets (or with null clears) a value found by its id.
func (r *mutationResolver) updateValue(ctx context.Context, id string, value model.JSON) (*model.CustomField, error) {
	if _, err := model.RequireWrite(ctx); err != nil {
		return nil, err
	}
	cf, err := r.valueByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if cf == nil {
		return nil, model.NotFound("custom field")
	}
	kind := model.CustomFieldEntityType("Shipment")
	if cf.ContainerID != nil {
		kind = "Container"
	}
	return r.setValue(ctx, kind, cf.EntityID, cf.APISlug, value, false)
}

func (r *mutationResolver) deleteValue(ctx context.Context, id string) (*model.CustomField, error) {
	p, l, err := writer(ctx)
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

func (r *queryResolver) listCustomFields(ctx context.Context, a pageArgs, filter *model.CustomFieldFilter) (*model.CustomFieldConnection, error) {
	p, err := model.RequirePrincipal(ctx)
	if err != nil {
		return nil, err
	}
	o := defaultOrder
	var f model.CustomFieldFilter
	if filter != nil {
		f = *filter
	}
	req, empty, err := pageRequest(a, o)
	if err != nil {
		return nil, err
	}
	conn := &model.CustomFieldConnection{Filter: f, Edges: []*model.CustomFieldEdge{}, Nodes: []*model.CustomField{}, PageInfo: &model.PageInfo{}}
	if empty {
		return conn, nil
	}
	page, err := r.DB.ListCustomFields(ctx, p.AccountID, f, req)
	if err != nil {
		return nil, err
	}
	cursors, info := pageInfo(page, o, func(c *model.CustomField) string { return c.ID }, selectsEdges(ctx))
	conn.PageInfo, conn.Nodes = info, page.Items
	for i, c := range page.Items {
		if cursors != nil {
			conn.Edges = append(conn.Edges, &model.CustomFieldEdge{Cursor: cursors[i], Node: c})
		}
	}
	if err := load.Load(ctx, page.Items, nodesPlan(ctx, "CustomField")); err != nil {
		return nil, err
	}
	return conn, nil
}
