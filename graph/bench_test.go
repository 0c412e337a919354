package graph_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"shipgraph/graph"
	"shipgraph/graph/graphtest"
)

// BenchmarkDashboardQuery runs graph.DashboardQuery at first: 100 through
// the whole handler chain (body limit, key lookup, loaders, gqlgen) on the
// seeded data, and reports the median and 95th percentile latency and the
// statements per request besides ns/op:
//
//	go test ./graph -run '^$' -bench DashboardQuery -benchtime 50x
//
// The request is built and the answer checked without decoding it, so the
// numbers are the server's.
func BenchmarkDashboardQuery(b *testing.B) {
	e := graphtest.New(b, graphtest.Options{Shipments: 150})
	k := e.Keys[acmeAdmin]
	e.Must(b, k, graph.DashboardQuery, graphtest.Vars{"first": 100}, nil) // warm up
	payload, err := json.Marshal(map[string]any{"query": graph.DashboardQuery, "variables": map[string]any{"first": 100}})
	if err != nil {
		b.Fatal(err)
	}
	durations := make([]time.Duration, 0, b.N)
	before := graphtest.QueriesTotal(b)
	requests := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(payload))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Token "+k)
		rec := httptest.NewRecorder()
		start := time.Now()
		e.Handler.ServeHTTP(rec, req)
		durations = append(durations, time.Since(start))
		requests++
		if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) || rec.Body.Len() < 50_000 {
			b.Fatalf("status %d, %d bytes: %.300s", rec.Code, rec.Body.Len(), rec.Body.Bytes())
		}
	}
	b.StopTimer()
	slices.Sort(durations)
	pct := func(p float64) float64 {
		return float64(durations[int(p*float64(len(durations)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric((graphtest.QueriesTotal(b)-before)/float64(requests), "stmts/op")
}
