package db

import (
	"context"
	"strings"

	"shipgraph/model"
)

const (
	accountCols = `a.id, a.slug, a.company_name, a.created_at, a.updated_at`
	userCols    = `u.id, u.account_id, u.email, u.first_name, u.last_name, u.role, u.created_at, u.updated_at`
)

// FindAccount finds an account by id or slug (the CLI accepts either). A
// slug may itself look like a UUID, so both are tried, the id first.
func (db *DB) FindAccount(ctx context.Context, ref string) (*model.Account, error) {
	if validUUID(ref) {
		return getOne[model.Account](ctx, db.read(""), "account",
			`SELECT `+accountCols+` FROM accounts a WHERE a.id = $1 OR a.slug = $2
			 ORDER BY a.id = $1 DESC LIMIT 1`, ref, ref)
	}
	return getOne[model.Account](ctx, db.read(""), "account",
		`SELECT `+accountCols+` FROM accounts a WHERE a.slug = $1`, ref)
}

// FirstUserWithRole returns the account's oldest user with the role (used
// to attach a user to CLI-made keys).
func (db *DB) FirstUserWithRole(ctx context.Context, accountID, role string) (*model.User, error) {
	if !validUUID(accountID) {
		return nil, model.NotFound("user")
	}
	return getOne[model.User](ctx, db.read(accountID), "user",
		`SELECT `+userCols+` FROM users u WHERE u.account_id = $1 AND u.role = $2
		 ORDER BY u.created_at, u.id LIMIT 1`, accountID, role)
}

// AccountsByIDs reads accounts; only the caller's own account can come back.
func (db *DB) AccountsByIDs(ctx context.Context, accountID string, ids []string) ([]*model.Account, error) {
	return byIDs[model.Account](ctx, db.read(accountID),
		`SELECT `+accountCols+` FROM accounts a WHERE a.id = ANY($1) AND a.id = $2`, ids, accountID)
}

// UsersByIDs reads users of the account. With the reference cache on
// (SetReferenceTTL) users read are kept as reference rows are, by account
// and id: the API never writes users, and a dashboard page names the same
// few (reference custom fields' display values); an operator's edit shows
// within the TTL.
func (db *DB) UsersByIDs(ctx context.Context, accountID string, ids []string) ([]*model.User, error) {
	read := func(ctx context.Context, ids []string) ([]*model.User, error) {
		return byIDs[model.User](ctx, db.read(accountID),
			`SELECT `+userCols+` FROM users u WHERE u.id = ANY($1) AND u.account_id = $2`, ids, accountID)
	}
	if !db.ref.cached() {
		return read(ctx, ids)
	}
	prefix := accountID + "/"
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = prefix + id
	}
	return db.ref.users.byIDs(ctx, db.ref.ttlNow(), keys, func(u *model.User) string { return u.AccountID + "/" + u.ID },
		func(ctx context.Context, keys []string) ([]*model.User, error) {
			ids := make([]string, len(keys))
			for i, k := range keys {
				ids[i] = strings.TrimPrefix(k, prefix)
			}
			return read(ctx, ids)
		})
}

// IsEmpty reports whether no account exists yet (first start: seed or hint).
func (db *DB) IsEmpty(ctx context.Context) (bool, error) {
	var empty bool
	err := db.read("").QueryRowxContext(ctx, `SELECT NOT EXISTS (SELECT 1 FROM accounts)`).Scan(&empty)
	return empty, mapErr(err)
}
