// Package db is the PostgreSQL store: every SQL statement of Shipgraph lives
// here (the demo seeder's in db/seed, beside it). Reads are scoped to the
// caller's account; relationship reads take id lists (= ANY($1)) so loaders
// can batch them.
package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"shipgraph/model"
)

//go:embed migrations/*.sql
var migrations embed.FS

// QueriesTotal counts every SQL statement the store sends, by target
// ("primary" or "replica", replica.go), so anyone can see on /metrics how
// many statements a request cost and where reads went.
var QueriesTotal = promauto.NewCounterVec(prometheus.CounterOpts{
	Name: "shipgraph_db_queries_total",
	Help: "SQL statements sent to PostgreSQL by the store, by target (primary or replica).",
}, []string{"target"})

var (
	queriesPrimary = QueriesTotal.WithLabelValues("primary")
	queriesReplica = QueriesTotal.WithLabelValues("replica")
)

// DB is the store.
type DB struct {
	db  *sqlx.DB
	q   counted
	sel model.Selection // columns to read, by type (Select); nil reads every column
	url string          // for connections of its own (the Listener), never through a pooler
	ref *refCaches      // reference rows kept (refcache.go), shared with Select's stores
	// pooled: the pool goes through a pooler in transaction mode
	// (Options.Pooler); migrations then run on url.
	pooled bool
	// r routes reads to replicas (replica.go); nil without them.
	r *router
}

// Open connects to url with DefaultOptions and checks the connection.
func Open(ctx context.Context, url string) (*DB, error) { return OpenWith(ctx, url, DefaultOptions) }

// OpenWith connects to url, bounded as o says (connect.go), and checks the
// connection.
func OpenWith(ctx context.Context, url string, o Options) (*DB, error) {
	direct := url
	if o.Pooler {
		if o.DirectURL == "" {
			return nil, errors.New("database: behind a pooler (DATABASE_POOLER) the direct URL (DATABASE_DIRECT_URL) is required: LISTEN and migrations need a session of their own")
		}
		d := o
		d.Pooler = false
		direct = withTimeouts(o.DirectURL, d)
	}
	url = withTimeouts(url, o)
	if !o.Pooler {
		direct = url
	}
	c, err := connector(url, o)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	sdb := sqlx.NewDb(sql.OpenDB(c), "postgres")
	sdb.SetMaxOpenConns(20)
	sdb.SetMaxIdleConns(20)
	sdb.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := sdb.PingContext(pctx); err != nil {
		_ = sdb.Close()
		return nil, fmt.Errorf("database unreachable: %w", err)
	}
	r, err := openReplicas(sdb, o)
	if err != nil {
		_ = sdb.Close()
		return nil, err
	}
	if o.Pooler {
		return &DB{db: sdb, q: counted{ExtContext: sdb, textJSON: true, r: r}, url: direct, pooled: true, ref: &refCaches{}, r: r}, nil
	}
	return &DB{db: sdb, q: counted{ExtContext: newPrepared(sdb), r: r}, url: direct, ref: &refCaches{}, r: r}, nil
}

// Close stops polling the replicas and closes the connection pools.
func (db *DB) Close() error {
	db.r.close()
	return db.db.Close()
}

// Ping checks that the primary answers (readiness; replicas are reported
// by Replicas and never fail it).
func (db *DB) Ping(ctx context.Context) error {
	queriesPrimary.Inc()
	countInContext(ctx)
	return db.db.PingContext(ctx)
}

// SQL returns the underlying pool, for tooling (migrations, seeding).
func (db *DB) SQL() *sql.DB { return db.db.DB }

// Migrate applies the embedded migrations in order under a PostgreSQL
// advisory lock, so concurrent starts do not race. Idempotent.
func Migrate(ctx context.Context, sdb *sql.DB) error {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return err
	}
	// goose reads migrations from the root of the FS it is given.
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sdb, fsys,
		goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return migrateRiver(ctx, sdb)
}

