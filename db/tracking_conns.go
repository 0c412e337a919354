package db

import (
	"context"
	"sync"

	"github.com/jmoiron/sqlx"
)

// trackingConns are the connections the tracking writers' transactions
// (InTrackingTxs) run on, held between them instead of taken from the
// pool for each one. A transaction's statements run prepared (preparedIn),
// and PostgreSQL plans a prepared statement per connection: the poll's
// write statement (applyPollsSQL, and its rendering over several
// accounts) cost 100–300 ms of planning the first time on each
// connection, and the writers, taking whichever pool connection was free,
// planned it on every connection of the pool (about 20 in a benchmark
// run: 1.3–2 ms of PostgreSQL CPU a poll over 1,500 polls,
// docs/tracking.md "The engine's start"). Held, it is planned once per
// writer.
//
// The store owns them: it holds up to the bound it is given
// (HoldTrackingConns: the tracking engine's writers, which never run more
// transactions at once), none until then, and gives them back to the
// pool at Close. Only where the statements are prepared and one
// transaction may write several accounts (GroupsAccounts: plain
// PostgreSQL, no pooler); elsewhere the store has none (nil) and every
// transaction takes a pool connection.
type trackingConns struct {
	mu     sync.Mutex
	max    int // how many are held between transactions, at most
	free   []*sqlx.Conn
	closed bool
}

// HoldTrackingConns lets the tracking transactions (InTrackingTxs) keep
// up to n connections between them: n is how many of them run at once
// (the tracking engine's writers). The largest n given holds. Nothing is
// held where it would not help (see trackingConns).
func (db *DB) HoldTrackingConns(n int) {
	if c := db.held; c != nil {
		c.mu.Lock()
		c.max = max(c.max, n)
		c.mu.Unlock()
	}
}

// heldConn is one transaction's held connection: conn nil when it has
// none (nothing held here, or its BEGIN failed).
type heldConn struct{ conn *sqlx.Conn }

// take is a free held connection, else a new one from the pool while
// fewer than the bound are held; nil when nothing is held here (the
// transaction then begins on the pool's).
func (c *trackingConns) take(ctx context.Context, pool *sqlx.DB) *heldConn {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	if n := len(c.free); n > 0 {
		conn := c.free[n-1]
		c.free = c.free[:n-1]
		c.mu.Unlock()
		return &heldConn{conn}
	}
	hold := c.max > 0 && !c.closed
	c.mu.Unlock()
	if !hold {
		return nil
	}
	conn, err := pool.Connx(ctx)
	if err != nil {
		return nil
	}
	return &heldConn{conn}
}

// begin begins the transaction on h's connection or, without one, on a
// pool connection. A held connection whose BEGIN fails (it was lost: the
// server restarted, a failover) goes back to the pool, which drops it,
// and the transaction begins on a pool connection instead, as it would
// have.
func (h *heldConn) begin(ctx context.Context, pool *sqlx.DB) func() (*sqlx.Tx, error) {
	return func() (*sqlx.Tx, error) {
		if h != nil && h.conn != nil {
			tx, err := h.conn.BeginTxx(ctx, nil)
			if err == nil {
				return tx, nil
			}
			_ = h.conn.Close()
			h.conn = nil
		}
		return pool.BeginTxx(ctx, nil)
	}
}

// give holds h's connection for the next transaction after one that
// succeeded, unless the bound is held already or the store closed; one
// whose transaction failed goes back to the pool (its session may hold
// state of the failure: the next transaction takes another).
func (c *trackingConns) give(h *heldConn, ok bool) {
	if h == nil || h.conn == nil {
		return
	}
	c.mu.Lock()
	keep := ok && !c.closed && len(c.free) < c.max
	if keep {
		c.free = append(c.free, h.conn)
	}
	c.mu.Unlock()
	if !keep {
		_ = h.conn.Close()
	}
}

// close gives the held connections back to the pool (Close, before the
// pool closes); those in a transaction now follow when it ends.
func (c *trackingConns) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	free := c.free
	c.free, c.closed = nil, true
	c.mu.Unlock()
	for _, conn := range free {
		_ = conn.Close()
	}
}

// heldNow is how many connections are held now (free, between
// transactions): tests.
func (c *trackingConns) heldNow() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.free)
}
