package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// Custom field values, on a shipment or container by the definition's
// api_slug, and as records of their own:
//
//	GET    /v2/shipments/{shipment_id}/custom_fields
//	POST   /v2/shipments/{shipment_id}/custom_fields              201 (create or update)
//	GET    /v2/shipments/{shipment_id}/custom_fields/{api_slug}   (a value's self link)
//	PATCH  /v2/shipments/{shipment_id}/custom_fields/{api_slug}   200; null clears: 204
//	DELETE /v2/shipments/{shipment_id}/custom_fields/{api_slug}   204
//	… the same under /v2/containers/{container_id}/custom_fields and
//	  /v2/tracking_requests/{tracking_request_id}/custom_fields
//	GET    /v2/custom_fields
//	POST   /v2/custom_fields                                      201
//	GET    /v2/custom_fields/{id}
//	PATCH  /v2/custom_fields/{id}                                 200; null clears: 204
//	DELETE /v2/custom_fields/{id}                                 200 with the deleted value
//
// A value exists only while it is set: a clear (value null) deletes it, so
// there is nothing to answer with but 204 No Content (JSON:API's answer to
// an update that leaves nothing to show), and afterwards the value is
// absent from every list and its self link is a 404.

var customFieldAll = endpoint{
	Serializer: "V2::CustomFieldSerializer",
	Filters:    []string{"filter[entity_type]", "filter[entity_id]", "filter[definition_id]"},
	Paged:      true,
}

// entityRoute is a shipment, container or tracking request path with
// custom fields.
type entityRoute struct {
	kind  model.CustomFieldEntityType
	param string // path wildcard of the entity's id
	what  string // "shipment", for not found
}

var (
	shipmentFields  = entityRoute{kind: "Shipment", param: "shipment_id", what: "shipment"}
	containerFields = entityRoute{kind: "Container", param: "container_id", what: "container"}
	requestFields   = entityRoute{kind: "TrackingRequest", param: "tracking_request_id", what: "tracking request"}
)

func (s *server) listEntityCustomFields(e entityRoute) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		serveList(s, w, r, customFieldLst, func(ctx context.Context, p *params) (listPage[*model.CustomField], error) {
			all, err := s.res.CustomFieldsOf(ctx, who(r), e.kind, r.PathValue(e.param))
			if err != nil {
				return listPage[*model.CustomField]{}, err
			}
			return memoryPage(all, p.Page), nil
		}, plain(customFieldResource))
	}
}

// getEntityCustomField answers a value's self link: the value of the slug
// on the entity, 404 when it is not set.
func (s *server) getEntityCustomField(e entityRoute) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		serveOne(s, w, r, customFieldOne, func(ctx context.Context, p *model.Principal, id string, _ *resolve.Plan) (*model.CustomField, error) {
			return s.res.EntityCustomField(ctx, p, e.kind, r.PathValue(e.param), r.PathValue("api_slug"))
		}, plain(customFieldResource))
	}
}

// createEntityCustomField sets the value of a custom field of the entity,
// whether or not it has one yet (201 either way); the body names the
// definition by api_slug, as the OpenAPI document shows. This is the
// public service's documented create-or-update ("find_or_initialize_by"),
// which the SDK's setCustomField relies on to change a value; a null value
// is refused (PATCH or DELETE clears).
func (s *server) createEntityCustomField(e entityRoute) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		entityID := r.PathValue(e.param)
		if _, err := parseParams(r, customFieldOne); err != nil {
			jsonapi.WriteError(w, r, err)
			return
		}
		attrs, bad := writeBody(r, "custom_field")
		// An attribute error is answered once the entity is found (404
		// first), as the resolver layer orders it.
		slug, value, invalid := newValueAttributes(attrs)
		cf, err := s.res.SetValue(ctx, who(r), resolve.SetValue{EntityType: e.kind, EntityID: entityID, APISlug: slug, Value: value, Invalid: firstErr(bad, invalid)})
		if err == nil && cf == nil { // not reached: a non-null value is never a clear
			err = jsonapi.AttrError("value", "value is required")
		}
		s.writeCreated(w, r, cf, err)
	}
}

