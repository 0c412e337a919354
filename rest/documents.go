package rest

import (
	"context"
	"net/http"

	"shipgraph/catalog"
	"shipgraph/model"
	"shipgraph/resolve"
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
