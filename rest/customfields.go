package rest

import (
	"context"
	"net/http"

	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// Custom field definitions, their options, and the custom fields of a
// shipment:
//
//	GET    /v2/custom_field_definitions
//	GET    /v2/custom_field_definitions/{id}
//	GET    /v2/custom_field_definitions/{definition_id}/options
//	POST   /v2/custom_field_definitions/{definition_id}/options
//	GET    /v2/custom_field_definitions/{definition_id}/options/{option_id}
//	PATCH  /v2/custom_field_definitions/{definition_id}/options/{option_id}
//	DELETE /v2/custom_field_definitions/{definition_id}/options/{option_id}
//
// and the rendering of a value (the value endpoints: customfield_values.go).
//
// Writes follow the resolver layer's order: a viewer key is refused (403) before
// anything else, an unknown record (or another account's) is 404 before a
// value is judged (422).

var (
	definitionList = endpoint{
		Serializer: "V2::CustomFieldDefinitionSerializer",
		Filters:    []string{"filter[entity_type]", "filter[data_type]", "filter[display_name]"},
		Paged:      true,
		Cursors:    true,
	}
	definitionItem = endpoint{Serializer: "V2::CustomFieldDefinitionSerializer"}
	optionList     = endpoint{Serializer: "V2::CustomFieldOptionSerializer", Paged: true}
	optionItem     = endpoint{Serializer: "V2::CustomFieldOptionSerializer"}
	customFieldLst = endpoint{Serializer: "V2::CustomFieldSerializer", Paged: true}
	customFieldOne = endpoint{Serializer: "V2::CustomFieldSerializer"}
)

// ---------------------------------------------------------------- definitions

func (s *server) listDefinitions(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, definitionList, func(ctx context.Context, p *params) (listPage[*model.CustomFieldDefinition], error) {
		var none listPage[*model.CustomFieldDefinition]
		entityType, err := entityTypeFilter(p)
		if err != nil {
			return none, err
		}
		dataType, err := jsonapi.EnumFilter[model.CustomFieldDataType](p.Query, "filter[data_type]", model.DataTypes.Values())
		if err != nil {
			return none, err
		}
		filter := model.CustomFieldDefinitionFilter{DisplayName: p.Filter("filter[display_name]"), EntityType: entityType, DataType: dataType}
		pg, err := s.res.Definitions(ctx, who(r), resolve.DefinitionQuery{Filter: filter, Page: p.pageArgs(), Plan: p.plan})
		if err != nil {
			return none, err
		}
		return fromPage(pg, func(ctx context.Context) (int, error) { return s.res.CountDefinitions(ctx, who(r), filter) }), nil
	}, plain(definitionResource))
}

func (s *server) getDefinition(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, definitionItem, (s.res.Definition), plain(definitionResource))
}

// ---------------------------------------------------------------- options

func (s *server) listOptions(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, optionList, func(ctx context.Context, p *params) (listPage[*model.CustomFieldOption], error) {
		all, err := s.res.Options(ctx, who(r), r.PathValue("definition_id"))
		if err != nil {
			return listPage[*model.CustomFieldOption]{}, p.CursorError(err)
		}
		return memoryPage(all, p.Page), nil
	}, plain(optionResource))
}

func (s *server) getOption(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, optionItem, func(ctx context.Context, p *model.Principal, _ string, _ *resolve.Plan) (*model.CustomFieldOption, error) {
		return s.res.Option(ctx, p, r.PathValue("definition_id"), r.PathValue("option_id"))
	}, plain(optionResource))
}

func (s *server) createOption(w http.ResponseWriter, r *http.Request) {
	defID := r.PathValue("definition_id")
	p, err := parseParams(r, optionItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, bad := writeBody(r, "custom_field_option")
	// An attribute error is answered once the definition is found (404
	// first), as the resolver layer orders it.
	in, invalid := optionInput(attrs)
	o, err := s.res.CreateOption(r.Context(), who(r), resolve.CreateOption{DefinitionID: defID, Input: in, Invalid: firstErr(bad, invalid)})
	serveCreated(s, w, r, p, o, err, plain(optionResource))
}

func (s *server) updateOption(w http.ResponseWriter, r *http.Request) {
	defID, optID := r.PathValue("definition_id"), r.PathValue("option_id")
	p, err := parseParams(r, optionItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, bad := writeBody(r, "custom_field_option")
	patch, invalid := optionPatch(attrs)
	o, err := s.res.UpdateOption(r.Context(), who(r), resolve.UpdateOption{DefinitionID: defID, OptionID: optID, Patch: patch, Invalid: firstErr(bad, invalid)})
	serveWritten(s, w, r, p, o, err, plain(optionResource))
}

// deleteOption answers 200 with the deleted option, so a client sees what
// went. An option that stored values still use is refused (422).
func (s *server) deleteOption(w http.ResponseWriter, r *http.Request) {
	if _, err := parseParams(r, optionItem); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	o, err := s.res.DeleteOption(r.Context(), who(r), r.PathValue("definition_id"), r.PathValue("option_id"))
	serveDeleted(s, w, r, o, err, optionResource)
}

// optionInput reads the attributes of a new option: label and value are
// required strings, position an optional integer (null is none).
func optionInput(attrs jsonapi.Attributes) (in model.CustomFieldOptionInput, err error) {
	err = attrs.Read(jsonapi.Str("label", true, &in.Label), jsonapi.Str("value", true, &in.Value), jsonapi.IntP("position", &in.Position))
	return in, err
}

// optionPatch reads the attributes of an option update; each is optional.
// An explicit null clears the position; an absent one keeps it.
func optionPatch(attrs jsonapi.Attributes) (p model.CustomFieldOptionPatch, err error) {
	err = attrs.Read(jsonapi.StrP("label", &p.Label), jsonapi.StrP("value", &p.Value), jsonapi.IntGiven("position", &p.Position))
	return p, err
}

// ---------------------------------------------------------------- values

type customFieldAttributes struct {
	APISlug      string     `json:"api_slug"`
	Value        model.JSON `json:"value"`
	DisplayValue *string    `json:"display_value"`
}

// customFieldResource renders a value: value is the raw JSON of its data
// type (string, number, boolean, list of strings), display_value the human
// form (an enum's label, a formatted date).
func customFieldResource(b *builder, cf *model.CustomField) *Resource {
	self := b.base + "/v2/shipments/" + deref(cf.ShipmentID) + "/custom_fields/" + cf.APISlug
	switch {
	case cf.ContainerID != nil:
		self = b.base + "/v2/containers/" + *cf.ContainerID + "/custom_fields/" + cf.APISlug
	case cf.TrackingRequestID != nil:
		self = b.base + "/v2/tracking_requests/" + *cf.TrackingRequestID + "/custom_fields/" + cf.APISlug
	}
	return &Resource{
		ID:            cf.ID,
		Type:          "custom_field",
		Attributes:    customFieldAttributes{APISlug: cf.APISlug, Value: cf.Value, DisplayValue: cf.DisplayValue()},
		Relationships: b.linkage(cf, customFieldShape.members),
		Links:         &jsonapi.Links{Self: self},
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
