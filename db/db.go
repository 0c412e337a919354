// Package db is the PostgreSQL store: every SQL statement of Shipgraph lives
// here (the demo seeder's in db/seed, beside it). Reads are scoped to the
// caller's account; relationship reads take id lists (= ANY($1)) so loaders
// can batch them.
package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
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
	// w wakes the change log's readers after writes (wakeup.go).
	w *waker
	// noRollups counts every grouped count with GROUP BY, never from the
	// rollups (WithoutStatsRollups).
	noRollups bool
	// searchWindow replaces the newest records a search reads first
	// (search.go) when above 0: tests make it small.
	searchWindow int
	// plain: the server is plain PostgreSQL, not Citus (serverIsCitus),
	// found once when the store is opened; the one answer of the store's
	// statements (the tracking transactions' plan and grouping) and of its
	// migrations (the distribution step). The zero value (false) is the
	// careful answer: what is done only on plain PostgreSQL is not done.
	plain bool
	// sb runs the barriers of change-log readers with a synchronous
	// standby (standby.go), shared by the store's copies (Select).
	sb *standbyBarrier
	// held: the connections the tracking transactions keep between them
	// (tracking_conns.go), shared by the store's copies; nil where none
	// are kept (Citus, a pooler).
	held *trackingConns
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
	// Asked here, before any transaction holds a connection (asked in a
	// transaction, on the pool, it waited forever for a pool of one), and
	// once: a failed look-up fails the open, as a failed ping does, rather
	// than leave a store that guessed (docs/decisions.md).
	citus, err := serverIsCitus(pctx, sdb)
	if err != nil {
		_ = sdb.Close()
		return nil, fmt.Errorf("database: is the server Citus: %w", err)
	}
	r, err := openReplicas(sdb, o)
	if err != nil {
		_ = sdb.Close()
		return nil, err
	}
	w := newWaker(sdb.DB)
	if o.Pooler {
		return &DB{db: sdb, q: counted{ExtContext: sdb, textJSON: true, r: r, w: w}, url: direct, pooled: true, ref: &refCaches{}, r: r, w: w,
			plain: !citus, sb: &standbyBarrier{}}, nil
	}
	var held *trackingConns
	if !citus {
		held = &trackingConns{}
	}
	return &DB{db: sdb, q: counted{ExtContext: newPrepared(sdb), r: r, w: w}, url: direct, ref: &refCaches{}, r: r, w: w,
		plain: !citus, sb: &standbyBarrier{}, held: held}, nil
}

