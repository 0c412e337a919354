package db

import (
	"context"
	"sync"

	"github.com/jmoiron/sqlx"
)

// TrackingConns are the connections the tracking writers' transactions
// run on (InTrackingTxs), held between batches instead of taken from the
// pool for each one. A transaction's statements run prepared (preparedIn),
// and PostgreSQL plans a prepared statement per connection: the poll's
// write statement (applyPollsSQL, and its rendering over several
// accounts) cost 100–300 ms of planning the first time on each
// connection, and the writers, taking whichever pool connection was free,
// planned it on every connection of the pool (about 20 in a benchmark
// run: 1.3–2 ms of PostgreSQL CPU a poll over 1,500 polls,
// docs/tracking.md "The engine's start"). Held, it is planned once per
// writer. At most as many are held as transactions ran at once (the
// engine's Writers); the pool's other users keep the rest.
//
// Only where the statements are prepared and one transaction may write
// several accounts (GroupsAccounts: plain PostgreSQL, no pooler);
// elsewhere DB.TrackingConns is nil and InTrackingTxs takes a pool
// connection as before.
type TrackingConns struct {
	db   *DB
	mu   sync.Mutex
	free []*sqlx.Conn
}

// TrackingConns is the store's held connections for tracking writes, nil
// where they would not help (see TrackingConns).
func (db *DB) TrackingConns() *TrackingConns {
	if !db.GroupsAccounts() || db.preparedStmts() == nil {
		return nil
	}
	return &TrackingConns{db: db}
}

// InTrackingTxs is DB.InTrackingTxs on a held connection: a free one, or
// a new one from the pool. A connection whose BEGIN fails (it was lost:
// the server restarted, a failover) is given back to the pool, which
// drops it, and the transaction begins on a pool connection instead, as
// it would have; one whose transaction failed is given back too (its
// session may hold state of the failure), the next batch takes another.
func (c *TrackingConns) InTrackingTxs(ctx context.Context, accounts []string,
	fn func(all *TrackingTx, txs []*TrackingTx) error) error {
	conn := c.take(ctx)
	begin := func() (*sqlx.Tx, error) {
		if conn != nil {
			tx, err := conn.BeginTxx(ctx, nil)
			if err == nil {
				return tx, nil
			}
			_ = conn.Close()
			conn = nil
		}
		return c.db.db.BeginTxx(ctx, nil)
	}
	err := c.db.inTrackingTxs(ctx, begin, accounts, fn)
	if conn != nil {
		if err != nil {
			_ = conn.Close()
		} else {
			c.give(conn)
		}
	}
	return err
}

// InTrackingTx is InTrackingTxs of one account.
func (c *TrackingConns) InTrackingTx(ctx context.Context, accountID string, fn func(tx *TrackingTx) error) error {
	return c.InTrackingTxs(ctx, []string{accountID}, func(_ *TrackingTx, txs []*TrackingTx) error { return fn(txs[0]) })
}

// Held is how many connections are held now (free, between batches).
func (c *TrackingConns) Held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.free)
}

// Close gives the held connections back to the pool.
func (c *TrackingConns) Close() {
	c.mu.Lock()
	free := c.free
	c.free = nil
	c.mu.Unlock()
	for _, conn := range free {
		_ = conn.Close()
	}
}

// take is a free held connection, else a new one from the pool; nil when
// the pool gives none (the transaction then begins on the pool's).
func (c *TrackingConns) take(ctx context.Context) *sqlx.Conn {
	c.mu.Lock()
	if n := len(c.free); n > 0 {
		conn := c.free[n-1]
		c.free = c.free[:n-1]
		c.mu.Unlock()
		return conn
	}
	c.mu.Unlock()
	conn, err := c.db.db.Connx(ctx)
	if err != nil {
		return nil
	}
	return conn
}

func (c *TrackingConns) give(conn *sqlx.Conn) {
	c.mu.Lock()
	c.free = append(c.free, conn)
	c.mu.Unlock()
}
