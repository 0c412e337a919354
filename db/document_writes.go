package db

import (
	"context"

	"shipgraph/model"
)

// Document writes.

// SetDocumentTypeManual sets (nil clears) the manually set type of one of
// the account's documents and returns the document as it now is.
func (db *DB) SetDocumentTypeManual(ctx context.Context, accountID, id string, typ *string) (*model.Document, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, model.NotFound("document")
	}
	return getOne[model.Document](ctx, db.write(accountID), "document",
		`WITH d AS (
			UPDATE documents SET document_type_manual = $3, updated_at = now()
			WHERE id = $1 AND account_id = $2
			RETURNING `+documentReturning+`)
		 SELECT `+documentCols+` FROM d`, id, accountID, typ)
}

// documentReturning is what a write of documents returns for the outer
// SELECT to read documentCols from (as the alias d).
const documentReturning = `id, account_id, user_id, email_submission_id, last_document_representation_id,
	name, document_type, document_type_manual, classification_notes, source,
	file_name, file_content_type, file_size_bytes, created_at, updated_at`
