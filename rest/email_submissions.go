package rest

import (
	"context"
	"net/http"

	"shipgraph/catalog"
	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// GET /v2/email_submissions and GET /v2/email_submissions/{id}.
//
// include takes account, user, documents and
// documents.last_document_representation; without include the OpenAPI
// document's default applies (documents and their last representations),
// and an empty include= includes nothing. Included documents have the
// document's email_submission_document shape (name, source, document_type,
// timestamps and the last_document_representation relationship).

var emailSubmissionIncludes = includes(catalog.EmailSubmission, "documents.last_document_representation")

var (
	emailSubmissionList = endpoint{Serializer: "V2::EmailSubmissionSerializer", Includes: emailSubmissionIncludes, Paged: true}
	emailSubmissionItem = endpoint{Serializer: "V2::EmailSubmissionSerializer", Includes: emailSubmissionIncludes}
)

// emailSubmissionParams parses the query string and applies the default
// includes.
func emailSubmissionParams(r *http.Request, e endpoint) (*params, error) {
	p, err := parseParams(r, e)
	if err != nil {
		return nil, err
	}
	if _, given := p.Values["include"]; !given {
		p.Include = map[string]bool{"documents": true, "documents.last_document_representation": true}
	}
	if p.Include["documents.last_document_representation"] {
		p.Include["documents"] = true // the path to it is included too
	}
	return p, nil
}

func (s *server) listEmailSubmissions(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, emailSubmissionList, func(ctx context.Context, _ *params) (listPage[*model.EmailSubmission], error) {
		p, err := emailSubmissionParams(r, emailSubmissionList)
		if err != nil {
			return listPage[*model.EmailSubmission]{}, err
		}
		p.plan = planOf(emailSubmissionPrimaryShape, p)
		pg, err := s.res.EmailSubmissions(ctx, who(r), resolve.EmailSubmissionQuery{Page: resolve.PageArgs{Page: &p.Page}, Plan: p.plan})
		if err != nil {
			return listPage[*model.EmailSubmission]{}, err
		}
		return fromPage(pg, func(ctx context.Context) (int, error) { return s.res.CountEmailSubmissions(ctx, who(r)) }), nil
	}, func(b *builder, ctx context.Context, items []*model.EmailSubmission, _ *params) ([]*Resource, error) {
		p, err := emailSubmissionParams(r, emailSubmissionList)
		if err != nil {
			return nil, err
		}
		b.withIncluded = p.Include != nil // the default includes too
		return withIncludes(b, ctx, items, p)
	})
}

func (s *server) getEmailSubmission(w http.ResponseWriter, r *http.Request) {
	p, err := emailSubmissionParams(r, emailSubmissionItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	e, err := s.res.EmailSubmission(r.Context(), who(r), r.PathValue("id"), planOf(emailSubmissionPrimaryShape, p))
	serveRecord(s, w, r, p, e, err, withIncludes)
}

type emailSubmissionPrimaryAttributes struct {
	Subject *string  `json:"subject,omitempty"`
	Body    *string  `json:"body"`
	From    []string `json:"from"`
	To      []string `json:"to"`
	Cc      []string `json:"cc"`
	// The OpenAPI document's in_reply_to, references and content_type are
	// headers Shipgraph does not keep: null, [] and null.
	SentAt         *timestamp `json:"sent_at"`
	MessageID      *string    `json:"message_id"`
	InReplyTo      *string    `json:"in_reply_to"`
	References     []string   `json:"references"`
	ContentType    *string    `json:"content_type"`
	DocumentsCount int        `json:"documents_count"`
	CreatedAt      timestamp  `json:"created_at"`
	UpdatedAt      timestamp  `json:"updated_at"`
}

// emailSubmissionPrimary renders a submission as the primary resource of
// its own endpoints (the email_submission schema; documents embedded in a
// document's include use emailSubmissionResource).
func emailSubmissionPrimary(b *builder, e *model.EmailSubmission) *Resource {
	docs := e.Documents()
	return &Resource{
		ID:   e.ID,
		Type: "email_submission",
		Attributes: emailSubmissionPrimaryAttributes{
			Subject:        e.Subject,
			Body:           e.Body,
			From:           orEmpty(e.From),
			To:             orEmpty(e.To),
			Cc:             orEmpty(e.Cc),
			SentAt:         tsp(e.SentAt),
			MessageID:      e.MessageID,
			References:     []string{},
			DocumentsCount: len(docs),
			CreatedAt:      ts(e.CreatedAt),
			UpdatedAt:      ts(e.UpdatedAt),
		},
		Relationships: b.linkage(e, emailSubmissionPrimaryShape.members),
		Links:         &jsonapi.Links{Self: b.base + "/v2/email_submissions/" + e.ID},
	}
}

type emailDocumentAttributes struct {
	Name         string               `json:"name"`
	Source       model.DocumentSource `json:"source"`
	DocumentType string               `json:"document_type"`
	CreatedAt    timestamp            `json:"created_at"`
	UpdatedAt    timestamp            `json:"updated_at"`
}

// emailDocumentResource renders a document included by a submission, in
// the OpenAPI document's email_submission_document shape.
func emailDocumentResource(b *builder, d *model.Document) *Resource {
	return &Resource{
		ID:   d.ID,
		Type: "document",
		Attributes: emailDocumentAttributes{
			Name: d.Name, Source: d.Source, DocumentType: d.DocumentType, CreatedAt: ts(d.CreatedAt), UpdatedAt: ts(d.UpdatedAt),
		},
		Relationships: b.linkage(d, emailDocumentShape.members),
	}
}
