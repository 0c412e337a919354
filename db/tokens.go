package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"errors"
	"io"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"shipgraph/model"
)

// API keys are "sg_" followed by 40 lowercase base32 characters (25 random
// bytes, 200 bits). Only their sha256 is stored; the first characters are
// kept as a display prefix so people can tell keys apart.
const (
	apiKeyPrefix    = "sg_"
	apiKeyBodyLen   = 40
	apiKeyLen       = len(apiKeyPrefix) + apiKeyBodyLen
	tokenPrefixLen  = 10
	apiKeyRandBytes = 25
)

var keyEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewAPIKey returns a new key made of randomness read from r:
// crypto/rand.Reader in production, a seeded reader for reproducible demo
// data.
func NewAPIKey(r io.Reader) (string, error) {
	b := make([]byte, apiKeyRandBytes)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return apiKeyPrefix + keyEncoding.EncodeToString(b), nil
}

// wellFormedKey reports whether key has the shape of an API key. Anything
// else cannot match a stored hash, so it is refused without a statement.
// Lowercase hex is accepted as well as base32, so hand-made test keys work.
func wellFormedKey(key string) bool {
	if len(key) != apiKeyLen || !strings.HasPrefix(key, apiKeyPrefix) {
		return false
	}
	for _, c := range key[len(apiKeyPrefix):] {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func hashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

const tokenCols = `t.id, t.account_id, t.user_id, t.role, t.prefix, t.name, t.created_at, t.last_used_at, t.revoked_at`

// TokenInput is a new API key to store. Key is the full key (from
// NewAPIKey); only its hash and prefix are kept.
type TokenInput struct {
	AccountID string
	UserID    *string
	Role      string
	Name      string
	Key       string
}

// CreateToken stores a key for an account (and optionally one of its users).
func (db *DB) CreateToken(ctx context.Context, in TokenInput) (*model.APIToken, error) {
	if !model.ValidRole(in.Role) {
		return nil, model.Errorf(model.EINVALID, "role must be admin, member or viewer")
	}
	if !wellFormedKey(in.Key) {
		return nil, model.Errorf(model.EINVALID, "API key is not well formed")
	}
	if !validUUID(in.AccountID) {
		return nil, model.NotFound("account")
	}
	if in.UserID != nil && !validUUID(*in.UserID) {
		return nil, model.NotFound("user")
	}
	// The user, when given, must belong to the account: the INSERT … SELECT
	// inserts nothing otherwise.
	const q = `WITH t AS (
	INSERT INTO api_tokens (account_id, user_id, role, token_sha256, prefix, name)
	SELECT a.id, $2, $3, $4, $5, $6 FROM accounts a
	WHERE a.id = $1 AND ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM users u WHERE u.id = $2 AND u.account_id = a.id))
	RETURNING id, account_id, user_id, role, prefix, name, created_at, last_used_at, revoked_at)
SELECT ` + tokenCols + ` FROM t`
	tok, err := getOne[model.APIToken](ctx, db.write(in.AccountID), "account or user", q,
		in.AccountID, in.UserID, in.Role, hashKey(in.Key), in.Key[:tokenPrefixLen], in.Name)
	if err != nil {
		return nil, err
	}
	return tok, nil
}

// RevokeToken revokes one of the account's keys. Revoking twice is a no-op
// that keeps the first revocation time (least ignores NULL; Citus refuses
// now() inside coalesce or CASE in a write, not inside least).
func (db *DB) RevokeToken(ctx context.Context, accountID, tokenID string) error {
	if !validUUID(tokenID) || !validUUID(accountID) {
		return model.NotFound("API token")
	}
	res, err := db.write(accountID).ExecContext(ctx,
		`UPDATE api_tokens SET revoked_at = least(revoked_at, now()) WHERE id = $1 AND account_id = $2`,
		tokenID, accountID)
	if err != nil {
		return mapErr(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return model.NotFound("API token")
	}
	// Every server forgets the key (wakeup.go); the key caches' floor
	// catches what changes keys without the server.
	db.w.tokenChanged(tokenID)
	return nil
}

// Authenticate resolves a key to its principal in one statement: the
// lookup by hash and, at most once a minute, the last_used_at bump (a
// data-modifying CTE, so a busy key does not write on every request).
func (db *DB) Authenticate(ctx context.Context, key string) (*model.Principal, error) {
	unauthenticated := model.Errorf(model.EUNAUTHENTICATED, "the API key is not valid")
	if !wellFormedKey(key) {
		return nil, unauthenticated
	}
	const q = `WITH t AS (
	SELECT id, account_id, user_id, role FROM api_tokens
	WHERE token_sha256 = $1 AND revoked_at IS NULL
), bump AS (
	UPDATE api_tokens SET last_used_at = now()
	WHERE id = (SELECT id FROM t)
	  AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
)
SELECT id, account_id, user_id, role FROM t`
	var row struct {
		ID        string  `db:"id"`
		AccountID string  `db:"account_id"`
		UserID    *string `db:"user_id"`
		Role      string  `db:"role"`
	}
	if err := sqlx.GetContext(ctx, db.write(""), &row, q, hashKey(key)); errors.Is(err, sql.ErrNoRows) {
		return nil, unauthenticated
	} else if err != nil {
		return nil, mapErr(err)
	}
	return &model.Principal{TokenID: row.ID, AccountID: row.AccountID, UserID: row.UserID, Role: row.Role}, nil
}

// TouchTokens records that the keys were used: last_used_at becomes now for
// those not bumped in the last minute (and not revoked). Servers that answer
// from their key cache call it off the request path, at most once a minute
// per key, so last_used_at stays as fresh as Authenticate keeps it.
func (db *DB) TouchTokens(ctx context.Context, ids []string) error {
	ids = validUUIDs(ids)
	if len(ids) == 0 {
		return nil
	}
	_, err := db.write("").ExecContext(ctx, `UPDATE api_tokens SET last_used_at = now()
WHERE id = ANY($1) AND revoked_at IS NULL
  AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`, pq.Array(ids))
	return mapErr(err)
}
