package db_test

import (
	"context"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/testkit"
)

// A tracking transaction's statements run prepared on its connection,
// and the next transaction there reuses them; with every connection of
// the pool taken by the transaction itself, a statement not prepared yet
// runs unprepared instead of waiting for a connection to prepare it on.
func TestTrackingTxRunsPrepared(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const probe = `SELECT count(*) FROM pg_prepared_statements WHERE statement = $1`
	prepared := func(query string) (n int) {
		t.Helper()
		if err := f.DB.InTrackingTx(ctx, f.A.Account, func(tx *db.TrackingTx) error {
			var x int
			if err := tx.QueryRow(query).Scan(&x); err != nil {
				return err
			}
			return tx.QueryRow(probe, query).Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// One connection: every transaction runs on it, and the pool has
	// none left to prepare a new statement on.
	f.SQL.SetMaxOpenConns(1)
	if n := prepared(`SELECT 1 AS first_probe`); n != 0 {
		t.Errorf("with the pool's only connection in the transaction: %d prepared, want 0 (run unprepared)", n)
	}
	f.SQL.SetMaxOpenConns(2)
	// A first preparation waits for the pool's other connection only
	// prepareWait (50 ms): on a loaded machine opening it can take longer,
	// and the statement then runs unprepared that time, as it should. The
	// next transaction prepares it.
	testkit.WaitFor(t, 30*time.Second, "the second probe prepared on the transaction's connection", func() bool {
		return prepared(`SELECT 2 AS second_probe`) == 1
	})
	f.SQL.SetMaxOpenConns(1)
	if n := prepared(`SELECT 2 AS second_probe`); n != 1 {
		t.Errorf("second probe again: %d prepared, want 1 (kept on the connection)", n)
	}
}

// Whether the server is plain PostgreSQL is found when the store is
// opened: a store that has run no transaction yet already groups the
// accounts' tracking writes on plain PostgreSQL (and never on Citus), and
// a pool of one that its transactions hold has nothing left to ask on.
func TestServerKnownAtOpen(t *testing.T) {
	t.Parallel()
	store := openDB(t)
	if got, want := store.GroupsAccounts(), !dbtest.Citus(t); got != want {
		t.Errorf("GroupsAccounts of a store just opened: %v, want %v (Citus: %v)", got, want, !want)
	}
}
