package db

import (
	"context"
	"database/sql"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"shipgraph/model"
)

// Document files: uploads announced by direct uploads, the
// documents created from them, the sweep of uploads no document took.

const uploadCols = `u.id, u.account_id, u.user_id, u.key, u.filename, u.content_type, u.byte_size, u.checksum, u.created_at`

// CreateUpload records an announced upload and returns it.
func (db *DB) CreateUpload(ctx context.Context, u model.Upload) (*model.Upload, error) {
	if !validUUID(u.AccountID) {
		return nil, model.NotFound("account")
	}
	return getOne[model.Upload](ctx, db.write(u.AccountID), "upload",
		`INSERT INTO uploads AS u (account_id, user_id, key, filename, content_type, byte_size, checksum)
		 VALUES ($1, $2, $3, $4, $5, $6, $7)
		 RETURNING `+uploadCols,
		u.AccountID, u.UserID, u.Key, u.Filename, u.ContentType, u.ByteSize, u.Checksum)
}

// UnusedUpload returns the account's upload id when no document uses it
// yet; nil when there is none.
func (db *DB) UnusedUpload(ctx context.Context, accountID, id string) (*model.Upload, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, nil
	}
	u, err := getOne[model.Upload](ctx, db.read(accountID), "upload",
		`SELECT `+uploadCols+` FROM uploads u
		 WHERE u.id = $1 AND u.account_id = $2
		   AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.upload_id = u.id AND d.account_id = u.account_id)`, id, accountID)
	if model.ErrorCode(err) == model.ENOTFOUND {
		return nil, nil
	}
	return u, err
}

// DocumentWithFile returns the account's document (id and name) whose file
// has this checksum and size, if any.
func (db *DB) DocumentWithFile(ctx context.Context, accountID, checksum string, size int64) (id, name string, err error) {
	var row struct {
		ID   string `db:"id"`
		Name string `db:"name"`
	}
	err = sqlx.GetContext(ctx, db.read(accountID), &row,
		`SELECT d.id, d.name FROM uploads u
		 JOIN documents d ON d.account_id = u.account_id AND d.upload_id = u.id
		 WHERE u.account_id = $1 AND u.checksum = $2 AND u.byte_size = $3
		 ORDER BY d.created_at, d.id LIMIT 1`, accountID, checksum, size)
	if err != nil {
		if e := mapErr(err); model.ErrorCode(e) == model.ENOTFOUND {
			return "", "", nil
		}
		return "", "", mapErr(err)
	}
	return row.ID, row.Name, nil
}

// NewDocument is a document created from an upload.
type NewDocument struct {
	AccountID    string
	UserID       *string
	Name         string
	DocumentType string
	Source       model.DocumentSource
	Upload       *model.Upload
	ShipmentIDs  []string
	ContainerIDs []string
	// Enqueue, when set and the document has a file, runs in the
	// transaction that inserts it, which marks it pending (its processing
	// job, inserted by Enqueue, exists exactly when the document does).
	Enqueue func(ctx context.Context, tx *sql.Tx, d *model.Document) error
}

// CreateDocument inserts a document with its file and its links to the
// account's shipments and containers, in one statement, and returns it.
// An upload already used is a conflict (the unique index).
func (db *DB) CreateDocument(ctx context.Context, n NewDocument) (*model.Document, error) {
	if !validUUID(n.AccountID) {
		return nil, model.NotFound("account")
	}
	var ct *string
	var size *int64
	var uploadID *string
	fileName := n.Name
	if n.Upload != nil {
		ct, size, uploadID = &n.Upload.ContentType, &n.Upload.ByteSize, &n.Upload.ID
		fileName = n.Upload.Filename
	}
	var status *string
	if n.Enqueue != nil && n.Upload != nil {
		pending := "pending"
		status = &pending
	}
	insert := func(q sqlx.QueryerContext) (*model.Document, error) {
		return getOne[model.Document](ctx, q, "document",
			`WITH d AS (
			INSERT INTO documents (account_id, user_id, name, document_type, source,
				file_name, file_content_type, file_size_bytes, upload_id, extraction_status)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $12)
			RETURNING `+documentReturning+`),
		 s AS (
			INSERT INTO document_shipments (account_id, document_id, shipment_id)
			SELECT d.account_id, d.id, x.id FROM d, shipments x WHERE x.account_id = $1 AND x.id = ANY($10)),
		 c AS (
			INSERT INTO document_containers (account_id, document_id, container_id)
			SELECT d.account_id, d.id, x.id FROM d, containers x WHERE x.account_id = $1 AND x.id = ANY($11))
		 SELECT `+documentCols+` FROM d`,
			n.AccountID, n.UserID, n.Name, n.DocumentType, n.Source, fileName, ct, size, uploadID,
			pq.Array(validUUIDs(n.ShipmentIDs)), pq.Array(validUUIDs(n.ContainerIDs)), status)
	}
	if status == nil {
		return insert(db.write(n.AccountID))
	}
	var d *model.Document
	err := db.inRawTx(ctx, n.AccountID, func(q ext, tx *sql.Tx) error {
		var err error
		if d, err = insert(q); err != nil {
			return err
		}
		return n.Enqueue(ctx, tx, d)
	})
	return d, err
}

// DocumentFile returns the upload holding a document's file; nil when the
// document has none (seeded metadata) or is not the account's.
func (db *DB) DocumentFile(ctx context.Context, accountID, documentID string) (*model.Upload, error) {
	if !validUUID(accountID) || !validUUID(documentID) {
		return nil, nil
	}
	u, err := getOne[model.Upload](ctx, db.read(accountID), "upload",
		`SELECT `+uploadCols+` FROM documents d
		 JOIN uploads u ON u.account_id = d.account_id AND u.id = d.upload_id
		 WHERE d.id = $1 AND d.account_id = $2`, documentID, accountID)
	if model.ErrorCode(err) == model.ENOTFOUND {
		return nil, nil
	}
	return u, err
}

