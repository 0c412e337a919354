package rest

import (
	"net/http"

	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// Custom field definition writes:
//
//	POST   /v2/custom_field_definitions        201
//	PATCH  /v2/custom_field_definitions/{id}   200
//	DELETE /v2/custom_field_definitions/{id}   200 with the deleted definition
//
// Deleting a definition deletes its options and every value set for it.

func (s *server) createDefinition(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, definitionItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, bad := writeBody(r, "custom_field_definition")
	in, invalid := definitionInput(attrs)
	d, err := s.res.CreateDefinition(r.Context(), who(r), resolve.CreateDefinition{Input: in, Invalid: firstErr(bad, invalid)})
	serveCreated(s, w, r, p, d, err, plain(definitionResource))
}

func (s *server) updateDefinition(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, definitionItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, bad := writeBody(r, "custom_field_definition")
	c := resolve.UpdateDefinition{ID: r.PathValue("id"), Fixed: map[string]*string{}}
	// The fixed attributes, as given: the resolver layer refuses a change.
	for _, name := range []string{"entity_type", "api_slug", "data_type"} {
		if _, ok := attrs[name]; ok {
			c.Fixed[name], _ = attrs.Text(name, false)
		}
	}
	var invalid error
	c.Patch, invalid = definitionPatch(attrs)
	c.Invalid = firstErr(bad, invalid)
	d, err := s.res.UpdateDefinition(r.Context(), who(r), c)
	serveWritten(s, w, r, p, d, err, plain(definitionResource))
}

// deleteDefinition answers 200 with the deleted definition, as an option
// delete does.
func (s *server) deleteDefinition(w http.ResponseWriter, r *http.Request) {
	if _, err := parseParams(r, definitionItem); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	d, err := s.res.DeleteDefinition(r.Context(), who(r), r.PathValue("id"))
	serveDeleted(s, w, r, d, err, definitionResource)
}

func definitionInput(attrs jsonapi.Attributes) (in model.CustomFieldDefinitionInput, err error) {
	et, err := attrs.OneOf("entity_type", model.EntityTypes.Values())
	if err != nil {
		return in, err
	}
	slug, err := attrs.Text("api_slug", true)
	if err != nil {
		return in, err
	}
	name, err := attrs.Text("display_name", true)
	if err != nil {
		return in, err
	}
	dt, err := attrs.OneOf("data_type", model.DataTypes.Values())
	if err != nil {
		return in, err
	}
	in = model.CustomFieldDefinitionInput{EntityType: model.CustomFieldEntityType(et), APISlug: *slug, DisplayName: *name, DataType: model.CustomFieldDataType(dt)}
	if in.Description, _, err = attrs.NullableText("description"); err != nil {
		return in, err
	}
	if in.ReferenceType, _, err = attrs.NullableText("reference_type"); err != nil {
		return in, err
	}
	if in.DefaultFormat, _, err = attrs.NullableText("default_format"); err != nil {
		return in, err
	}
	in.Validation, _ = attrs.Raw("validation")
	in.DefaultValue, _ = attrs.Raw("default_value")
	return in, nil
}

// definitionPatch reads the editable attributes of a definition update
// (the OpenAPI document's: display_name, description, validation,
// default_format, default_value). Entity type, api_slug and data type
// cannot change (the resolver layer checks them against the definition).
func definitionPatch(attrs jsonapi.Attributes) (p model.CustomFieldDefinitionPatch, err error) {
	if p.DisplayName, err = attrs.Text("display_name", false); err != nil {
		return p, err
	}
	for _, f := range []struct {
		name string
		dst  *model.Optional[*string]
	}{{"description", &p.Description}, {"default_format", &p.DefaultFormat}} {
		name, dst := f.name, f.dst
		v, set, err := attrs.NullableText(name)
		if err != nil {
			return p, err
		}
		if set {
			*dst = model.Given(v)
		}
	}
	if v, ok := attrs.Raw("validation"); ok {
		p.Validation = model.Given(v)
	}
	if v, ok := attrs.Raw("default_value"); ok {
		p.DefaultValue = model.Given(v)
	}
	return p, nil
}