// newValueAttributes reads api_slug (a required string) and value
// (required, not null) of a new value.
func newValueAttributes(attrs jsonapi.Attributes) (string, model.JSON, error) {
	slug, err := attrs.Text("api_slug", true)
	if err != nil {
		return "", nil, err
	}
	value, ok := attrs["value"]
	if !ok || jsonapi.IsNull(value) {
		return "", nil, jsonapi.AttrError("value", "value is required")
	}
	return *slug, model.JSON(value), nil
}

func (s *server) writeCreated(w http.ResponseWriter, r *http.Request, cf *model.CustomField, err error) {
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	b := s.newBuilder(s.baseURL(r), nil)
	data := customFieldResource(b, cf)
	w.Header().Set("Location", data.Links.Self)
	b.writeOne(w, r, http.StatusCreated, data)
}

// patchEntityCustomField sets (or, with null, clears) the value of a
// custom field of the entity; a definition with no value on it yet gets
// one. The value is checked against the definition's data type.
func (s *server) patchEntityCustomField(e entityRoute) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		entityID, slug := r.PathValue(e.param), r.PathValue("api_slug")
		if _, err := parseParams(r, customFieldOne); err != nil {
			jsonapi.WriteError(w, r, err)
			return
		}
		attrs, bad := writeBody(r, "custom_field")
		c := resolve.SetValue{EntityType: e.kind, EntityID: entityID, APISlug: slug}
		c.Value, c.Invalid = requiredValue(attrs, bad)
		cf, err := s.res.SetValue(ctx, who(r), c)
		s.writeUpdated(w, r, cf, err)
	}
}

// writeUpdated answers a value update: the value, or 204 after a clear.
func (s *server) writeUpdated(w http.ResponseWriter, r *http.Request, cf *model.CustomField, err error) {
	switch {
	case err != nil:
		jsonapi.WriteError(w, r, err)
	case cf == nil:
		w.WriteHeader(http.StatusNoContent)
	default:
		b := s.newBuilder(s.baseURL(r), nil)
		b.writeOne(w, r, http.StatusOK, customFieldResource(b, cf))
	}
}

// deleteEntityCustomField deletes the value of the slug on the entity: 204,
// as the OpenAPI document says; a value that is not set is a 404.
func (s *server) deleteEntityCustomField(e entityRoute) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, err := parseParams(r, customFieldOne); err != nil {
			jsonapi.WriteError(w, r, err)
			return
		}
		ctx, entityID, slug := r.Context(), r.PathValue(e.param), r.PathValue("api_slug")
		if _, err := s.res.RemoveValue(ctx, who(r), e.kind, entityID, slug); err != nil {
			jsonapi.WriteError(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// ---------------------------------------------------------------- /v2/custom_fields

func (s *server) listCustomFields(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, customFieldAll, func(ctx context.Context, p *params) (listPage[*model.CustomField], error) {
		var none listPage[*model.CustomField]
		entityType, err := entityTypeFilter(p)
		if err != nil {
			return none, err
		}
		f := model.CustomFieldFilter{EntityType: entityType}
		if f.EntityID, err = p.IDFilter("filter[entity_id]"); err != nil {
			return none, err
		}
		if f.DefinitionID, err = p.IDFilter("filter[definition_id]"); err != nil {
			return none, err
		}
		pg, err := s.res.CustomFields(ctx, who(r), resolve.CustomFieldQuery{Filter: f, Page: resolve.PageArgs{Page: &p.Page}, Plan: p.plan})
		if err != nil {
			return none, err
		}
		return fromPage(pg, func(ctx context.Context) (int, error) { return s.res.CountCustomFields(ctx, who(r), f) }), nil
	}, plain(customFieldResource))
}

// entityTypeFilter reads filter[entity_type]: an entity type as the
// definitions name it (Shipment, Container, TrackingRequest), in any case,
// or as relationships type it (shipment, container, tracking_request).
func entityTypeFilter(p *params) (*model.CustomFieldEntityType, error) {
	const name = "filter[entity_type]"
	v := strings.ReplaceAll(p.Filter(name), "_", "")
	if v == "" {
		return nil, nil
	}
	for _, x := range model.EntityTypes.Values() {
		if strings.EqualFold(x, v) {
			e := model.CustomFieldEntityType(x)
			return &e, nil
		}
	}
	return nil, jsonapi.BadParam(name, "%s must be one of %s", name, strings.Join(model.EntityTypes.Values(), ", "))
}

func (s *server) getCustomField(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, customFieldOne, (s.res.CustomField), plain(customFieldResource))
}