// Migrate applies the embedded migrations to this store's database.
// Behind a pooler they run on a direct connection: their advisory lock is
// session-scoped.
func (db *DB) Migrate(ctx context.Context) error {
	if !db.pooled {
		return Migrate(ctx, db.db.DB)
	}
	sdb, err := sql.Open("postgres", db.url)
	if err != nil {
		return err
	}
	defer sdb.Close()
	return Migrate(ctx, sdb)
}

// ---------------------------------------------------------------- counting

type queryCountKey struct{}

// queryCounter is one counter of a context and the one it was nested in.
type queryCounter struct {
	n      *atomic.Int64
	parent *queryCounter
}

// WithQueryCounter returns a context whose statements are also counted in n,
// so a request can report (and a test can assert) what it cost. Counters
// nest: a statement counts in every counter of its context, so the access
// log's count and a test's own count of the same request both hold.
func WithQueryCounter(ctx context.Context, n *atomic.Int64) context.Context {
	parent, _ := ctx.Value(queryCountKey{}).(*queryCounter)
	return context.WithValue(ctx, queryCountKey{}, &queryCounter{n: n, parent: parent})
}

// CountStatement counts one statement sent outside the store's methods
// (the demo seeder's COPY, BEGIN and DDL), in QueriesTotal and in ctx's
// counter, so tooling costs show up where the store's own statements do.
func CountStatement(ctx context.Context) {
	queriesPrimary.Inc()
	countInContext(ctx)
}

func countInContext(ctx context.Context) {
	c, _ := ctx.Value(queryCountKey{}).(*queryCounter)
	for ; c != nil; c = c.parent {
		c.n.Add(1)
	}
}

// ext is what store methods run statements on: the pool or a transaction.
type ext interface {
	sqlx.ExtContext
}

// counted wraps a pool or transaction and counts every statement (and
// traces it: tracing.go). With
// textJSON (behind a pooler, where parameters go in lib/pq's binary mode)
// JSON values are sent as text: binary mode would send their []byte as
// binary, which jsonb does not read.
//
// With replicas (r set: the pool's, never a transaction's), a read of a
// session that may use one goes there (replica.go), and is sent again to
// the primary if it fails there; a write notes itself in the session.
type counted struct {
	sqlx.ExtContext
	textJSON bool
	r        *router
}

// jsonAsText returns args with the []byte of driver.Valuer arguments (the
// model's JSON types) as strings; plain []byte (bytea) stays binary.
func jsonAsText(args []any) []any {
	out := args
	for i, a := range args {
		v, ok := a.(driver.Valuer)
		if !ok {
			continue
		}
		dv, err := v.Value()
		if b, isBytes := dv.([]byte); err == nil && isBytes && b != nil {
			if &out[0] == &args[0] {
				out = append([]any(nil), args...) // the caller's slice stays as it was
			}
			out[i] = string(b)
		}
	}
	return out
}

func (c counted) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	countInContext(ctx)
	touch(ctx, q)
	if c.textJSON {
		args = jsonAsText(args)
	}
	ctx, sp := startStatement(ctx, q)
	if c.r != nil {
		if rep := c.r.replicaFor(ctx, q); rep != nil {
			queriesReplica.Inc()
			rows, err := rep.q.QueryContext(ctx, q, args...)
			if err == nil || !c.r.fallback(ctx, rep, err) {
				endStatement(sp, -1, err)
				return rows, err
			}
		}
	}
	queriesPrimary.Inc()
	rows, err := c.ExtContext.QueryContext(ctx, q, args...)
	c.wrote(ctx, q, err)
	endStatement(sp, -1, err)
	return rows, err
}

