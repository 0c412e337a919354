// Package pg is the database half of the test kit: a migrated database of
// the test's own (cloned from the template of db/dbtest), seeded with the
// demo data set (db/seed, fixed seed and "now", so ids, keys and values are
// the same on every run), and the plain-SQL reads and writes tests use for
// ground truth.
//
// It imports only db, db/dbtest and db/seed, so that the tests of packages
// the server is built from (live, webhook, carrier/tracking, resolve …) can
// use it even where importing testkit, which builds the whole process
// through app, would make an import cycle. testkit.Env is built on it.
package pg

import (
	"context"
	"crypto/rand"
	"database/sql"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/db/seed"
	"shipgraph/model"
)

// SeedNow is "today" of the seeded data.
var SeedNow = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// Main runs a package's tests with the migrated template available (see
// dbtest.Main): a test package's TestMain is
//
//	func TestMain(m *testing.M) { pg.Main(m) }
func Main(m *testing.M) { dbtest.Main(m, db.Migrate) }

// DB is a database of the test's own and the store open on it.
type DB struct {
	URL   string
	Store *db.DB
	// Keys are the demo API keys by "account/role", e.g. "acme/admin"
	// (none when the database was not seeded).
	Keys map[string]string
}

// New gives tb a migrated database of its own, seeded with shipments
// shipments (0 leaves it empty: migrated, no accounts), and a store on it,
// closed when tb ends.
func New(tb testing.TB, shipments int) *DB {
	tb.Helper()
	d := At(tb, dbtest.NewDB(tb))
	if shipments > 0 {
		d.Seed(tb, shipments)
	}
	return d
}

// At is the database at url (a migrated one: a standby's, an embedded
// server's) with a store open on it, closed when tb ends.
func At(tb testing.TB, url string) *DB {
	tb.Helper()
	d := &DB{URL: url, Keys: map[string]string{}}
	d.Store = d.Open(tb)
	return d
}

// Seed loads the demo data set with shipments shipments (fixed seed and
// "now") and adds its API keys to Keys.
func (d *DB) Seed(tb testing.TB, shipments int) {
	tb.Helper()
	tokens, _, err := seed.Run(context.Background(), d.Store, seed.Options{Shipments: shipments, Seed: 1, Now: SeedNow})
	if err != nil {
		tb.Fatalf("seed: %v", err)
	}
	for _, t := range tokens {
		d.Keys[t.Account+"/"+t.Role] = t.Key
	}
}

// Open is another store on the same database, as another process of the
// server would have, closed when tb ends.
func (d *DB) Open(tb testing.TB) *db.DB {
	tb.Helper()
	s, err := db.Open(context.Background(), d.URL)
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// Key returns the demo key of "account/role" (acme/admin …).
func (d *DB) Key(tb testing.TB, who string) string {
	tb.Helper()
	k, ok := d.Keys[who]
	if !ok {
		tb.Fatalf("no demo key for %s", who)
	}
	return k
}

// NewToken creates an API token of the account (an id) with role on
// store, and returns its key and the token's id.
func NewToken(tb testing.TB, store *db.DB, account, role string) (key, id string) {
	tb.Helper()
	key, err := db.NewAPIKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tok, err := store.CreateToken(context.Background(), db.TokenInput{AccountID: account, Role: role, Key: key})
	if err != nil {
		tb.Fatalf("creating a %s token: %v", role, err)
	}
	return key, tok.ID
}

// Principals authenticates every demo key, as the HTTP chain does, and
// returns the principals by "account/role".
func (d *DB) Principals(tb testing.TB) map[string]*model.Principal {
	tb.Helper()
	out := make(map[string]*model.Principal, len(d.Keys))
	for who, key := range d.Keys {
		p, err := d.Store.Authenticate(context.Background(), key)
		if err != nil {
			tb.Fatalf("authenticate %s: %v", who, err)
		}
		out[who] = p
	}
	return out
}

// Account is the id of the account with this slug.
func (d *DB) Account(tb testing.TB, slug string) string {
	tb.Helper()
	var id string
	d.One(tb, []any{&id}, `SELECT id FROM accounts WHERE slug = $1`, slug)
	return id
}

// One reads the one row of a query into dest, failing tb when there is
// none.
func (d *DB) One(tb testing.TB, dest []any, query string, args ...any) {
	tb.Helper()
	if err := d.Store.SQL().QueryRowContext(context.Background(), query, args...).Scan(dest...); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
}

// Count is the answer of a count(*) query.
func (d *DB) Count(tb testing.TB, query string, args ...any) int {
	tb.Helper()
	var n int
	d.One(tb, []any{&n}, query, args...)
	return n
}

// Text is the one text value the query selects.
func (d *DB) Text(tb testing.TB, query string, args ...any) string {
	tb.Helper()
	var s string
	d.One(tb, []any{&s}, query, args...)
	return s
}

// Exec runs plain SQL, as another system would.
func (d *DB) Exec(tb testing.TB, query string, args ...any) {
	tb.Helper()
	if _, err := d.Store.SQL().ExecContext(context.Background(), query, args...); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
}

// SQL runs a query for ground truth (ids of an account, counts) that the
// API under test must match: dest is a *[]string (every row's one column),
// an *int or a *string (the one row's one column).
func (d *DB) SQL(tb testing.TB, dest any, query string, args ...any) {
	tb.Helper()
	switch v := dest.(type) {
	case *[]string:
		for _, row := range d.Rows(tb, query, args...) {
			*v = append(*v, row[0])
		}
	case *int, *string:
		d.One(tb, []any{v}, query, args...)
	default:
		tb.Fatalf("pg.SQL: unsupported destination %T", dest)
	}
}

// Rows runs a query and returns every row as text columns (NULL as ""),
// for ground truth with several columns.
func (d *DB) Rows(tb testing.TB, query string, args ...any) [][]string {
	tb.Helper()
	rows, err := d.Store.SQL().QueryContext(context.Background(), query, args...)
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		vals := make([]*string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatalf("%s: %v", query, err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			if v != nil {
				row[i] = *v
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return out
}

// Querier is what Column reads through: a *sql.DB, *sql.Conn or *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Column reads the one column of every row of a query on q.
func Column[T any](tb testing.TB, q Querier, query string, args ...any) []T {
	tb.Helper()
	rows, err := q.QueryContext(context.Background(), query, args...)
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			tb.Fatalf("%s: %v", query, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return out
}

// OpenWith is a store on the database at url with o (replicas, a pooler,
// timeouts), closed when tb ends.
func OpenWith(tb testing.TB, url string, o db.Options) *db.DB {
	tb.Helper()
	s, err := db.OpenWith(context.Background(), url, o)
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}
