package db

import (
	"context"
	"strings"

	"github.com/lib/pq"

	"shipgraph/model"
)

const (
	documentCols = `d.id, d.account_id, d.user_id, d.email_submission_id, d.last_document_representation_id,
	d.name, d.document_type, d.document_type_manual, d.classification_notes, d.source,
	d.file_name, d.file_content_type, d.file_size_bytes, d.created_at, d.updated_at`
	emailSubmissionCols = `e.id, e.account_id, e.user_id, e.subject, e.body, e.body_preview, e.from_addresses,
	e.to_addresses, e.cc_addresses, e.message_id, e.sent_at, e.created_at, e.updated_at`
	documentRepresentationCols = `r.id, r.account_id, r.document_id, r.schema_version, r.payload, r.created_at, r.updated_at`
)

var documentList = &listSpec{
	plural:  "documents",
	counted: "documents",
	from:    "documents d",
	alias:   "d",
	cols:    documentCols,
	orders: map[string]sortSpec{
		"created_at":    {expr: "d.created_at", typ: "timestamptz"},
		"document_type": {expr: "d.document_type", typ: "text"},
		// The adding user's "first last" name; documents without a user
		// (API, email) sort as ''. Kept in the row by triggers (see the
		// migration) so the (account_id, added_by_name, id) index serves it.
		"added_by": {expr: "d.added_by_name", typ: "text"},
	},
}

type documentRow struct {
	model.Document
	pageMeta
}

type linkedDocument struct {
	ParentID string `db:"parent_id"`
	model.Document
}

func (r linkedDocument) linked() Linked[*model.Document] {
	d := r.Document
	return Linked[*model.Document]{ParentID: r.ParentID, Item: &d}
}

// DocumentsByIDs reads documents of the account.
func (db *DB) DocumentsByIDs(ctx context.Context, accountID string, ids []string) ([]*model.Document, error) {
	return byIDs[model.Document](ctx, db.read(accountID),
		`SELECT `+db.cols("Document")+` FROM documents d WHERE d.id = ANY($1) AND d.account_id = $2`, ids, accountID)
}

// DocumentsByShipmentIDs reads the documents linked to shipments.
func (db *DB) DocumentsByShipmentIDs(ctx context.Context, accountID string, shipmentIDs []string) ([]Linked[*model.Document], error) {
	return byParentIDs(ctx, db.read(accountID),
		`SELECT ds.shipment_id AS parent_id, `+db.cols("Document")+`
		 FROM document_shipments ds JOIN documents d ON d.account_id = ds.account_id AND d.id = ds.document_id
		 WHERE ds.shipment_id = ANY($1) AND ds.account_id = $2
		 ORDER BY ds.shipment_id, d.created_at, d.id`, accountID, shipmentIDs, linkedDocument.linked)
}

// DocumentsByContainerIDs reads the documents linked to containers.
func (db *DB) DocumentsByContainerIDs(ctx context.Context, accountID string, containerIDs []string) ([]Linked[*model.Document], error) {
	return byParentIDs(ctx, db.read(accountID),
		`SELECT dc.container_id AS parent_id, `+db.cols("Document")+`
		 FROM document_containers dc JOIN documents d ON d.account_id = dc.account_id AND d.id = dc.document_id
		 WHERE dc.container_id = ANY($1) AND dc.account_id = $2
		 ORDER BY dc.container_id, d.created_at, d.id`, accountID, containerIDs, linkedDocument.linked)
}

// EmailSubmissionsByIDs reads email submissions of the account.
func (db *DB) EmailSubmissionsByIDs(ctx context.Context, accountID string, ids []string) ([]*model.EmailSubmission, error) {
	return byIDs[model.EmailSubmission](ctx, db.read(accountID),
		`SELECT `+emailSubmissionCols+` FROM email_submissions e WHERE e.id = ANY($1) AND e.account_id = $2`, ids, accountID)
}

// DocumentRepresentationsByIDs reads document representations of the account.
func (db *DB) DocumentRepresentationsByIDs(ctx context.Context, accountID string, ids []string) ([]*model.DocumentRepresentation, error) {
	return byIDs[model.DocumentRepresentation](ctx, db.read(accountID),
		`SELECT `+documentRepresentationCols+` FROM document_representations r WHERE r.id = ANY($1) AND r.account_id = $2`, ids, accountID)
}

// ListDocuments reads one page of the account's documents.
func (db *DB) ListDocuments(ctx context.Context, accountID string, f model.DocumentFilter, p model.PageRequest) (*model.Page[*model.Document], error) {
	st, err := documentList.pageQuery(documentFilter(accountID, f), p, db.cols("Document"))
	if err != nil {
		return nil, err
	}
	return readPage(ctx, db.read(accountID), st, func(r *documentRow) (*model.Document, *pageMeta) { return &r.Document, &r.pageMeta })
}

// CountDocuments counts the account's documents that match f.
func (db *DB) CountDocuments(ctx context.Context, accountID string, f model.DocumentFilter) (int, error) {
	return count(ctx, db.read(accountID), documentList, documentFilter(accountID, f))
}

func documentFilter(accountID string, f model.DocumentFilter) *conds {
	c := &conds{}
	c.add("d.account_id = %s", accountID)
	if len(f.IDs) > 0 {
		c.add("d.id = ANY(%s)", pq.Array(validUUIDs(f.IDs)))
	}
	if strings.TrimSpace(f.Filename) != "" {
		// The tokenizer of search (migration 00018): a filter with no
		// letter or digit has no words, a NULL query, and matches nothing.
		c.add("d.file_name_tsv @@ shipgraph_tsquery(%s::text)", f.Filename)
	}
	if t := normalizeNumber(f.Reference); t != "" {
		// One indexed branch per link table, as for the shipment search.
		c.add(`d.id IN (
			SELECT ds.document_id FROM document_shipments ds JOIN shipments s ON s.account_id = ds.account_id AND s.id = ds.shipment_id
			WHERE ds.account_id = %[1]s AND (upper(s.bill_of_lading_number) = %[2]s::text
				OR upper(s.normalized_number) = %[2]s::text OR s.ref_numbers @> ARRAY[%[2]s::text])
			UNION ALL
			SELECT dc.document_id FROM document_containers dc JOIN containers c ON c.account_id = dc.account_id AND c.id = dc.container_id
			WHERE dc.account_id = %[1]s AND (upper(c.number) = %[2]s::text OR c.ref_numbers @> ARRAY[%[2]s::text]))`,
			accountID, t)
	}
	if len(f.DocumentTypes) > 0 {
		c.add("(d.document_type = ANY(%[1]s) OR d.document_type_manual = ANY(%[1]s))", pq.Array(f.DocumentTypes))
	}
	return c
}
