package resolve

import (
	"context"
	"strings"

	"shipgraph/load"
	"shipgraph/model"
)

// Document writes: the manually set type, and delete. Shipgraph
// keeps no discarded state, so a delete removes the document, its links,
// its representations and its file (creating a document from a
// file is in files.go).

// UpdateDocument sets (or with null clears) a document's manual type; an
// omitted one leaves the document as it is. Invalid is an input error the
// transport found, reported after the target's checks.
type UpdateDocument struct {
	ID                 string
	DocumentTypeManual model.Optional[*string]
	Invalid            error
}

// UpdateDocument runs c and returns the document.
func (r *Resolver) UpdateDocument(ctx context.Context, p *model.Principal, c UpdateDocument) (*model.Document, error) {
	p, l, d, err := documentWrite(ctx, p, c.ID, c.Invalid)
	if err != nil {
		return nil, err
	}
	v, set := c.DocumentTypeManual.ValueOK()
	if !set {
		return d, nil
	}
	if v != nil {
		code := strings.TrimSpace(*v)
		if !knownDocumentType(code) {
			return nil, invalidField("document_type_manual", "document_type_manual must be one of the codes of GET /v2/documents/types")
		}
		v = &code
	}
	w, err := r.DB.SetDocumentTypeManual(ctx, p.AccountID, d.ID, v)
	if err != nil {
		return nil, err
	}
	l.DocumentByID.Clear(w.ID)
	l.DocumentByID.Prime(w.ID, w)
	// Lists of documents read through shipments and containers hold the
	// old copy.
	l.DocumentsByShipmentID.ClearAll()
	l.DocumentsByContainerID.ClearAll()
	return w, nil
}

// DeleteDocument deletes the document id and returns it.
func (r *Resolver) DeleteDocument(ctx context.Context, p *model.Principal, id string) (*model.Document, error) {
	p, l, d, err := documentWrite(ctx, p, id, nil)
	if err != nil {
		return nil, err
	}
	w, u, err := r.DB.DeleteDocumentWithFile(ctx, p.AccountID, d.ID)
	if err != nil {
		return nil, err
	}
	if u != nil && r.Files != nil {
		// Its file goes with it (the sweep retries a removal that fails).
		r.removeUpload(context.WithoutCancel(ctx), r.Files, u)
	}
	l.DocumentByID.Clear(w.ID)
	l.DocumentsByShipmentID.ClearAll()
	l.DocumentsByContainerID.ClearAll()
	return w, nil
}

// documentWrite checks what every document write checks first: the key
// may write, the document is the account's.
func documentWrite(ctx context.Context, p *model.Principal, id string, invalid error) (*model.Principal, *load.Loaders, *model.Document, error) {
	return writeTarget(ctx, p, func(l *load.Loaders) *load.Loader[*model.Document] { return l.DocumentByID }, id, "document", invalid)
}

func knownDocumentType(code string) bool {
	for _, t := range model.DocumentTypes {
		if t.Code == code {
			return true
		}
	}
	return false
}
