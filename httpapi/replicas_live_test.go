//go:build linux

package httpapi_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
	"shipgraph/testkit/replicatest"
)

// withReplica starts an instance of the real chain on the primary at url
// that reads from standby, a read waiting up to wait for the replica to
// replay what it must see.
func withReplica(t *testing.T, url string, standby *replicatest.Standby, wait time.Duration) *instance {
	t.Helper()
	store := pg.OpenWith(t, url, db.Options{
		ConnectTimeout: 2 * time.Second, Replicas: []string{standby.URL()}, ReplicaWait: wait,
	})
	cfg := testkit.Defaults()
	in := serveOn(t, store, cfg)
	testkit.WaitFor(t, 20*time.Second, "the replica to be up", func() bool {
		status, body := in.readyz(t)
		return status == http.StatusOK && strings.Contains(body, ": up,")
	})
	return in
}

// standbyStatus is a container's current_status on the standby.
func standbyStatus(t *testing.T, standby *replicatest.Standby, id string) string {
	t.Helper()
	sdb := dbtest.Open(t, standby.URL())
	defer sdb.Close() // called in a wait loop: one pool per call would outlast it
	var s string
	if err := sdb.QueryRow(`SELECT current_status FROM containers WHERE id = $1`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// nextContainerEvent is the next event of an SSE container subscription.
func nextContainerEvent(t *testing.T, ch <-chan json.RawMessage, timeout time.Duration) containerEvent {
	t.Helper()
	select {
	case data, ok := <-ch:
		if !ok {
			t.Fatal("the subscription ended")
		}
		var r struct{ Data containerEvent }
		if err := json.Unmarshal(data, &r); err != nil || r.Data.ContainerUpdated.Container == nil {
			t.Fatalf("SSE event %s (%v)", data, err)
		}
		return r.Data
	case <-time.After(timeout):
		t.Fatal("no SSE event")
	}
	panic("unreachable")
}

// A subscription's re-read of a changed record uses a replica only once
// it replayed the change: with a standby applying WAL two seconds late, an
// instance that waits 50ms for the replica (the default) re-reads from the
// primary and an instance that waits longer re-reads from the replica;
// both send the written value, never the replica's older one.
func TestReplicaSubscriptionReRead(t *testing.T) {
	primary := dbtest.NewServer(t)
	keys := seedAt(t, primary.URL())
	standby := replicatest.Start(t, primary, replicatest.Options{ApplyDelay: applyDelay})
	d := liveDBAt(t, primary.URL(), keys)

	short := withReplica(t, primary.URL(), standby, 0) // the default wait
	long := withReplica(t, primary.URL(), standby, 4*applyDelay)
	fast, stop := testkit.SubscribeSSE(t, short.url, keys["acme/viewer"], containerSub)
	defer stop()
	slow, stop2 := testkit.SubscribeSSE(t, long.url, keys["acme/viewer"], containerSub)
	defer stop2()
	for _, in := range []*instance{short, long} {
		testkit.WaitFor(t, 30*time.Second, "the subscription", func() bool { return in.h.Subscriptions() == 1 })
	}

	id, _ := d.container(t, "acme", 0)
	testkit.WaitFor(t, 30*time.Second, "the standby to have the seed", func() bool { return standbyStatus(t, standby, id) != "" })
	was := standbyStatus(t, standby, id)
	status, want := "grounded", "GROUNDED"
	if was == status {
		status, want = "picked_up", "PICKED_UP"
	}

	before := replicaReads(t)
	d.exec(t, `UPDATE containers SET current_status = $1 WHERE id = $2`, status, id)
	written := time.Now()

	// The default wait: the replica has not replayed the change, the
	// re-read goes to the primary and carries the written value.
	ev := nextContainerEvent(t, fast, 30*time.Second)
	if got := ev.ContainerUpdated.Container.CurrentStatus; got != want {
		t.Fatalf("event through the instance with the short wait: status %s, want %s (the replica's was %s)", got, want, strings.ToUpper(was))
	}
	if onReplica := standbyStatus(t, standby, id) == status; onReplica && time.Since(written) < applyDelay/2 {
		t.Fatal("the standby applied the write at once: the apply delay did not hold, the test proves nothing")
	} else if !onReplica && replicaReads(t) != before {
		t.Fatal("a re-read went to a replica that has not replayed the change")
	}

	// The long wait: the re-read waits for the replica to replay the
	// change, then reads there.
	before = replicaReads(t)
	ev = nextContainerEvent(t, slow, 30*time.Second)
	if got := ev.ContainerUpdated.Container.CurrentStatus; got != want {
		t.Fatalf("event through the instance with the long wait: status %s, want %s", got, want)
	}
	if took := time.Since(written); took < applyDelay/2 {
		t.Fatalf("the re-read from the replica came %v after the write, before the standby could apply it", took)
	}
	if replicaReads(t) == before {
		t.Fatal("the re-read did not go to the replica once it replayed the change")
	}

}

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
	standby.PauseReplay(t)
	t.Cleanup(func() { standby.ResumeReplay(t) })
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
