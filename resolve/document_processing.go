package resolve

import (
	"context"
	"database/sql"

	"shipgraph/docproc"
	"shipgraph/load"
	"shipgraph/model"
)

// Documents that are processed: the requests that
// start a document's jobs (package docproc, on the process's River
// client) and the document schemas.
//
//	reextract  the document becomes pending and its extraction job is
//	           inserted in that transaction
//	reclassify classifies the text extracted before again
//	relink     links by the text extracted before again
//	rotate     turns an image file (PNG, JPEG, GIF) by 90, 180 or 270
//
// Each answers once the job is enqueued (202 accepted); the job's outcome
// shows on the document (document_type, classification_notes, the last
// representation, the links) and as webhook events.
//
// Error order: unauthenticated (401), the key may write (403), the
// document is the account's (404), then what the request asks of it (422:
// no file, not an image, degrees), then the engine (503 when this server
// processes no documents).

// DocumentJobs is the document processing (docproc.Processor) as the
// resolver layer sees it.
type DocumentJobs interface {
	Enqueue(ctx context.Context, a docproc.JobArgs) error
	EnqueueTx(ctx context.Context, tx *sql.Tx, a docproc.JobArgs) error
}

// enqueueExtraction is CreateDocument's hook: the extraction job of the
// new document, inserted in the transaction that inserts it.
func (r *Resolver) enqueueExtraction(p *model.Principal) func(ctx context.Context, tx *sql.Tx, d *model.Document) error {
	if r.DocumentJobs == nil {
		return nil
	}
	return func(ctx context.Context, tx *sql.Tx, d *model.Document) error {
		return r.DocumentJobs.EnqueueTx(ctx, tx, docproc.JobArgs{AccountID: p.AccountID, DocumentID: d.ID, Step: docproc.StepExtract})
	}
}

// documentJob checks what every document job request checks first.
func (r *Resolver) documentJob(ctx context.Context, p *model.Principal, id string) (*model.Document, error) {
	if p == nil {
		return nil, model.Errorf(model.EUNAUTHENTICATED, "a valid API key is required")
	}
	if !p.CanWrite() {
		return nil, model.Errorf(model.EFORBIDDEN, "this API key has the %s role and may not change data", p.Role)
	}
	l, err := load.For(ctx)
	if err != nil {
		return nil, err
	}
	d, err := loadByID(ctx, l.DocumentByID, model.NormalizeID(id))
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, model.NotFound("document")
	}
	return d, nil
}

func (r *Resolver) documentJobs() (DocumentJobs, error) {
	if r.DocumentJobs == nil {
		return nil, model.Errorf(model.EUNAVAILABLE, "this server processes no documents")
	}
	return r.DocumentJobs, nil
}

// hasFile reports whether the document has a stored file (records
// imported without one have a content type but no file).
func (r *Resolver) hasFile(ctx context.Context, p *model.Principal, d *model.Document) (bool, error) {
	u, err := r.DB.DocumentFile(ctx, p.AccountID, d.ID)
	return u != nil, err
}

// noFile is the 422 of a document imported without a file.
func noFile(d *model.Document) error {
	return model.Errorf(model.EINVALID, "No document attached: document %s has no file (its record was imported without one)", d.ID)
}

// ReextractDocument extracts the document id's file again.
func (r *Resolver) ReextractDocument(ctx context.Context, p *model.Principal, id string) error {
	d, err := r.documentJob(ctx, p, id)
	if err != nil {
		return err
	}
	if ok, err := r.hasFile(ctx, p, d); err != nil {
		return err
	} else if !ok {
		return noFile(d)
	}
	jobs, err := r.documentJobs()
	if err != nil {
		return err
	}
	if err := r.DB.ResetExtraction(ctx, p.AccountID, d.ID, func(ctx context.Context, tx *sql.Tx) error {
		return jobs.EnqueueTx(ctx, tx, docproc.JobArgs{AccountID: p.AccountID, DocumentID: d.ID, Step: docproc.StepExtract})
	}); err != nil {
		return err
	}
	clearDocument(ctx, d.ID)
	return nil
}

// ReclassifyDocument classifies the document id again.
func (r *Resolver) ReclassifyDocument(ctx context.Context, p *model.Principal, id string) error {
	return r.rerun(ctx, p, id, docproc.StepClassify)
}

// RelinkDocument links the document id by its numbers again.
func (r *Resolver) RelinkDocument(ctx context.Context, p *model.Principal, id string) error {
	return r.rerun(ctx, p, id, docproc.StepLink)
}

func (r *Resolver) rerun(ctx context.Context, p *model.Principal, id, step string) error {
	d, err := r.documentJob(ctx, p, id)
	if err != nil {
		return err
	}
	// Without a file there is no text unless one was kept (the demo
	// data's); the job reads it.
	text, err := r.DB.DocumentText(ctx, p.AccountID, d.ID)
	if err != nil {
		return err
	}
	if text == "" {
		if ok, err := r.hasFile(ctx, p, d); err != nil {
			return err
		} else if !ok {
			return noFile(d)
		}
	}
	jobs, err := r.documentJobs()
	if err != nil {
		return err
	}
	return jobs.Enqueue(ctx, docproc.JobArgs{AccountID: p.AccountID, DocumentID: d.ID, Step: step})
}

// RotateDocument turns the image file of document ID clockwise by Degrees.
// Invalid is an input error the transport found, reported once the
// document is found (or first, marked Malformed).
type RotateDocument struct {
	ID      string
	Degrees int
	Invalid error
}

// RotateDocument runs c.
func (r *Resolver) RotateDocument(ctx context.Context, p *model.Principal, c RotateDocument) error {
	if err := checkRequest(p, c.Invalid); err != nil {
		return err
	}
	d, err := r.documentJob(ctx, p, c.ID)
	if err != nil {
		return err
	}
	if c.Invalid != nil {
		return c.Invalid
	}
	if !docproc.ValidDegrees(c.Degrees) {
		return model.Errorf(model.EINVALID, "Invalid rotation: degrees must be one of: 90, 180, 270").AtField("degrees")
	}
	if ok, err := r.hasFile(ctx, p, d); err != nil {
		return err
	} else if !ok || d.FileContentType == nil {
		return noFile(d)
	}
	if !docproc.Rotatable[*d.FileContentType] {
		return model.Errorf(model.EINVALID, "document %s is not rotatable: only image documents (PNG, JPEG, GIF) are; its file is %s", d.ID, *d.FileContentType)
	}
	jobs, err := r.documentJobs()
	if err != nil {
		return err
	}
	return jobs.Enqueue(ctx, docproc.JobArgs{AccountID: p.AccountID, DocumentID: d.ID, Step: docproc.StepRotate, Degrees: c.Degrees})
}

// clearDocument drops the request's cached copy of a document written.
func clearDocument(ctx context.Context, id string) {
	if l, err := load.For(ctx); err == nil {
		l.DocumentByID.Clear(id)
	}
}

// DocumentSchema returns the document schema of full version id
// ("commercial_invoice@2026-03-23"). Schemas are the same for every
// account; a key is still required.
func (r *Resolver) DocumentSchema(_ context.Context, p *model.Principal, id string) (*model.DocumentSchema, error) {
	if p == nil {
		return nil, model.Errorf(model.EUNAUTHENTICATED, "a valid API key is required")
	}
	s, ok := docproc.DocumentSchema(id)
	if !ok {
		return nil, model.Errorf(model.ENOTFOUND, "Couldn't find DocumentSchema with 'id'=%s", id)
	}
	return s, nil
}