// createCustomField sets a value on the entity of
// data.relationships.entity (a shipment, container or tracking request),
// the definition named by api_slug.
func (s *server) createCustomField(w http.ResponseWriter, r *http.Request) {
	if _, err := parseParams(r, customFieldOne); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, rels, err := jsonapi.ReadResource(r, "custom_field")
	var kind model.CustomFieldEntityType
	var entityID string
	if err == nil {
		kind, entityID, err = entityLinkage(rels)
	}
	slug, value, invalid := newValueAttributes(attrs)
	cf, err := s.res.CreateValue(r.Context(), who(r), resolve.CreateValue{EntityID: entityID, EntityType: &kind, APISlug: slug, Value: value, Invalid: firstErr(resolve.Malformed(err), invalid)})
	s.writeCreated(w, r, cf, err)
}

// entityLinkage reads relationships.entity.data: {"type": "shipment",
// "container" or "tracking_request", "id": …}. A body without it, or with another shape, is a
// 400 pointing at it.
func entityLinkage(rels map[string]json.RawMessage) (model.CustomFieldEntityType, string, error) {
	const pointer = "/data/relationships/entity/data"
	raw, ok := rels["entity"]
	if !ok {
		return "", "", jsonapi.ShapeError("/data/relationships/entity", "relationships.entity is required: the shipment, container or tracking request to set the value on")
	}
	data, ok := jsonapi.ToOneData(raw)
	if !ok || data == nil || data.ID == "" {
		return "", "", jsonapi.ShapeError(pointer, "relationships.entity.data must be {\"type\": \"shipment\", \"container\" or \"tracking_request\", \"id\": …}")
	}
	switch data.Type {
	case "shipment":
		return "Shipment", model.NormalizeID(data.ID), nil
	case "container":
		return "Container", model.NormalizeID(data.ID), nil
	case model.TrackingRequestType:
		return "TrackingRequest", model.NormalizeID(data.ID), nil
	}
	return "", "", jsonapi.ShapeError(pointer+"/type", "relationships.entity.data.type must be \"shipment\", \"container\" or \"tracking_request\"")
}

func (s *server) patchCustomField(w http.ResponseWriter, r *http.Request) {
	ctx, id := r.Context(), r.PathValue("id")
	if _, err := parseParams(r, customFieldOne); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, bad := writeBody(r, "custom_field")
	c := resolve.UpdateValue{ID: id}
	c.Value, c.Invalid = requiredValue(attrs, bad)
	cf, err := s.res.UpdateValue(ctx, who(r), c)
	s.writeUpdated(w, r, cf, err)
}

// requiredValue reads the value of a PATCH (null clears the field); bad is
// the body's error, reported first.
func requiredValue(attrs jsonapi.Attributes, bad error) (model.JSON, error) {
	if bad != nil {
		return nil, bad
	}
	value, ok := attrs["value"]
	if !ok {
		return nil, jsonapi.AttrError("value", "value is required (null clears the field)")
	}
	return model.JSON(value), nil
}

// deleteCustomField answers 200 with the deleted value, as an option
// delete does, so a client sees what went.
func (s *server) deleteCustomField(w http.ResponseWriter, r *http.Request) {
	if _, err := parseParams(r, customFieldOne); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	cf, err := s.res.DeleteValue(r.Context(), who(r), r.PathValue("id"))
	serveDeleted(s, w, r, cf, err, customFieldResource)
}
