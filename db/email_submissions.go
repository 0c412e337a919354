package db

import (
	"context"

	"shipgraph/model"
)

// Email submissions as a list of their own, and the documents
// each brought.

var emailSubmissionList = &listSpec{
	plural: "email submissions",
	from:   "email_submissions e",
	alias:  "e",
	cols:   emailSubmissionCols,
	orders: map[string]sortSpec{
		"created_at": {expr: "e.created_at", typ: "timestamptz"},
	},
}

type emailSubmissionRow struct {
	model.EmailSubmission
	pageMeta
}

// ListEmailSubmissions reads one page of the account's email submissions.
func (db *DB) ListEmailSubmissions(ctx context.Context, accountID string, p model.PageRequest) (*model.Page[*model.EmailSubmission], error) {
	if !validUUID(accountID) {
		return &model.Page[*model.EmailSubmission]{Items: []*model.EmailSubmission{}, Keys: []*string{}}, nil
	}
	c := &conds{}
	c.add("e.account_id = %s", accountID)
	st, err := emailSubmissionList.pageQuery(c, p, emailSubmissionList.cols)
	if err != nil {
		return nil, err
	}
	return readPage(ctx, db.read(accountID), st, func(r *emailSubmissionRow) (*model.EmailSubmission, *pageMeta) {
		return &r.EmailSubmission, &r.pageMeta
	})
}

// CountEmailSubmissions counts the account's email submissions.
func (db *DB) CountEmailSubmissions(ctx context.Context, accountID string) (int, error) {
	if !validUUID(accountID) {
		return 0, nil
	}
	c := &conds{}
	c.add("e.account_id = %s", accountID)
	return count(ctx, db.read(accountID), emailSubmissionList, c)
}

// DocumentsByEmailSubmissionIDs reads the documents emails brought, oldest
// first within each email.
func (db *DB) DocumentsByEmailSubmissionIDs(ctx context.Context, accountID string, ids []string) ([]Linked[*model.Document], error) {
	return byParentIDs(ctx, db.read(accountID),
		`SELECT d.email_submission_id AS parent_id, `+db.cols("Document")+`
		 FROM documents d
		 WHERE d.email_submission_id = ANY($1) AND d.account_id = $2
		 ORDER BY d.email_submission_id, d.created_at, d.id`, accountID, ids, linkedDocument.linked)
}
