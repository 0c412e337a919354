package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"shipgraph/model"
)

// Documents that are processed (migration 00020): the
// reads and writes of the document jobs (package docproc) and of the
// requests that start them.

// DocumentTarget is what a document job needs of its document: its file
// (nil key without one), its manual type and the text extracted before.
type DocumentTarget struct {
	ID                 string  `db:"id"`
	AccountID          string  `db:"account_id"`
	ContentType        *string `db:"file_content_type"`
	UploadID           *string `db:"upload_id"`
	UploadKey          *string `db:"upload_key"`
	DocumentTypeManual *string `db:"document_type_manual"`
	Status             *string `db:"extraction_status"`
	Text               *string `db:"text"`
}

// DocumentTarget reads one of the account's documents for a job; nil when
// it is gone.
func (db *DB) DocumentTarget(ctx context.Context, accountID, id string) (*DocumentTarget, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, nil
	}
	var t DocumentTarget
	err := sqlx.GetContext(ctx, db.read(accountID), &t,
		`SELECT d.id, d.account_id, d.file_content_type, d.upload_id, u.key AS upload_key, d.document_type_manual,
			d.extraction_status, x.text
		 FROM documents d
		 LEFT JOIN uploads u ON u.account_id = d.account_id AND u.id = d.upload_id
		 LEFT JOIN document_texts x ON x.account_id = d.account_id AND x.document_id = d.id
		 WHERE d.id = $1 AND d.account_id = $2`, id, accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, mapErr(err)
	}
	return &t, nil
}

// DocumentText returns the text extracted from one of the account's
// documents ("" before any).
func (db *DB) DocumentText(ctx context.Context, accountID, id string) (string, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return "", nil
	}
	var s string
	err := sqlx.GetContext(ctx, db.read(accountID), &s,
		`SELECT x.text FROM document_texts x WHERE x.account_id = $1 AND x.document_id = $2`, accountID, id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return s, mapErr(err)
}

// Classified is a classification and its extracted fields, recorded as a
// new document representation that becomes the document's last.
type Classified struct {
	DocumentType  string
	Notes         string
	SchemaVersion string // the schema's full version, "<type>@<version>"
	Payload       map[string]any
}

// Extraction is what a document job found in a file: its text, the
// classification and the numbers that link it.
type Extraction struct {
	AccountID  string
	DocumentID string
	Text       string
	Extractor  string
	Classified
	Links DocumentLinks
}

// DocumentLinks are numbers that link a document to the account's
// shipments (bill of lading, booking, reference numbers) and containers.
type DocumentLinks struct {
	Numbers    []string
	Containers []string
}

// LinkCount is how many links a linking added.
type LinkCount struct{ Shipments, Containers int }

// SaveExtraction records an extraction in one transaction: the text, a new
// representation with the fields, the document's type, notes and status
// extracted (its change-log entry raises document.extracted), and the
// links its numbers find. The status moves only from pending (a document
// reset by another request meanwhile stays pending for the job that
// follows).
func (db *DB) SaveExtraction(ctx context.Context, x Extraction) (LinkCount, error) {
	var l LinkCount
	if !validUUID(x.AccountID) || !validUUID(x.DocumentID) {
		return l, model.NotFound("document")
	}
	// extracted_at from EXCLUDED (the column default, now()): Citus
	// refuses a function that is not immutable in DO UPDATE SET.
	err := db.inTx(ctx, x.AccountID, func(q ext) error {
		if _, err := q.ExecContext(ctx,
			`INSERT INTO document_texts (account_id, document_id, text, extractor)
			 SELECT d.account_id, d.id, $3, $4 FROM documents d WHERE d.account_id = $1 AND d.id = $2
			 ON CONFLICT (account_id, document_id) DO UPDATE SET text = EXCLUDED.text, extractor = EXCLUDED.extractor, extracted_at = EXCLUDED.extracted_at`,
			x.AccountID, x.DocumentID, x.Text, x.Extractor); err != nil {
			return mapErr(err)
		}
		if err := classifyDocument(ctx, q, x.AccountID, x.DocumentID, x.Classified, true); err != nil {
			return err
		}
		var err error
		l, err = link(ctx, q, x.AccountID, x.DocumentID, x.Links)
		return err
	})
	return l, err
}

// SaveClassification records a classification of text extracted before
// (reclassify): a new representation, the type and notes.
func (db *DB) SaveClassification(ctx context.Context, accountID, id string, c Classified) error {
	if !validUUID(accountID) || !validUUID(id) {
		return model.NotFound("document")
	}
	return db.inTx(ctx, accountID, func(q ext) error { return classifyDocument(ctx, q, accountID, id, c, false) })
}

func classifyDocument(ctx context.Context, q ext, accountID, id string, c Classified, extracted bool) error {
	if c.Payload == nil {
		c.Payload = map[string]any{}
	}
	payload, err := json.Marshal(c.Payload)
	if err != nil {
		return err
	}
	status := `extraction_status`
	if extracted {
		status = `CASE WHEN d.extraction_status = 'failed' OR d.extraction_status = 'pending' OR d.extraction_status IS NULL
			THEN 'extracted' ELSE d.extraction_status END`
	}
	_, err = q.ExecContext(ctx,
		`WITH r AS (
			INSERT INTO document_representations (account_id, document_id, schema_version, payload)
			SELECT d.account_id, d.id, $3, $4 FROM documents d WHERE d.account_id = $1 AND d.id = $2
			RETURNING id)
		 UPDATE documents d SET document_type = $5, classification_notes = $6, last_document_representation_id = r.id,
			extraction_status = `+status+`, extraction_error = NULL, updated_at = now()
		 FROM r WHERE d.account_id = $1 AND d.id = $2`,
		accountID, id, c.SchemaVersion, payload, c.DocumentType, c.Notes)
	return mapErr(err)
}

