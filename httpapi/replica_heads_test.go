package httpapi_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
	"shipgraph/testkit/replicatest"
)

// TestChangeLogHeadsReadThePrimary: an account's change-log head (what
// the response cache records as a write's position and the hub starts a
// subscription from) is the primary's, even in a session whose reads use
// a replica that has not replayed the account's last change; and reading
// it does not make the session a writer: its next read still goes to the
// replica.
func TestChangeLogHeadsReadThePrimary(t *testing.T) {
	primary := dbtest.NewServer(t)
	seedAt(t, primary.URL())
	standby := replicatest.Start(t, primary, replicatest.Options{})
	store := pg.OpenWith(t, primary.URL(), db.Options{
		ConnectTimeout: 2 * time.Second, Replicas: []string{standby.URL()},
	})

	pdb := dbtest.Open(t, primary.URL())
	var account string
	if err := pdb.QueryRow(`SELECT account_id::text FROM shipments ORDER BY account_id LIMIT 1`).Scan(&account); err != nil {
		t.Fatal(err)
	}
	headOn := func(d *sql.DB) int64 {
		t.Helper()
		var pos int64
		if err := d.QueryRow(`SELECT coalesce(max(pos), 0) FROM change_log_heads WHERE account_id = $1`, account).Scan(&pos); err != nil {
			t.Fatal(err)
		}
		return pos
	}
	sdb := dbtest.Open(t, standby.URL())
	testkit.WaitFor(t, 30*time.Second, "the standby to replay the seed", func() bool {
		return headOn(sdb) == headOn(pdb)
	})

	// The account's change the standby cannot have: its replay is paused.
	pauseReplay(t, standby)
	t.Cleanup(func() { resumeReplay(t, standby) })
	if _, err := pdb.Exec(`UPDATE shipments SET tags = array_append(tags, 'heads-test')
		WHERE account_id = $1 AND id = (SELECT id FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 1)`, account); err != nil {
		t.Fatal(err)
	}
	want, stale := headOn(pdb), headOn(sdb)
	if want <= stale {
		t.Fatalf("primary head %d, standby %d: the write moved no head the standby lacks", want, stale)
	}

	// A session that may read from the replica, which the store knows is
	// up: its ordinary reads go there.
	ctx := store.WithSession(context.Background(), db.ReadsMayUseReplica)
	testkit.WaitFor(t, 30*time.Second, "a read of the session on the replica", func() bool {
		before := testkit.QueriesOn(t, "replica")
		if _, _, err := store.AccountChangeLogPos(ctx, account, 1); err != nil {
			t.Fatal(err)
		}
		return testkit.QueriesOn(t, "replica") > before
	})

	got, err := store.AccountChangeLogHead(ctx, account)
	if err != nil {
		t.Fatal(err)
	}
	heads, err := store.AccountChangeLogHeads(ctx, []string{account})
	if err != nil {
		t.Fatal(err)
	}
	if got != want || heads[account] != want {
		t.Errorf("head %d (heads %d), want the primary's %d (the paused replica has %d)", got, heads[account], want, stale)
	}
	before := testkit.QueriesOn(t, "replica")
	if _, _, err := store.AccountChangeLogPos(ctx, account, 1); err != nil {
		t.Fatal(err)
	}
	if testkit.QueriesOn(t, "replica") == before {
		t.Error("after reading the head, the session's reads left the replica: the head read marked it as a writer")
	}
}
