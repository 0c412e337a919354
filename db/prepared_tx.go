package db

import (
	"context"
	"database/sql"
	"time"

	"github.com/jmoiron/sqlx"
)

// prepareWait bounds how long a transaction waits for a pool connection
// to prepare a statement it has not prepared yet (the pool prepares on a
// connection of its own, then on the transaction's): when every connection
// is in a transaction the statement runs unprepared this time, rather than
// the transactions waiting for each other.
const prepareWait = 50 * time.Millisecond

// preparedTx runs a transaction's statements as the pool's prepared
// statements (prepared.go), each prepared once per connection and reused
// by every later transaction on it: no parse, analysis and, once
// PostgreSQL settles on its generic plan (after five executions), no
// planning per execution. A first poll's statements are a few large
// CTEs whose parsing and planning were about a third of the PostgreSQL
// CPU the poll cost (docs/tracking.md, "Where a first poll's CPU goes").
//
// Only the transactions that ask for it (preparedIn) use it. A statement
// that cannot be prepared (the cache is full) runs unprepared. A prepared
// statement that no longer fits the tables (a migration changed them
// under a running process) fails its transaction, is dropped, and the
// retried transaction prepares it anew.
type preparedTx struct {
	*sqlx.Tx
	p *prepared
}

// preparedIn returns the transaction scope q with its statements run
// prepared (preparedTx); q itself behind a pooler in transaction mode
// (nothing is prepared there) or when q is not a transaction's.
func (db *DB) preparedIn(q ext) ext {
	c, ok := q.(counted)
	if !ok || db.pooled {
		return q
	}
	tx, ok := c.ExtContext.(*sqlx.Tx)
	p := db.preparedStmts()
	if !ok || p == nil {
		return q
	}
	c.ExtContext = &preparedTx{Tx: tx, p: p}
	return c
}

// stmt is query's prepared statement on the transaction's connection, or
// nil (run it unprepared).
func (t *preparedTx) stmt(ctx context.Context, query string) *sqlx.Stmt {
	s, settled := t.p.known(query)
	if !settled {
		// Only a first preparation waits, and no longer than prepareWait.
		pctx, cancel := context.WithTimeout(ctx, prepareWait)
		s = t.p.stmt(pctx, query)
		cancel()
	}
	if s == nil {
		return nil
	}
	return t.Tx.StmtxContext(ctx, s)
}

// dropStale forgets query's statement when err says it no longer fits
// the tables.
func (t *preparedTx) dropStale(query string, err error) {
	if err != nil {
		t.p.stale(query, err)
	}
}

func (t *preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s := t.stmt(ctx, query)
	if s == nil {
		return t.Tx.ExecContext(ctx, query, args...)
	}
	res, err := s.ExecContext(ctx, args...)
	t.dropStale(query, err)
	return res, err
}

func (t *preparedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s := t.stmt(ctx, query)
	if s == nil {
		return t.Tx.QueryContext(ctx, query, args...)
	}
	rows, err := s.QueryContext(ctx, args...)
	t.dropStale(query, err)
	return rows, err
}

func (t *preparedTx) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	s := t.stmt(ctx, query)
	if s == nil {
		return t.Tx.QueryxContext(ctx, query, args...)
	}
	rows, err := s.QueryxContext(ctx, args...)
	t.dropStale(query, err)
	return rows, err
}

func (t *preparedTx) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	s := t.stmt(ctx, query)
	if s == nil {
		return t.Tx.QueryRowxContext(ctx, query, args...)
	}
	row := s.QueryRowxContext(ctx, args...)
	t.dropStale(query, row.Err())
	return row
}
