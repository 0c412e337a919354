//go:build linux

package live

import (
	"context"
	"database/sql"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/model"
	"shipgraph/testkit/pg"
	"shipgraph/testkit/replicatest"
)

// TestChangeHeldForSyncStandby: with a synchronous standby, a change whose
// commit stopped waiting for the standby (its wait cancelled, as
// pg_cancel_backend or a dying postmaster ends it) is visible on the
// primary, but a subscription does not get it until the standby has it:
// a failover meanwhile would lose it, and the promoted standby log
// another change at its position (TestFailoverPromote's flake, ci48). The
// standby is stopped so the commit waits; the reader, woken, reads the
// change and holds it (its barrier waits for the standby: the event
// waited for); the standby started again catches up, and the change goes
// out.
func TestChangeHeldForSyncStandby(t *testing.T) {
	srv := dbtest.NewServer(t)
	d := pg.At(t, srv.URL())
	d.Seed(t, 3)
	standby := replicatest.Start(t, srv, replicatest.Options{})
	synchronous(t, srv)
	// A store opened now: its sessions see synchronous_commit on.
	store := d.Open(t)
	listener := store.Listen(time.Second)
	t.Cleanup(listener.Close)
	hub := New(store, listener, Config{}, nil)
	t.Cleanup(hub.Close)
	who := d.Principals(t)
	s, err := hub.Subscribe(context.Background(), who["acme/admin"], nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Unsubscribe(s) })
	id := d.Text(t, `SELECT c.id FROM containers c JOIN accounts a ON a.id = c.account_id WHERE a.slug = 'acme' ORDER BY c.id LIMIT 1`)

	// With the standby up a change goes out as before (its barrier is
	// acknowledged at once).
	d.Exec(t, `UPDATE containers SET pickup_lfd_terminal = $2 WHERE id = $1`, id, pg.SeedNow.AddDate(10, 0, 1))
	first := take(t, s, 1)[0]
	barriers := db.StandbyBarriers.Load()
	if barriers == 0 {
		t.Error("no barrier ran for a change read with a synchronous standby")
	}

	standby.Stop(t)
	writer := dbtest.Open(t, srv.URL()+"&application_name=barrier-writer")
	wrote := make(chan error, 1)
	go func() {
		_, err := writer.Exec(`UPDATE containers SET pickup_lfd_terminal = $2 WHERE id = $1`, id, pg.SeedNow.AddDate(10, 0, 2))
		wrote <- err
	}()
	waitUntil(t, 30*time.Second, "the write's commit waiting for the standby", func() bool {
		return d.Count(t, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'barrier-writer' AND wait_event = 'SyncRep'`) == 1
	})
	d.Exec(t, `SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'barrier-writer' AND wait_event = 'SyncRep'`)
	if err := <-wrote; err != nil {
		t.Fatalf("the write whose wait was cancelled: %v (PostgreSQL commits it locally, with a WARNING)", err)
	}
	if n := d.Count(t, `SELECT count(*) FROM containers WHERE id = $1 AND pickup_lfd_terminal = $2`, id, pg.SeedNow.AddDate(10, 0, 2)); n != 1 {
		t.Fatal("the write whose wait was cancelled is not visible on the primary")
	}
	// The reader is woken (the floor tick, within a second) and reads the
	// change; it must hold it while its barrier waits for the standby.
	waitUntil(t, 30*time.Second, "the live reader's barrier waiting for the standby", func() bool {
		select {
		case <-s.Ready():
			t.Fatalf("the subscription got a change the synchronous standby does not have: %s", ids(changesOf(s.Take())))
		default:
		}
		return d.Count(t, `SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%shipgraph_barrier%' AND wait_event = 'SyncRep'`) > 0
	})
	select {
	case <-s.Ready():
		t.Fatalf("the subscription got a change the synchronous standby does not have: %s", ids(changesOf(s.Take())))
	default:
	}

	standby.Start(t)
	got := take(t, s, 1)[0]
	if got.ID != id || got.Log <= first.Log {
		t.Fatalf("after the standby caught up: change %s (log %d), want container %s after log %d", got.ID, got.Log, id, first.Log)
	}
	t.Logf("%d barriers for 2 changes", db.StandbyBarriers.Load())
}

