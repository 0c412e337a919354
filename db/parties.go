package db

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"shipgraph/model"
)

// Parties (migration 00019): an account's customers.

const (
	partyCols      = `p.id, p.account_id, p.company_name, p.created_at, p.updated_at`
	partyReturning = `id, account_id, company_name, created_at, updated_at`
	// PartyNameIndex keeps a company name once per account, whatever its
	// case: its violation is ErrDuplicateParty.
	PartyNameIndex = "parties_account_name_idx"
)

var partyList = &listSpec{
	plural: "parties",
	from:   "parties p",
	alias:  "p",
	cols:   partyCols,
	orders: map[string]sortSpec{
		"created_at": {expr: "p.created_at", typ: "timestamptz"},
	},
}

type partyRow struct {
	model.Party
	pageMeta
}

// PartiesByIDs reads parties of the account.
func (db *DB) PartiesByIDs(ctx context.Context, accountID string, ids []string) ([]*model.Party, error) {
	return byIDs[model.Party](ctx, db.read(accountID),
		`SELECT `+partyCols+` FROM parties p WHERE p.id = ANY($1) AND p.account_id = $2`, ids, accountID)
}

// ListParties reads one page of the account's parties.
func (db *DB) ListParties(ctx context.Context, accountID string, p model.PageRequest) (*model.Page[*model.Party], error) {
	if !validUUID(accountID) {
		return &model.Page[*model.Party]{Items: []*model.Party{}, Keys: []*string{}}, nil
	}
	c := &conds{}
	c.add("p.account_id = %s", accountID)
	st, err := partyList.pageQuery(c, p, partyList.cols)
	if err != nil {
		return nil, err
	}
	return readPage(ctx, db.read(accountID), st, func(r *partyRow) (*model.Party, *pageMeta) { return &r.Party, &r.pageMeta })
}

// CountParties counts the account's parties.
func (db *DB) CountParties(ctx context.Context, accountID string) (int, error) {
	if !validUUID(accountID) {
		return 0, nil
	}
	c := &conds{}
	c.add("p.account_id = %s", accountID)
	return count(ctx, db.read(accountID), partyList, c)
}

// ErrDuplicateParty is the conflict of a company name the account already
// has (in any case).
var ErrDuplicateParty = &model.Error{Code: model.ECONFLICT, Message: "the account already has a party of this company name"}

// CreateParty stores a party of the account and fills in what the
// database set. The unique index decides duplicates, so two creates racing
// cannot both pass.
func (db *DB) CreateParty(ctx context.Context, accountID string, p *model.Party) error {
	if !validUUID(accountID) {
		return model.NotFound("account")
	}
	err := sqlx.GetContext(ctx, db.write(accountID), p,
		`INSERT INTO parties (account_id, company_name) VALUES ($1, $2) RETURNING `+partyReturning, accountID, p.CompanyName)
	var pqe *pq.Error
	if errors.As(err, &pqe) && pqe.Code == "23505" && constraintIs(pqe, PartyNameIndex) {
		c := *ErrDuplicateParty
		return &c
	}
	return mapErr(err)
}

// RenameParty sets the company name of one of the account's parties and
// returns it; a name another party of the account has (in any case) is
// ErrDuplicateParty.
func (db *DB) RenameParty(ctx context.Context, accountID, id, name string) (*model.Party, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, model.NotFound("party")
	}
	p := &model.Party{}
	err := sqlx.GetContext(ctx, db.write(accountID), p,
		`UPDATE parties SET company_name = $3, updated_at = now() WHERE id = $1 AND account_id = $2 RETURNING `+partyReturning, id, accountID, name)
	var pqe *pq.Error
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, model.NotFound("party")
	case errors.As(err, &pqe) && pqe.Code == "23505" && constraintIs(pqe, PartyNameIndex):
		c := *ErrDuplicateParty
		return nil, &c
	case err != nil:
		return nil, mapErr(err)
	}
	return p, nil
}