// DocumentFiles returns the uploads holding the files of the account's
// documents ids, by document id (documents without a file are absent).
func (db *DB) DocumentFiles(ctx context.Context, accountID string, ids []string) (map[string]*model.Upload, error) {
	valid := validUUIDs(ids)
	if len(valid) == 0 || !validUUID(accountID) {
		return map[string]*model.Upload{}, nil
	}
	var rows []struct {
		DocumentID string `db:"document_id"`
		model.Upload
	}
	if err := sqlx.SelectContext(ctx, db.read(accountID), &rows,
		`SELECT d.id AS document_id, `+uploadCols+` FROM documents d
		 JOIN uploads u ON u.account_id = d.account_id AND u.id = d.upload_id
		 WHERE d.id = ANY($1) AND d.account_id = $2`, pq.Array(valid), accountID); err != nil {
		return nil, mapErr(err)
	}
	out := make(map[string]*model.Upload, len(rows))
	for i := range rows {
		out[rows[i].DocumentID] = &rows[i].Upload
	}
	return out, nil
}

// DeleteDocumentWithFile deletes one of the account's documents (as
// DeleteDocument does) and returns it with the upload that held its file
// (nil without one); the caller removes the file and then the upload. The
// upload's join names the account parameter, not the deleted row's column:
// Citus runs the writing CTE first and prunes uploads by that constant
// (joined by the CTE's column, uploads went to every shard).
func (db *DB) DeleteDocumentWithFile(ctx context.Context, accountID, id string) (*model.Document, *model.Upload, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, nil, model.NotFound("document")
	}
	var row struct {
		model.Document
		UploadID  *string `db:"upload_id"`
		UploadKey *string `db:"upload_key"`
	}
	err := sqlx.GetContext(ctx, db.write(accountID), &row,
		`WITH d AS (
			DELETE FROM documents WHERE id = $1 AND account_id = $2
			RETURNING `+documentReturning+`, upload_id)
		 SELECT `+documentCols+`, d.upload_id, u.key AS upload_key FROM d
		 LEFT JOIN uploads u ON u.account_id = $2 AND u.id = d.upload_id`, id, accountID)
	if err != nil {
		if e := mapErr(err); model.ErrorCode(e) == model.ENOTFOUND {
			return nil, nil, model.NotFound("document")
		}
		return nil, nil, mapErr(err)
	}
	var u *model.Upload
	if row.UploadID != nil && row.UploadKey != nil {
		u = &model.Upload{ID: *row.UploadID, AccountID: accountID, Key: *row.UploadKey}
	}
	return &row.Document, u, nil
}

// DeleteUpload removes the account's upload id unless a document uses it;
// it reports whether it did.
func (db *DB) DeleteUpload(ctx context.Context, accountID, id string) (bool, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return false, nil
	}
	res, err := db.write(accountID).ExecContext(ctx,
		`DELETE FROM uploads u WHERE u.id = $1 AND u.account_id = $2
		   AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.upload_id = u.id AND d.account_id = u.account_id)`, id, accountID)
	if err != nil {
		return false, mapErr(err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// StaleUploads returns up to limit uploads, of every account, announced
// before `before` that no document uses: the sweep's work list (a
// maintenance read across accounts, like the migrations).
func (db *DB) StaleUploads(ctx context.Context, before time.Time, limit int) ([]model.Upload, error) {
	var out []model.Upload
	err := sqlx.SelectContext(ctx, db.read(""), &out,
		`SELECT `+uploadCols+` FROM uploads u
		 WHERE u.created_at < $1
		   AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.upload_id = u.id AND d.account_id = u.account_id)
		 ORDER BY u.created_at LIMIT $2`, before, limit)
	return out, mapErr(err)
}

// DemoDocumentsWithoutFile returns up to perAccount documents of each
// account that have no file, newest first (the demo seeder's list): one
// statement for the accounts, then one per account, each on its own shard
// on Citus (which cannot push down a LIMIT under a lateral join of every
// account).
func (db *DB) DemoDocumentsWithoutFile(ctx context.Context, perAccount int) ([]model.Document, error) {
	var accounts []string
	if err := sqlx.SelectContext(ctx, db.read(""), &accounts, `SELECT id FROM accounts ORDER BY id`); err != nil {
		return nil, mapErr(err)
	}
	var out []model.Document
	for _, acc := range accounts {
		var docs []model.Document
		err := sqlx.SelectContext(ctx, db.read(acc), &docs,
			`SELECT `+documentCols+` FROM documents d
			 WHERE d.account_id = $1 AND d.upload_id IS NULL
			 ORDER BY d.created_at DESC, d.id LIMIT $2`, acc, perAccount)
		if err != nil {
			return nil, mapErr(err)
		}
		out = append(out, docs...)
	}
	return out, nil
}

// AttachUpload records u as an upload of its account and makes it the
// file of the account's document documentID, in one statement.
func (db *DB) AttachUpload(ctx context.Context, documentID string, u model.Upload) error {
	_, err := db.write(u.AccountID).ExecContext(ctx,
		`WITH u AS (
			INSERT INTO uploads (account_id, user_id, key, filename, content_type, byte_size, checksum)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id)
		 UPDATE documents SET upload_id = (SELECT id FROM u), file_content_type = $5, file_size_bytes = $6
		 WHERE id = $8 AND account_id = $1`,
		u.AccountID, u.UserID, u.Key, u.Filename, u.ContentType, u.ByteSize, u.Checksum, documentID)
	return mapErr(err)
}
