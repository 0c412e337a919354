package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/db/seed"
	"shipgraph/graph"
	"shipgraph/testkit"
	"shipgraph/testkit/pgbouncertest"
)

// BenchmarkDashboardPooler is the dashboard (50 shipments of 400) through
// the chain on three stores: direct with prepared statements (the
// default), direct with the pooler mode (no prepared statements, one round
// trip per statement), and through PgBouncer in transaction mode. Run the
// sub-benchmarks alternately (-count) to compare:
//
//	go test ./httpapi -run '^$' -bench DashboardPooler -benchtime 300x -count 3
func BenchmarkDashboardPooler(b *testing.B) {
	direct := dbtest.NewDB(b)
	store0, err := db.Open(context.Background(), direct)
	if err != nil {
		b.Fatal(err)
	}
	tokens, _, err := seed.Run(context.Background(), store0, seed.Options{Shipments: 400, Seed: 1, Now: testkit.SeedNow})
	_ = store0.Close()
	if err != nil {
		b.Fatal(err)
	}
	key := tokens[0].Key
	pool := pgbouncertest.Start(b, dbtest.AdminURL(), 20)
	u, _ := url.Parse(direct)
	pooled := pool.URL(strings.TrimPrefix(u.Path, "/"))
	payload, _ := json.Marshal(map[string]any{"query": graph.DashboardQuery, "variables": map[string]any{"first": 50}})
	for _, v := range []struct {
		name string
		url  string
		o    db.Options
	}{
		{"prepared", direct, db.DefaultOptions},
		{"unprepared", direct, db.Options{Pooler: true, DirectURL: direct}},
		{"pgbouncer", pooled, db.Options{Pooler: true, DirectURL: direct}},
	} {
		b.Run(v.name, func(b *testing.B) {
			store, err := db.OpenWith(context.Background(), v.url, v.o)
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			cfg := testkit.Defaults()
			cfg.RateLimit = 0
			h := testkit.Start(b, store, cfg)
			do := func() {
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(payload))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Token "+key)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) {
					b.Fatalf("%d %s", rec.Code, rec.Body.String()[:min(300, rec.Body.Len())])
				}
			}
			for range 20 {
				do() // warm: prepared statements, reference cache
			}
			b.ResetTimer()
			for b.Loop() {
				do()
			}
		})
	}
}
