package db_test

import (
	"context"
	"errors"
	"testing"

	"shipgraph/db"
)

// The tracking transactions run on held connections: one after another
// they run on one backend (the write statement planned once per writer,
// not per pool connection); a failed transaction's connection is given
// back, a held connection the server lost (terminated, as in a failover)
// is dropped at BEGIN and the transaction runs on a pool connection
// instead, no more are held than the bound given, and Close gives the
// held ones back to the pool.
func TestTrackingConnsHeld(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if !f.DB.GroupsAccounts() {
		t.Skip("no held connections here (Citus, a pooler): a pool connection a transaction")
	}
	ctx := context.Background()
	backend := func() int {
		t.Helper()
		var pid int
		err := f.DB.InTrackingTx(ctx, f.A.Account, func(tx *db.TrackingTx) error {
			return tx.QueryRow(`SELECT pg_backend_pid()`).Scan(&pid)
		})
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	backend()
	if n := f.DB.HeldTrackingConns(); n != 0 {
		t.Fatalf("%d connections held before a bound was given, want 0", n)
	}
	f.DB.HoldTrackingConns(1)
	first := backend()
	for range 3 {
		// Other users of the pool meanwhile: two connections at once,
		// given back in the order that leaves the pool's next (its most
		// recently returned) another than the one the writer used last.
		a, err := f.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, err := f.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_ = a.Close()
		_ = b.Close()
		if pid := backend(); pid != first {
			t.Fatalf("a tracking transaction on backend %d, the one before on %d: not held", pid, first)
		}
	}
	if n := f.DB.HeldTrackingConns(); n != 1 {
		t.Fatalf("%d connections held after transactions one at a time, want 1", n)
	}
	// Two at once: the second's connection is not kept past the bound.
	entered, leave := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- f.DB.InTrackingTx(ctx, f.A.Account, func(*db.TrackingTx) error {
			close(entered)
			<-leave
			return nil
		})
	}()
	<-entered
	backend()
	close(leave)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := f.DB.HeldTrackingConns(); n != 1 {
		t.Fatalf("%d connections held after two transactions at once, want the bound, 1", n)
	}
	failed := errors.New("planted")
	if err := f.DB.InTrackingTx(ctx, f.A.Account, func(*db.TrackingTx) error { return failed }); !errors.Is(err, failed) {
		t.Fatalf("a failing transaction: %v", err)
	}
	if n := f.DB.HeldTrackingConns(); n != 0 {
		t.Fatalf("%d connections held after a failed transaction, want 0 (given back)", n)
	}
	held := backend()
	if _, err := f.SQL.Exec(`SELECT pg_terminate_backend($1)`, held); err != nil {
		t.Fatal(err)
	}
	if pid := backend(); pid == held {
		t.Fatalf("a transaction on the terminated backend %d", pid)
	}
	backend()
	if n := f.DB.HeldTrackingConns(); n != 1 {
		t.Fatalf("%d connections held after the lost one's successors, want 1", n)
	}
	if err := f.DB.Close(); err != nil {
		t.Fatal(err)
	}
	if n := f.SQL.Stats().OpenConnections; n != 0 {
		t.Fatalf("%d connections open after Close, want 0 (the held one given back)", n)
	}
}