// Close stops polling the replicas, sends the wake-ups of the last writes,
// gives the tracking transactions' held connections back and closes the
// connection pools.
func (db *DB) Close() error {
	db.r.close()
	db.w.close()
	db.held.close()
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

// preparedStmts is the pool's prepared statements (prepared.go); nil
// behind a pooler in transaction mode, where nothing is prepared.
func (db *DB) preparedStmts() *prepared {
	p, _ := db.q.ExtContext.(*prepared)
	return p
}

// Migrate applies the embedded migrations in order under a PostgreSQL
// advisory lock, so concurrent starts do not race, then the distribution
// step (Distribute, which asks the server whether it is Citus: sdb is not
// a store's). Idempotent.
func Migrate(ctx context.Context, sdb *sql.DB) error {
	if err := migrateSchema(ctx, sdb); err != nil {
		return err
	}
	return Distribute(ctx, sdb)
}

// Migrate applies the embedded migrations to this store's database, and
// the distribution step when the store's server is Citus (db.plain false).
// Behind a pooler they run on a direct connection: their advisory lock is
// session-scoped.
func (db *DB) Migrate(ctx context.Context) error {
	sdb := db.db.DB
	if db.pooled {
		var err error
		if sdb, err = sql.Open("postgres", db.url); err != nil {
			return err
		}
		defer sdb.Close()
	}
	if err := migrateSchema(ctx, sdb); err != nil || db.plain {
		return err
	}
	return distributeOnCitus(ctx, sdb)
}

// migrateSchema applies the embedded migrations and River's.
func migrateSchema(ctx context.Context, sdb *sql.DB) error {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return err
	}
	// goose reads migrations from the root of the FS it is given.
	fsys, err := migrationFS()
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

// ext is what store methods run statements on: a scope of the pool
// (DB.read, DB.write) or a transaction.
type ext interface {
	sqlx.ExtContext
}

// read is the scope of a store method that only reads: its statements may
// go to the session's replica (replica.go), chosen for account (the
// account whose data it reads; "" for reference data). The method says
// what it does; its SQL text is never inspected.
func (db *DB) read(account string) ext {
	c := db.q
	c.read, c.account = true, account
	return c
}

// readPrimary is the scope of a store method whose read must be the
// primary's: a position that is later compared with what the primary
// committed (an account's change-log head recorded as a write's position,
// a subscription's starting point). Its statements go to the primary
// whatever the session allows, and, being reads, note no write: the
// session's other reads may still use its replica.
func (db *DB) readPrimary(account string) ext {
	c := db.q
	c.read, c.primary, c.account = true, true, account
	return c
}

// write is the scope of a store method that writes (or reads what it is
// about to write): its statements go to the primary, and one that succeeds
// notes in the session that account's data was written (read-your-writes).
func (db *DB) write(account string) ext {
	c := db.q
	c.account = account
	return c
}

// counted is a scope of a pool or a transaction: every statement sent
// through it goes through send, the one statement path, which counts it
// (QueriesTotal and the context's counters), traces it (tracing.go),
// routes it and falls back. With textJSON (behind a pooler, where
// parameters go in lib/pq's binary mode) JSON values are sent as text:
// binary mode would send their []byte as binary, which jsonb does not read.
//
// With replicas (r set: the pool's, never a transaction's), a statement of
// a read scope goes to the session's replica when it may, and is sent
// again to the primary if it fails there; a statement of a write scope
// that succeeds notes the write in the session.
type counted struct {
	sqlx.ExtContext
	textJSON bool
	r        *router
	read     bool   // a read scope (DB.read); false: a write scope or a transaction
	primary  bool   // a read scope that never uses a replica (DB.readPrimary)
	account  string // the account whose data the scope reads or writes
	w        *waker // a write scope's: woken after a statement succeeds (nil in a transaction)
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

// send is the one statement path: it counts statement q, traces it, sends
// it with do to the replica the scope may read from or else to the primary
// (again to the primary when the replica failed, unless the request ended),
// and notes a write scope's success in the session. do returns the
// statement's result, its row count for the trace (-1: unknown) and its
// error.
func send[T any](c counted, ctx context.Context, q string, args []any,
	do func(e sqlx.ExtContext, ctx context.Context, q string, args []any) (T, int64, error)) (T, error) {
	countInContext(ctx)
	touch(ctx, q, c.read)
	if c.textJSON {
		args = jsonAsText(args)
	}
	ctx, sp := startStatement(ctx, q)
	if c.read && !c.primary && c.r != nil {
		if rep := c.r.replicaFor(ctx, c.account); rep != nil {
			queriesReplica.Inc()
			v, n, err := do(rep.q, ctx, q, args)
			if err == nil || !c.r.fallback(ctx, rep, err) {
				endStatement(sp, n, err)
				return v, err
			}
		}
	}
	queriesPrimary.Inc()
	v, n, err := do(c.ExtContext, ctx, q, args)
	if !c.read && err == nil {
		if c.r != nil {
			c.r.wrote(ctx, c.account)
		}
		c.w.wrote(c.account)
	}
	endStatement(sp, n, err)
	return v, err
}

func (c counted) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return send(c, ctx, q, args, func(e sqlx.ExtContext, ctx context.Context, q string, args []any) (*sql.Rows, int64, error) {
		rows, err := e.QueryContext(ctx, q, args...)
		return rows, -1, err
	})
}

func (c counted) QueryxContext(ctx context.Context, q string, args ...any) (*sqlx.Rows, error) {
	return send(c, ctx, q, args, func(e sqlx.ExtContext, ctx context.Context, q string, args []any) (*sqlx.Rows, int64, error) {
		rows, err := e.QueryxContext(ctx, q, args...)
		return rows, -1, err
	})
}

func (c counted) QueryRowxContext(ctx context.Context, q string, args ...any) *sqlx.Row {
	row, _ := send(c, ctx, q, args, func(e sqlx.ExtContext, ctx context.Context, q string, args []any) (*sqlx.Row, int64, error) {
		row := e.QueryRowxContext(ctx, q, args...)
		return row, -1, row.Err()
	})
	return row
}

func (c counted) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return send(c, ctx, q, args, func(e sqlx.ExtContext, ctx context.Context, q string, args []any) (sql.Result, int64, error) {
		res, err := e.ExecContext(ctx, q, args...)
		n := int64(-1)
		if err == nil {
			n, _ = res.RowsAffected()
		}
		return res, n, err
	})
}

// inTx runs fn in a transaction writing account's data ("": work of no
// one account): its statements go to the primary, and its commit notes the
// write in the session (BEGIN and COMMIT are counted too: they are round
// trips like any other statement).
func (db *DB) inTx(ctx context.Context, account string, fn func(q ext) error) error {
	return db.transact(ctx, account, mapErr, func(q ext, _ *sql.Tx) error { return fn(q) })
}

// inRawTx is inTx that also hands fn the *sql.Tx, for River's
// transactional inserts; a failing BEGIN or COMMIT returns the driver's
// error as it is.
func (db *DB) inRawTx(ctx context.Context, account string, fn func(q ext, tx *sql.Tx) error) error {
	return db.transact(ctx, account, func(err error) error { return err }, fn)
}

// transact is the one transaction path, with errs applied to BEGIN's and
// COMMIT's errors.
func (db *DB) transact(ctx context.Context, account string, errs func(error) error, fn func(q ext, tx *sql.Tx) error) error {
	return db.transactBy(ctx, func() (*sqlx.Tx, error) { return db.db.BeginTxx(ctx, nil) }, account, errs, fn)
}

// transactBy is transact on the transaction begin starts (a pool
// connection's, or a held one: InTrackingTxs).
func (db *DB) transactBy(ctx context.Context, begin func() (*sqlx.Tx, error), account string, errs func(error) error,
	fn func(q ext, tx *sql.Tx) error) error {
	queriesPrimary.Inc()
	countInContext(ctx)
	tx, err := begin()
	if err != nil {
		return errs(err)
	}
	if err := fn(counted{ExtContext: tx, textJSON: db.pooled}, tx.Tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	queriesPrimary.Inc()
	countInContext(ctx)
	if err := tx.Commit(); err != nil {
		return errs(err)
	}
	if db.r != nil {
		db.r.wrote(ctx, account)
	}
	db.w.wrote(account)
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
