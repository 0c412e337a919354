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
	err = attrs.Read(
		jsonapi.Enum("entity_type", model.EntityTypes.Values(), &in.EntityType),
		jsonapi.Str("api_slug", true, &in.APISlug),
		jsonapi.Str("display_name", true, &in.DisplayName),
		jsonapi.Enum("data_type", model.DataTypes.Values(), &in.DataType),
		jsonapi.Nullable("description", &in.Description),
		jsonapi.Nullable("reference_type", &in.ReferenceType),
		jsonapi.Nullable("default_format", &in.DefaultFormat),
		jsonapi.JSONValue("validation", &in.Validation),
		jsonapi.JSONValue("default_value", &in.DefaultValue),
	)
	return in, err
}

// definitionPatch reads the editable attributes of a definition update
// (the OpenAPI document's: display_name, description, validation,
// default_format, default_value). Entity type, api_slug and data type
// cannot change (the resolver layer checks them against the definition).
func definitionPatch(attrs jsonapi.Attributes) (p model.CustomFieldDefinitionPatch, err error) {
	err = attrs.Read(
		jsonapi.StrP("display_name", &p.DisplayName),
		jsonapi.NullableGiven("description", &p.Description),
		jsonapi.NullableGiven("default_format", &p.DefaultFormat),
		jsonapi.JSONGiven("validation", &p.Validation),
		jsonapi.JSONGiven("default_value", &p.DefaultValue),
	)
	return p, err
}