// LinkDocument links one of the account's documents to the account's
// shipments and containers its numbers name (relink). Links are only
// added: one set by hand, or found before, stays.
func (db *DB) LinkDocument(ctx context.Context, accountID, id string, links DocumentLinks) (LinkCount, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return LinkCount{}, model.NotFound("document")
	}
	var l LinkCount
	err := db.inTx(ctx, accountID, func(q ext) error {
		var err error
		l, err = link(ctx, q, accountID, id, links)
		return err
	})
	return l, err
}

func link(ctx context.Context, q sqlx.ExtContext, accountID, id string, links DocumentLinks) (LinkCount, error) {
	var l LinkCount
	if len(links.Numbers) == 0 && len(links.Containers) == 0 {
		return l, nil
	}
	err := sqlx.GetContext(ctx, q, &l.Shipments,
		`WITH s AS (
			INSERT INTO document_shipments (account_id, document_id, shipment_id)
			SELECT d.account_id, d.id, x.id FROM documents d, shipments x
			WHERE d.account_id = $1 AND d.id = $2 AND x.account_id = $1
			  AND (upper(x.bill_of_lading_number) = ANY($3) OR upper(x.normalized_number) = ANY($3) OR x.ref_numbers && $3::text[]
			       OR x.id IN (SELECT c.shipment_id FROM containers c WHERE c.account_id = $1 AND upper(c.number) = ANY($4)))
			ON CONFLICT DO NOTHING RETURNING 1)
		 SELECT count(*) FROM s`, accountID, id, pq.Array(links.Numbers), pq.Array(links.Containers))
	if err != nil {
		return l, mapErr(err)
	}
	err = sqlx.GetContext(ctx, q, &l.Containers,
		`WITH c AS (
			INSERT INTO document_containers (account_id, document_id, container_id)
			SELECT d.account_id, d.id, x.id FROM documents d, containers x
			WHERE d.account_id = $1 AND d.id = $2 AND x.account_id = $1 AND upper(x.number) = ANY($3)
			ON CONFLICT DO NOTHING RETURNING 1)
		 SELECT count(*) FROM c`, accountID, id, pq.Array(links.Containers))
	return l, mapErr(err)
}

// RecordExtractionFailed marks one of the account's documents failed with
// reason (its change-log entry raises document.extraction_failed).
func (db *DB) RecordExtractionFailed(ctx context.Context, accountID, id, reason string) error {
	if !validUUID(accountID) || !validUUID(id) {
		return nil
	}
	_, err := db.write(accountID).ExecContext(ctx,
		`UPDATE documents SET extraction_status = 'failed', extraction_error = $3, updated_at = now()
		 WHERE account_id = $1 AND id = $2`, accountID, id, reason)
	return mapErr(err)
}

// ResetExtraction makes one of the account's documents pending again
// (reextract) and runs enqueue in the same transaction, so the job exists
// exactly when the status says one will run.
func (db *DB) ResetExtraction(ctx context.Context, accountID, id string, enqueue func(ctx context.Context, tx *sql.Tx) error) error {
	if !validUUID(accountID) || !validUUID(id) {
		return model.NotFound("document")
	}
	return db.inRawTx(ctx, accountID, func(q ext, tx *sql.Tx) error {
		res, err := q.ExecContext(ctx,
			`UPDATE documents SET extraction_status = 'pending', extraction_error = NULL, updated_at = now()
			 WHERE account_id = $1 AND id = $2`, accountID, id)
		if err != nil {
			return mapErr(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return model.NotFound("document")
		}
		return enqueue(ctx, tx)
	})
}

// ReplaceDocumentFile makes key (bytes written already) the file of one of
// the account's documents, with its new size and checksum, and returns the
// key it replaced ("" when the document has no file any more).
func (db *DB) ReplaceDocumentFile(ctx context.Context, accountID, id, key string, size int64, checksum string) (string, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return "", nil
	}
	var old string
	err := sqlx.GetContext(ctx, db.write(accountID), &old,
		`WITH o AS (
			SELECT u.id, u.key FROM documents d JOIN uploads u ON u.account_id = d.account_id AND u.id = d.upload_id
			WHERE d.account_id = $1 AND d.id = $2 FOR UPDATE OF u),
		 u AS (
			UPDATE uploads u SET key = $3, byte_size = $4, checksum = $5
			FROM o WHERE u.account_id = $1 AND u.id = o.id RETURNING u.id),
		 d AS (
			UPDATE documents d SET file_size_bytes = $4, updated_at = now()
			FROM u WHERE d.account_id = $1 AND d.id = $2 RETURNING d.id)
		 SELECT o.key FROM o, d`, accountID, id, key, size, checksum)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return old, mapErr(err)
}