// waitUntil polls cond until it holds, failing after limit.
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func changesOf(evs []Event) []*model.Change {
	out := make([]*model.Change, 0, len(evs))
	for _, e := range evs {
		if e.Change != nil {
			out = append(out, e.Change)
		}
	}
	return out
}

// TestMeasureSyncStandbyBarrier measures what the barrier costs a change:
// a primary with a synchronous standby, changes written one at a time
// (each commit acknowledged by the standby, then the wake-up the server
// sends), and the time from the commit's return to the change reaching a
// subscription, in alternating rounds of a hub whose reads take the
// barrier and of one whose sessions say synchronous_commit=local (so its
// reads see no synchronous standby: no barrier); and the barriers per
// change. A measurement, not a check: set SHIPGRAPH_LIVE_BARRIER_MEASURE
// to the rounds of each (50 changes a round).
func TestMeasureSyncStandbyBarrier(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv("SHIPGRAPH_LIVE_BARRIER_MEASURE"))
	if rounds <= 0 {
		t.Skip("set SHIPGRAPH_LIVE_BARRIER_MEASURE to the rounds of each kind (a measurement, not a check)")
	}
	srv := dbtest.NewServer(t)
	d := pg.At(t, srv.URL())
	d.Seed(t, 3)
	replicatest.Start(t, srv, replicatest.Options{})
	synchronous(t, srv)
	who := d.Principals(t)["acme/admin"]
	id := d.Text(t, `SELECT c.id FROM containers c JOIN accounts a ON a.id = c.account_id WHERE a.slug = 'acme' ORDER BY c.id LIMIT 1`)
	writer := dbtest.Open(t, srv.URL())
	hubs := map[string]*Hub{}
	for name, url := range map[string]string{"barrier": srv.URL(), "none": srv.URL() + "&synchronous_commit=local"} {
		store := pg.At(t, url).Store
		listener := store.Listen(time.Second)
		t.Cleanup(listener.Close)
		h := New(store, listener, Config{}, nil)
		t.Cleanup(h.Close)
		hubs[name] = h
	}
	lat := map[string][]time.Duration{}
	barriers := map[string]int64{}
	i := 0
	for r := range 2 * rounds {
		name := []string{"barrier", "none"}[r%2]
		s, err := hubs[name].Subscribe(context.Background(), who, nil)
		if err != nil {
			t.Fatal(err)
		}
		before := db.StandbyBarriers.Load()
		for range 50 {
			i++
			if _, err := writer.Exec(`UPDATE containers SET pickup_lfd_terminal = $2 WHERE id = $1`, id, pg.SeedNow.AddDate(10, 0, i)); err != nil {
				t.Fatal(err)
			}
			committed := time.Now()
			if _, err := writer.Exec(`SELECT pg_notify($1, '')`, db.ChangeChannel(who.AccountID)); err != nil {
				t.Fatal(err)
			}
			take(t, s, 1)
			lat[name] = append(lat[name], time.Since(committed))
		}
		barriers[name] += db.StandbyBarriers.Load() - before
		hubs[name].Unsubscribe(s)
	}
	for _, name := range []string{"barrier", "none"} {
		l := lat[name]
		slices.Sort(l)
		t.Logf("%s: %d changes, commit→subscription p50 %v p90 %v p99 %v; %.2f barriers a change",
			name, len(l), l[len(l)/2], l[len(l)*9/10], l[len(l)*99/100], float64(barriers[name])/float64(len(l)))
	}
}

// synchronous makes srv's standby (started) synchronous for the shipgraph
// database and waits until it is.
func synchronous(t *testing.T, srv *dbtest.Server) {
	t.Helper()
	admin := dbtest.Open(t, srv.URL())
	for _, q := range []string{"ALTER SYSTEM SET synchronous_standby_names = '*'", "SELECT pg_reload_conf()",
		"ALTER DATABASE shipgraph SET synchronous_commit = on"} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, 30*time.Second, "the standby synchronous", func() bool {
		var state sql.NullString
		if err := admin.QueryRow("SELECT max(sync_state) FROM pg_stat_replication").Scan(&state); err != nil {
			t.Fatal(err)
		}
		return state.String == "sync"
	})
}
