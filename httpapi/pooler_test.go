package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/graph"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
	"shipgraph/testkit/pgbouncertest"
)

// The real chain behind PgBouncer in transaction mode (two server
// connections for many clients): dashboards read concurrently, a /v2 write
// and its read-back, the key cache and live updates listening on the
// direct connection, migrations through it, and statement_timeout set where
// the pooler keeps it (on the database).
func TestBehindPgBouncer(t *testing.T) {
	direct, keys := seeded(t)
	pool := pgbouncertest.Start(t, dbtest.AdminURL(), 2)
	u, _ := url.Parse(direct)
	name := strings.TrimPrefix(u.Path, "/")
	pooled := pool.URL(name)

	// The timeout the pooler cannot carry in the startup packet, set on
	// the database: every server connection PgBouncer opens has it.
	ds := dbtest.Open(t, direct)
	if _, err := ds.Exec(`ALTER DATABASE "` + name + `" SET statement_timeout = '20s'`); err != nil {
		t.Fatal(err)
	}

	if _, err := db.OpenWith(context.Background(), pooled, db.Options{Pooler: true}); err == nil || !strings.Contains(err.Error(), "DATABASE_DIRECT_URL") {
		t.Fatalf("pooler without a direct URL: %v", err)
	}
	store := pg.OpenWith(t, pooled, db.Options{Pooler: true, DirectURL: direct, StatementTimeout: 30 * time.Second, ConnectTimeout: 5 * time.Second})
	if err := store.Migrate(context.Background()); err != nil {
		t.Fatalf("migrations behind the pooler: %v", err)
	}
	in := serveOn(t, store, testkit.Defaults()) // waits for the key cache to listen (directly)

	// The session of a pooled connection has the database's timeout.
	ps := dbtest.Open(t, pooled)
	var timeout string
	if err := ps.QueryRow(`SHOW statement_timeout`).Scan(&timeout); err != nil || timeout != "20s" {
		t.Fatalf("statement_timeout through the pooler: %q %v", timeout, err)
	}

	// Dashboards, concurrently: more clients than server connections.
	body, _ := json.Marshal(map[string]any{"query": graph.DashboardQuery, "variables": map[string]any{"first": 20}})
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for range 8 {
		wg.Go(func() {
			for range 5 {
				req, _ := http.NewRequest(http.MethodPost, in.url+"/graphql", strings.NewReader(string(body)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Token "+keys["acme/admin"])
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err.Error()
					return
				}
				var out struct {
					Data struct {
						Shipments struct {
							TotalCount int
							Nodes      []struct {
								ID         string
								Containers []struct{ ID string }
							}
						}
					}
					Errors []any
				}
				err = json.NewDecoder(res.Body).Decode(&out)
				_ = res.Body.Close()
				if err != nil || res.StatusCode != 200 || len(out.Errors) > 0 || len(out.Data.Shipments.Nodes) == 0 || out.Data.Shipments.TotalCount == 0 {
					errs <- fmt.Sprint(res.Status, " ", err, " ", out.Errors)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("dashboard through the pooler: %s", e)
	}

	// A /v2 write (a JSON value) and its read-back.
	r := in.do(t, http.MethodGet, "/v2/shipments?page[size]=1", keys["acme/member"], "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /v2/shipments: %d %s", r.status, r.body)
	}
	var list struct{ Data []struct{ ID string } }
	if err := json.Unmarshal(r.body, &list); err != nil || len(list.Data) != 1 {
		t.Fatalf("list: %v %s", err, r.body)
	}
	path := "/v2/shipments/" + list.Data[0].ID + "/custom_fields/customer_po"
	w := in.do(t, http.MethodPatch, path, keys["acme/member"], `{"data":{"type":"custom_field","attributes":{"value":"PO-POOLED-1"}}}`)
	if w.status != http.StatusOK || !strings.Contains(string(w.body), "PO-POOLED-1") {
		t.Fatalf("PATCH %s: %d %s", path, w.status, w.body)
	}
	if g := in.do(t, http.MethodGet, path, keys["acme/member"], ""); g.status != http.StatusOK || !strings.Contains(string(g.body), "PO-POOLED-1") {
		t.Fatalf("read-back: %d %s", g.status, g.body)
	}

	// Live updates listen on the direct connection: a change reaches a
	// subscriber of the pooled chain.
	c := in.ws(t, keys["acme/member"])
	c.Subscribe("1", `subscription { changes { operation type id } }`, nil)
	testkit.WaitFor(t, 30*time.Second, "the subscription", func() bool { return in.h.Subscriptions() == 1 })
	if w := in.do(t, http.MethodPatch, path, keys["acme/member"], `{"data":{"type":"custom_field","attributes":{"value":"PO-POOLED-2"}}}`); w.status != http.StatusOK {
		t.Fatalf("second PATCH: %d %s", w.status, w.body)
	}
	if m := c.Next(10 * time.Second); m.Type != "next" || m.ID != "1" {
		t.Fatalf("change through the pooled chain: %s %s %s", m.Type, m.ID, m.Payload)
	}
}
