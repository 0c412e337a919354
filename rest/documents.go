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
		serializer: "V2::DocumentSerializer",
		includes:   documentIncludes,
		sorts:      []string{"document_type", "added_by", "created_at"},
		filters:    []string{"filter[filename]", "filter[reference]", "filter[document_types]"},
		paged:      true,
		cursors:    true,
	}
	documentItem = endpoint{serializer: "V2::DocumentSerializer", includes: documentIncludes}
)

func (s *server) listDocuments(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, documentList, func(ctx context.Context, p *params) (listPage[*model.Document], error) {
		filter := model.DocumentFilter{
			Filename:      p.filter("filter[filename]"),
			Reference:     p.filter("filter[reference]"),
			DocumentTypes: p.listFilter("filter[document_types]"),
		}
		// Without sort the list's default applies: newest first
		// (-created_at), ties broken by id.
		pg, err := s.res.Documents(ctx, who(r), resolve.DocumentQuery{Filter: filter, Order: p.sortOrder(), Page: p.pageArgs(), Plan: p.plan})
		if err != nil {
			return listPage[*model.Document]{}, p.cursorError(err)
		}
		return fromPage(pg, func(ctx context.Context) (int, error) { return s.res.CountDocuments(ctx, who(r), filter) }), nil
	}, (*builder).documents)
}

func (s *server) getDocument(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, documentItem, (s.res.Document), (*builder).documents)
}

// documents renders documents with their linkage and the includes of p.
// Statements: one per to-many relationship (shipments, cargos: linkage is
// always needed), one per included to-one relationship, and, when shipments
// are included, one for their containers linkage.
func (b *builder) documents(ctx context.Context, docs []*model.Document, p *params) ([]*Resource, error) {
	return renderAll(b, ctx, docs, p, documentShape)
}

type documentAttributes struct {
	ID                  string               `json:"id"`
	Name                string               `json:"name"`
	DocumentType        string               `json:"document_type"`
	DocumentTypeManual  *string              `json:"document_type_manual"`
	ClassificationNotes *string              `json:"classification_notes"`
	Source              model.DocumentSource `json:"source"`
	FileName            string               `json:"file_name"`
	FileContentType     *string              `json:"file_content_type"`
	FileSizeBytes       *int64               `json:"file_size_bytes"`
	CreatedAt           timestamp            `json:"created_at"`
	UpdatedAt           timestamp            `json:"updated_at"`
}

// documentResource renders a document; its shipments and cargos linkage
// must have been loaded.
func (b *builder) documentResource(d *model.Document) *Resource {
	self := b.base + "/v2/documents/" + d.ID
	return &Resource{
		ID:   d.ID,
		Type: "document",
		Attributes: documentAttributes{
			ID:                  d.ID,
			Name:                d.Name,
			DocumentType:        d.DocumentType,
			DocumentTypeManual:  d.DocumentTypeManual,
			ClassificationNotes: d.ClassificationNotes,
			Source:              d.Source,
			FileName:            d.FileName,
			FileContentType:     d.FileContentType,
			FileSizeBytes:       d.FileSizeBytes,
			CreatedAt:           ts(d.CreatedAt),
			UpdatedAt:           ts(d.UpdatedAt),
		},
		Relationships: b.linkage(d, documentShape.members),
		// The download link is the documented endpoint that hands out a
		// (presigned) file URL.
		Links: &Links{Self: self, Download: self + "/download_url"},
	}
}

type accountAttributes struct {
	CompanyName string `json:"company_name"`
}

func accountResource(a *model.Account) *Resource {
	return &Resource{ID: a.ID, Type: "account", Attributes: accountAttributes{CompanyName: a.CompanyName}}
}

type userAttributes struct {
	Email     string    `json:"email"`
	FirstName string    `json:"first_name"`
	LastName  string    `json:"last_name"`
	CreatedAt timestamp `json:"created_at"`
}

func userResource(u *model.User) *Resource {
	return &Resource{ID: u.ID, Type: "user", Attributes: userAttributes{
		Email: u.Email, FirstName: u.FirstName, LastName: u.LastName, CreatedAt: ts(u.CreatedAt),
	}}
}

type emailSubmissionAttributes struct {
	Subject     *string    `json:"subject"`
	BodyPreview *string    `json:"body_preview"`
	From        []string   `json:"from"`
	To          []string   `json:"to"`
	Cc          []string   `json:"cc"`
	MessageID   *string    `json:"message_id"`
	SentAt      *timestamp `json:"sent_at"`
	CreatedAt   timestamp  `json:"created_at"`
	UpdatedAt   timestamp  `json:"updated_at"`
}

func emailSubmissionResource(e *model.EmailSubmission) *Resource {
	return &Resource{ID: e.ID, Type: "email_submission", Attributes: emailSubmissionAttributes{
		Subject:     e.Subject,
		BodyPreview: e.BodyPreview,
		From:        strs(e.From),
		To:          strs(e.To),
		Cc:          strs(e.Cc),
		MessageID:   e.MessageID,
		SentAt:      tsp(e.SentAt),
		CreatedAt:   ts(e.CreatedAt),
		UpdatedAt:   ts(e.UpdatedAt),
	}}
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
