package db

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// prepared runs the pool's reads as prepared statements. lib/pq sends an
// unprepared statement with arguments in two round trips (parse and
// describe, then bind and execute), and PostgreSQL plans it anew each time;
// a prepared statement is one round trip and a cached plan. database/sql
// prepares a statement on each connection the first time it runs there.
//
// Statements are keyed by their text. The texts are bounded (column lists
// come from the allow-listed pickers, values are always parameters), but a
// cap keeps a pathological mix from growing the cache: beyond it reads run
// unprepared. Writes and everything in a transaction run unprepared.
type prepared struct {
	*sqlx.DB
	mu    sync.Mutex
	stmts map[string]*sqlx.Stmt
}

// maxPrepared caps the statements kept prepared.
const maxPrepared = 1000

func newPrepared(db *sqlx.DB) *prepared {
	return &prepared{DB: db, stmts: map[string]*sqlx.Stmt{}}
}

// stmt returns the prepared statement of query, preparing it the first
// time; nil when it cannot (the cache is full, or preparing failed: the
// unprepared run then reports the error).
func (p *prepared) stmt(ctx context.Context, query string) *sqlx.Stmt {
	if s, settled := p.known(query); settled {
		return s
	}
	s, err := p.DB.PreparexContext(ctx, query)
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.stmts[query]; ok {
		_ = s.Close()
		return old
	}
	p.stmts[query] = s
	return s
}

// known returns query's prepared statement, and whether that is settled
// without preparing: it is prepared already, or the cache is full (nil).
func (p *prepared) known(query string) (*sqlx.Stmt, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.stmts[query]
	return s, ok || len(p.stmts) >= maxPrepared
}

// stale reports whether err says a prepared statement no longer fits the
// tables (a migration changed a column it reads: "cached plan must not
// change result type"). The statement is then dropped and the read runs
// unprepared; the next read prepares it anew.
func (p *prepared) stale(query string, err error) bool {
	var pqErr *pq.Error
	if !errors.As(err, &pqErr) || pqErr.Code != "0A000" {
		return false
	}
	p.mu.Lock()
	s := p.stmts[query]
	delete(p.stmts, query)
	p.mu.Unlock()
	if s != nil {
		_ = s.Close()
	}
	return true
}

func (p *prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := p.stmt(ctx, query); s != nil {
		rows, err := s.QueryContext(ctx, args...)
		if err == nil || !p.stale(query, err) {
			return rows, err
		}
	}
	return p.DB.QueryContext(ctx, query, args...)
}

func (p *prepared) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	if s := p.stmt(ctx, query); s != nil {
		rows, err := s.QueryxContext(ctx, args...)
		if err == nil || !p.stale(query, err) {
			return rows, err
		}
	}
	return p.DB.QueryxContext(ctx, query, args...)
}

func (p *prepared) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	if s := p.stmt(ctx, query); s != nil {
		row := s.QueryRowxContext(ctx, args...)
		if err := row.Err(); err == nil || !p.stale(query, err) {
			return row
		}
	}
	return p.DB.QueryRowxContext(ctx, query, args...)
}
