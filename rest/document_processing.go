package rest

import (
	"context"
	"net/http"

	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// Documents that are processed:
//
//	POST /v2/documents/{id}/reextract   202 {"status": "accepted"}
//	POST /v2/documents/{id}/reclassify  202
//	POST /v2/documents/{id}/relink      202
//	POST /v2/documents/{id}/rotate      {"degrees": 90|180|270}; 202, 422 for a document that is not an image
//	GET  /v2/document_schemas/{id}      the fields extracted per type (JSON:API, type document_schema)
//
// The POSTs answer once the job is enqueued; what it finds shows on the
// document and as the document.extracted / document.extraction_failed
// webhook events. Their bodies are the OpenAPI document's plain JSON.

var processEndpoint = endpoint{Serializer: "V2::DocumentSerializer"}

// accepted writes the 202 of a document job.
func accepted(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte(`{"status":"accepted"}` + "\n"))
}

// jobError answers what the resolver layer refuses of the document itself
// (no file, not an image: EINVALID without a member) as the OpenAPI
// document's 422, not as a malformed request's 400. An error of the HTTP
// layer (a body it could not read: 400, 413, 415) keeps its status.
func jobError(err error) error {
	if jsonapi.OwnStatus(err) {
		return err
	}
	if e, ok := model.AsError(err); ok && e.Code == model.EINVALID && e.Field == "" && e.Pointer == "" && e.Parameter == "" {
		return jsonapi.WithStatus(http.StatusUnprocessableEntity, e)
	}
	return err
}

// documentJob answers one of the job POSTs: no query parameters, no body
// needed, run.
func (s *server) documentJob(run func(ctx context.Context, p *model.Principal, id string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, err := parseParams(r, processEndpoint); err != nil {
			jsonapi.WriteError(w, r, err)
			return
		}
		if err := run(r.Context(), who(r), r.PathValue("id")); err != nil {
			jsonapi.WriteError(w, r, jobError(err))
			return
		}
		accepted(w)
	}
}

func (s *server) reextractDocument(w http.ResponseWriter, r *http.Request) {
	s.documentJob(s.res.ReextractDocument)(w, r)
}

func (s *server) reclassifyDocument(w http.ResponseWriter, r *http.Request) {
	s.documentJob(s.res.ReclassifyDocument)(w, r)
}

func (s *server) relinkDocument(w http.ResponseWriter, r *http.Request) {
	s.documentJob(s.res.RelinkDocument)(w, r)
}

// rotateDocument reads {"degrees": n} (also as JSON:API attributes). A
// viewer is refused before the body is read.
func (s *server) rotateDocument(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := who(r)
	if _, err := parseParams(r, processEndpoint); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, bad := writeBody(r, "document")
	c := resolve.RotateDocument{ID: r.PathValue("id")}
	deg, _, err := attrs.Integer("degrees")
	if deg != nil {
		c.Degrees = *deg
	}
	// degrees of the wrong type is answered before the document is looked
	// up, as the body's shape is.
	c.Invalid = firstErr(bad, resolve.Malformed(err))
	if err := s.res.RotateDocument(ctx, p, c); err != nil {
		jsonapi.WriteError(w, r, jobError(err))
		return
	}
	accepted(w)
}

type documentSchemaAttributes struct {
	DocumentType  string     `json:"document_type"`
	Label         string     `json:"label"`
	SchemaVersion string     `json:"schema_version"`
	FullVersion   string     `json:"full_version"`
	Current       bool       `json:"current"`
	Draft         bool       `json:"draft"`
	ActiveAt      *timestamp `json:"active_at"`
	SchemaFormat  string     `json:"schema_format"`
	Description   *string    `json:"description"`
	SchemaPayload model.JSON `json:"schema_payload"`
	CreatedAt     timestamp  `json:"created_at"`
	UpdatedAt     timestamp  `json:"updated_at"`
}

func (s *server) getDocumentSchema(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, endpoint{Serializer: "V2::DocumentSchemaSerializer"})
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	ds, err := s.res.DocumentSchema(r.Context(), who(r), r.PathValue("id"))
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	b := s.newBuilder(s.baseURL(r), p)
	b.writeOne(w, r, http.StatusOK, documentSchemaResource(b, ds))
}

func documentSchemaResource(b *builder, d *model.DocumentSchema) *Resource {
	desc := d.Description
	return &Resource{ID: d.ID, Type: "document_schema", Attributes: documentSchemaAttributes{
		DocumentType: d.DocumentType, Label: d.Label, SchemaVersion: d.SchemaVersion, FullVersion: d.ID,
		Current: d.Current, Draft: d.Draft, ActiveAt: tsp(&d.ActiveAt), SchemaFormat: "json_schema",
		Description: &desc, SchemaPayload: d.Payload, CreatedAt: ts(d.ActiveAt), UpdatedAt: ts(d.ActiveAt),
	}, Links: &jsonapi.Links{Self: b.base + "/v2/document_schemas/" + d.ID}}
}