func (c counted) QueryxContext(ctx context.Context, q string, args ...any) (*sqlx.Rows, error) {
	countInContext(ctx)
	touch(ctx, q)
	if c.textJSON {
		args = jsonAsText(args)
	}
	ctx, sp := startStatement(ctx, q)
	if c.r != nil {
		if rep := c.r.replicaFor(ctx, q); rep != nil {
			queriesReplica.Inc()
			rows, err := rep.q.QueryxContext(ctx, q, args...)
			if err == nil || !c.r.fallback(ctx, rep, err) {
				endStatement(sp, -1, err)
				return rows, err
			}
		}
	}
	queriesPrimary.Inc()
	rows, err := c.ExtContext.QueryxContext(ctx, q, args...)
	c.wrote(ctx, q, err)
	endStatement(sp, -1, err)
	return rows, err
}

func (c counted) QueryRowxContext(ctx context.Context, q string, args ...any) *sqlx.Row {
	countInContext(ctx)
	touch(ctx, q)
	if c.textJSON {
		args = jsonAsText(args)
	}
	ctx, sp := startStatement(ctx, q)
	if c.r != nil {
		if rep := c.r.replicaFor(ctx, q); rep != nil {
			queriesReplica.Inc()
			row := rep.q.QueryRowxContext(ctx, q, args...)
			if err := row.Err(); err == nil || !c.r.fallback(ctx, rep, err) {
				if sp != nil {
					endStatement(sp, -1, err)
				}
				return row
			}
		}
	}
	queriesPrimary.Inc()
	row := c.ExtContext.QueryRowxContext(ctx, q, args...)
	c.wrote(ctx, q, row.Err())
	if sp != nil {
		endStatement(sp, -1, row.Err())
	}
	return row
}

// wrote notes in ctx's session that q, sent to the primary, wrote (when
// it is not a read and did not fail).
func (c counted) wrote(ctx context.Context, q string, err error) {
	if c.r != nil && err == nil && !isRead(q) {
		c.r.wrote(ctx)
	}
}

func (c counted) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	queriesPrimary.Inc()
	countInContext(ctx)
	touch(ctx, q)
	if c.textJSON {
		args = jsonAsText(args)
	}
	ctx, sp := startStatement(ctx, q)
	res, err := c.ExtContext.ExecContext(ctx, q, args...)
	c.wrote(ctx, q, err)
	if sp != nil {
		n := int64(-1)
		if err == nil {
			n, _ = res.RowsAffected()
		}
		endStatement(sp, n, err)
	}
	return res, err
}

// inTx runs fn in a transaction (BEGIN and COMMIT are counted too: they are
// round trips like any other statement).
func (db *DB) inTx(ctx context.Context, fn func(q ext) error) error {
	queriesPrimary.Inc()
	countInContext(ctx)
	tx, err := db.db.BeginTxx(ctx, nil)
	if err != nil {
		return mapErr(err)
	}
	if err := fn(counted{ExtContext: tx, textJSON: db.pooled}); err != nil {
		_ = tx.Rollback()
		return err
	}
	queriesPrimary.Inc()
	countInContext(ctx)
	if err := tx.Commit(); err != nil {
		return mapErr(err)
	}
	if db.r != nil {
		db.r.wrote(ctx)
	}
	return nil
}

// ---------------------------------------------------------------- errors

// mapErr turns driver errors into application errors: no rows → not found,
// the rest as Classify (errors.go) says. Anything unclassified stays an
// internal error (logged, never shown).
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return model.Errorf(model.ENOTFOUND, "not found")
	}
	return Classify(err)
}

// EnsureDatabase creates database name on the server of adminURL if it does
// not exist yet (the embedded cluster starts with only "postgres").
func EnsureDatabase(ctx context.Context, adminURL, name string) error {
	sdb, err := sql.Open("postgres", adminURL)
	if err != nil {
		return err
	}
	defer sdb.Close()
	var exists bool
	queriesPrimary.Inc()
	if err := sdb.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("database unreachable: %w", err)
	}
	if exists {
		return nil
	}
	queriesPrimary.Inc()
	_, err = sdb.ExecContext(ctx, `CREATE DATABASE `+pq.QuoteIdentifier(name))
	var pqe *pq.Error
	if errors.As(err, &pqe) && pqe.Code == "42P04" { // created concurrently
		return nil
	}
	return err
}
