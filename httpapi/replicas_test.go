//go:build linux

package httpapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/sharedlimit"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
	"shipgraph/testkit/pgbouncertest"
	"shipgraph/testkit/redistest"
	"shipgraph/testkit/replicatest"
)

// applyDelay is the standby's recovery_min_apply_delay: every write is
// missing on the replica for this long, so a read that finds it there
// must have been sent elsewhere.
const applyDelay = 2 * time.Second

// replicated starts an instance of the real chain whose store writes
// through PgBouncer (transaction mode) to the primary, listens and
// migrates directly, reads from standby, and shares limits and accounts'
// WAL positions through the Redis at redisURL.
func replicated(t *testing.T, pooledURL, directURL string, standby *replicatest.Standby, redisURL string, maxLag time.Duration) *instance {
	t.Helper()
	store := pg.OpenWith(t, pooledURL, db.Options{
		Pooler: true, DirectURL: directURL, ConnectTimeout: 2 * time.Second,
		Replicas: []string{standby.URL()}, ReplicaMaxLag: maxLag,
	})
	shared, err := sharedlimit.Open(redisURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testkit.Defaults()
	cfg.Shared = shared
	in := &instance{store: store, log: &testkit.Log{}}
	cfg.Logger = slog.New(slog.NewJSONHandler(in.log, nil))
	in.h = testkit.Start(t, store, cfg)
	t.Cleanup(shared.Close) // after the chain
	srv := httptest.NewServer(in.h)
	t.Cleanup(srv.Close)
	in.url = srv.URL
	return in
}

// replicaReads is shipgraph_db_queries_total{target="replica"}.
func replicaReads(t *testing.T) float64 { return testkit.QueriesOn(t, "replica") }

// readyz returns /readyz's status and body.
func (in *instance) readyz(t *testing.T) (int, string) {
	t.Helper()
	r := in.do(t, http.MethodGet, "/readyz", "", "")
	return r.status, string(r.body)
}

// Two instances behind PgBouncer on one primary, with a hot standby that
// applies WAL two seconds late and one Redis: reads go to the replica, a
// write acknowledged by one instance is read at once through the other
// (from the primary, the replica being behind), a replica beyond the lag
// bound is skipped, and a stopped replica costs nothing but its reads.
func TestReplicasManyInstances(t *testing.T) {
	if pgbouncertest.Binary() == "" {
		t.Skip("pgbouncer not installed (Debian package pgbouncer; .ci/run installs it)")
	}
	if redistest.Binary() == "" {
		t.Skip("redis-server not installed (Debian package redis-server; .ci/run installs it)")
	}
	primary := dbtest.NewServer(t)
	keys := seedAt(t, primary.URL())
	standby := replicatest.Start(t, primary, replicatest.Options{ApplyDelay: applyDelay})
	rs := redistest.Start(t)
	pool := pgbouncertest.Start(t, primary.URL(), 4)
	pooled := pool.URL("shipgraph")

	a := replicated(t, pooled, primary.URL(), standby, rs.URL, 0)
	b := replicated(t, pooled, primary.URL(), standby, rs.URL, 0)
	for _, in := range []*instance{a, b} {
		testkit.WaitFor(t, 20*time.Second, "the replica to be up", func() bool {
			status, body := in.readyz(t)
			return status == http.StatusOK && strings.Contains(body, ": up,")
		})
	}

	// Reads go to the replica: every statement of a /v2 list and of the
	// dashboard after the key lookup.
	member := keys["acme/member"]
	before := replicaReads(t)
	r := a.do(t, http.MethodGet, "/v2/shipments?page[size]=2&include=containers", member, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /v2/shipments: %d %s", r.status, r.body)
	}
	if got := replicaReads(t) - before; got < 2 {
		t.Fatalf("GET /v2/shipments: %v statements on the replica, want its reads (%d statements in all)", got, r.statements)
	}
	before = replicaReads(t)
	if g := b.gql(t, member, `{ shipments(first: 3) { totalCount nodes { id containers { id } } } }`); g.status != http.StatusOK || strings.Contains(string(g.body), `"errors"`) {
		t.Fatalf("dashboard: %d %s", g.status, g.body)
	}
	if replicaReads(t) == before {
		t.Fatal("the GraphQL query sent nothing to the replica")
	}

	// Read-your-writes across instances: a write through A, then at once
	// a read through B. The standby's replay is paused first, so it cannot
	// have the write, however slow the machine (the apply delay alone let
	// a slow run replay it before the read, and the check then asserted
	// nothing): B must read from the primary.
	var list struct{ Data []struct{ ID string } }
	if err := json.Unmarshal(r.body, &list); err != nil || len(list.Data) == 0 {
		t.Fatalf("list: %v %s", err, r.body)
	}
	path := "/v2/shipments/" + list.Data[0].ID + "/custom_fields/customer_po"
	standby.PauseReplay(t)
	w := a.do(t, http.MethodPatch, path, member, `{"data":{"type":"custom_field","attributes":{"value":"PO-REPLICA-1"}}}`)
	if w.status != http.StatusOK {
		t.Fatalf("PATCH %s: %d %s", path, w.status, w.body)
	}
	before = replicaReads(t)
	if g := b.do(t, http.MethodGet, path, member, ""); g.status != http.StatusOK || !strings.Contains(string(g.body), "PO-REPLICA-1") {
		t.Fatalf("read through B right after the write through A: %d %s", g.status, g.body)
	}
	if standbyHas(t, standby, "PO-REPLICA-1") {
		t.Fatal("the standby has the write while its replay is paused")
	}
	if replicaReads(t) != before {
		t.Fatal("B read its account's fresh write from a replica that has not replayed it")
	}
	// Another account, with no write of its own, still reads from the
	// replica meanwhile (it is within the default lag bound): the replica
	// was not skipped altogether.
	before = replicaReads(t)
	if g := b.do(t, http.MethodGet, "/v2/shipments?page[size]=1", keys["globex/member"], ""); g.status != http.StatusOK {
		t.Fatalf("globex: %d %s", g.status, g.body)
	}
	if replicaReads(t) == before {
		t.Fatal("an account without a recent write did not read from the replica")
	}
	standby.ResumeReplay(t)

	// A replica lagging beyond the bound is skipped: an instance bounded
	// to half the apply delay, after a write, sends even another
	// account's reads to the primary and reports the replica lagging.
	c := replicated(t, pooled, primary.URL(), standby, rs.URL, applyDelay/4)
	testkit.WaitFor(t, 30*time.Second, "the replica to catch up", func() bool { return standbyHas(t, standby, "PO-REPLICA-1") })
	testkit.WaitFor(t, 10*time.Second, "the replica to be up on C", func() bool {
		_, body := c.readyz(t)
		return strings.Contains(body, ": up,")
	})
	standby.PauseReplay(t) // it cannot catch up before C's check
	if w := a.do(t, http.MethodPatch, path, member, `{"data":{"type":"custom_field","attributes":{"value":"PO-REPLICA-2"}}}`); w.status != http.StatusOK {
		t.Fatalf("second PATCH: %d %s", w.status, w.body)
	}
	testkit.WaitFor(t, 30*time.Second, "C to see the replica lagging", func() bool {
		_, body := c.readyz(t)
		return strings.Contains(body, ": lagging,")
	})
	before = replicaReads(t)
	if g := c.do(t, http.MethodGet, "/v2/shipments?page[size]=1", keys["globex/member"], ""); g.status != http.StatusOK {
		t.Fatalf("C, replica lagging: %d %s", g.status, g.body)
	}
	if standbyHas(t, standby, "PO-REPLICA-2") {
		t.Fatal("the standby has the write while its replay is paused")
	}
	if replicaReads(t) != before {
		t.Fatal("C read from a replica lagging beyond its bound")
	}
	standby.ResumeReplay(t)
	// B (the default bound) reads the fresh value too, from the primary.
	if g := b.do(t, http.MethodGet, path, member, ""); g.status != http.StatusOK || !strings.Contains(string(g.body), "PO-REPLICA-2") {
		t.Fatalf("read through B after the second write: %d %s", g.status, g.body)
	}

	// Once replayed, B's reads of that account go to the replica again.
	testkit.WaitFor(t, 30*time.Second, "the replica to catch up", func() bool { return standbyHas(t, standby, "PO-REPLICA-2") })
	testkit.WaitFor(t, 30*time.Second, "B to poll the replica", func() bool {
		before := replicaReads(t)
		g := b.do(t, http.MethodGet, path, member, "")
		return g.status == http.StatusOK && strings.Contains(string(g.body), "PO-REPLICA-2") && replicaReads(t) > before
	})

	// The same through GraphQL, the replica having caught up: a mutation
	// through B, at once a query through A (a mutation's statements after
	// its write go to the primary; its answer records the position).
	standby.PauseReplay(t)
	m := b.gql(t, member, `mutation { updateShipmentCustomField(shipmentId: "`+list.Data[0].ID+`", apiSlug: "customer_po", value: "PO-GQL-1") { value } }`)
	if m.status != http.StatusOK || !strings.Contains(string(m.body), "PO-GQL-1") || strings.Contains(string(m.body), `"errors"`) {
		t.Fatalf("mutation through B: %d %s", m.status, m.body)
	}
	if g := a.gql(t, member, `{ shipment(id: "`+list.Data[0].ID+`") { customFields { apiSlug value } } }`); g.status != http.StatusOK || !strings.Contains(string(g.body), "PO-GQL-1") {
		t.Fatalf("query through A right after the mutation through B: %d %s", g.status, g.body)
	}
	if standbyHas(t, standby, "PO-GQL-1") {
		t.Fatal("the standby has the mutation while its replay is paused")
	}
	standby.ResumeReplay(t)

	// A stopped replica: reads still answer 200, from the primary, and
	// /readyz stays ready, reporting it down.
	standby.Stop(t)
	for _, in := range []*instance{a, b} {
		for range 3 {
			if g := in.do(t, http.MethodGet, path, member, ""); g.status != http.StatusOK || !strings.Contains(string(g.body), "PO-GQL-1") {
				t.Fatalf("replica stopped: %d %s", g.status, g.body)
			}
			if g := in.gql(t, member, `{ shipments(first: 2) { nodes { id } } }`); g.status != http.StatusOK || strings.Contains(string(g.body), `"errors"`) {
				t.Fatalf("replica stopped, GraphQL: %d %s", g.status, g.body)
			}
		}
		status, body := in.readyz(t)
		if status != http.StatusOK || !strings.HasPrefix(body, "ok\n") || !strings.Contains(body, ": down,") {
			t.Fatalf("/readyz with the replica stopped: %d %q", status, body)
		}
	}
	before = replicaReads(t)
	if g := a.do(t, http.MethodGet, "/v2/shipments?page[size]=1", member, ""); g.status != http.StatusOK {
		t.Fatalf("replica down: %d %s", g.status, g.body)
	}
	if replicaReads(t) != before {
		t.Fatal("a read was sent to a replica known to be down")
	}

	// Back: reads return to it.
	standby.Start(t)
	testkit.WaitFor(t, 20*time.Second, "reads to return to the replica", func() bool {
		before := replicaReads(t)
		g := a.do(t, http.MethodGet, "/v2/shipments?page[size]=1", member, "")
		return g.status == http.StatusOK && replicaReads(t) > before
	})
}

// standbyHas reports whether the standby has replayed a custom field value.
func standbyHas(t *testing.T, standby *replicatest.Standby, value string) bool {
	t.Helper()
	sdb := dbtest.Open(t, standby.URL())
	defer sdb.Close() // called in a wait loop: one pool per call would outlast it
	var n int
	if err := sdb.QueryRow(`SELECT count(*) FROM custom_fields WHERE value = to_jsonb($1::text)`, value).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}
