package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"shipgraph/catalog"
	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// GET /v2/documents and GET /v2/documents/{id}.

var documentIncludes = includes(catalog.Document)

var (
	documentList = endpoint{
		Serializer: "V2::DocumentSerializer",
		Includes:   documentIncludes,
		Sorts:      []string{"document_type", "added_by", "created_at"},
		Filters:    []string{"filter[filename]", "filter[reference]", "filter[document_types]"},
		Paged:      true,
		Cursors:    true,
	}
	documentItem = endpoint{Serializer: "V2::DocumentSerializer", Includes: documentIncludes}
)

func (s *server) listDocuments(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, documentList, func(ctx context.Context, p *params) (listPage[*model.Document], error) {
		filter := model.DocumentFilter{
			Filename:      p.Filter("filter[filename]"),
			Reference:     p.Filter("filter[reference]"),
			DocumentTypes: p.ListFilter("filter[document_types]"),
		}
		// Without sort the list's default applies: newest first
		// (-created_at), ties broken by id.
		pg, err := s.res.Documents(ctx, who(r), resolve.DocumentQuery{Filter: filter, Order: p.Order(), Page: p.pageArgs(), Plan: p.plan})
		if err != nil {
			return listPage[*model.Document]{}, p.CursorError(err)
		}
		return fromPage(pg, func(ctx context.Context) (int, error) { return s.res.CountDocuments(ctx, who(r), filter) }), nil
	}, withIncludes)
}

func (s *server) getDocument(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, documentItem, (s.res.Document), withIncludes)
}

type representationAttributes struct {
	SchemaVersion string     `json:"schema_version"`
	Payload       model.JSON `json:"payload"`
	CreatedAt     timestamp  `json:"created_at"`
	UpdatedAt     timestamp  `json:"updated_at"`
}

func representationResource(d *model.DocumentRepresentation) *Resource {
	payload := d.Payload
	if payload == nil {
		payload = model.JSON("{}")
	}
	return &Resource{ID: d.ID, Type: "document_representation", Attributes: representationAttributes{
		SchemaVersion: d.SchemaVersion, Payload: payload, CreatedAt: ts(d.CreatedAt), UpdatedAt: ts(d.UpdatedAt),
	}}
}

// Document writes and the document type list:
//
//	PATCH  /v2/documents/{id}     document_type_manual; 200 with the document
//	DELETE /v2/documents/{id}     204
//	GET    /v2/documents/types    {"document_types": [{"code", "label"}]}
//
// The OpenAPI document's PATCH also takes extracted_data_manual; Shipgraph
// keeps no manual extraction, so it is a 422 rather than silently dropped.

func (s *server) updateDocument(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, documentItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, bad := writeBody(r, "document")
	// An attribute error is answered once the document is found (404
	// first), as the resolver layer orders it.
	patch, invalid := documentPatch(attrs)
	d, err := s.res.UpdateDocument(r.Context(), who(r), resolve.UpdateDocument{ID: r.PathValue("id"), DocumentTypeManual: patch.DocumentTypeManual, Invalid: firstErr(bad, invalid)})
	serveWritten(s, w, r, p, d, err, withIncludes)
}

// documentPatch reads document_type_manual (a string, or null to clear).
func documentPatch(attrs jsonapi.Attributes) (p model.DocumentPatch, err error) {
	if err := attrs.Only("%s cannot be changed; a document's editable attribute is document_type_manual", "document_type_manual"); err != nil {
		if e, _ := model.AsError(err); e.Field == "extracted_data_manual" {
			err = jsonapi.AttrError(e.Field, "extracted_data_manual is not supported: Shipgraph keeps no manual extraction")
		}
		return p, err
	}
	v, set, err := attrs.NullableText("document_type_manual")
	if set {
		p.DocumentTypeManual = model.Given(v)
	}
	return p, err
}

func (s *server) deleteDocument(w http.ResponseWriter, r *http.Request) {
	if _, err := parseParams(r, documentItem); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	if _, err := s.res.DeleteDocument(r.Context(), who(r), r.PathValue("id")); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// documentTypes answers the OpenAPI document's shape, which is not a
// JSON:API document (no data member): application/json.
func (s *server) documentTypes(w http.ResponseWriter, r *http.Request) {
	if _, err := parseParams(r, endpoint{Serializer: "V2::DocumentTypeSerializer"}); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	types, err := s.res.DocumentTypes(r.Context(), who(r))
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(map[string]any{"document_types": types}); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b.Bytes())
}
