package graph_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime/metrics"
	"slices"
	"testing"
	"time"

	"shipgraph/graph"
	"shipgraph/graph/graphtest"
)

// The benchmarks run requests through the whole handler chain (body limit,
// cached key lookup, loaders, gqlgen or /v2) on the seeded data and report,
// besides ns/op, B/op and allocs/op, the median and 95th percentile
// latency, the SQL statements and the goroutines started per request:
//
//	go test ./graph -run '^$' -bench . -benchmem -benchtime 200x
//
// (make bench). The answer is checked without decoding it, so the numbers
// are the server's. Timings on a shared machine are noisy: compare runs
// made one after the other, and prefer the counts.

// benchDashboard is the dashboard of ../shared/bench/compare.sh: 50
// shipments with containers, their terminal and its port, custom fields.
const benchDashboard = `query Dashboard {
  shipments(first: 50) {
    nodes {
      id
      billOfLadingNumber
      createdAt
      containers { number currentStatus equipmentType podTerminal { name firmsCode port { name code } } }
      customFields { apiSlug value }
    }
  }
}`

func BenchmarkDashboardQuery(b *testing.B) {
	benchGraphQL(b, graph.DashboardQuery, map[string]any{"first": 100}, 50_000)
}

func BenchmarkCompareDashboard(b *testing.B) {
	benchGraphQL(b, benchDashboard, nil, 20_000)
}

// BenchmarkDocumentsInclude is the /v2 list with includes of the issue:
// 100 documents with their shipments and containers.
func BenchmarkDocumentsInclude(b *testing.B) {
	benchREST(b, "/v2/documents?include=shipments,cargos&page[size]=100", 100_000)
}

// BenchmarkDocumentsIncludeSparse is the same list restricted by sparse
// fieldsets to what a table of documents shows.
func BenchmarkDocumentsIncludeSparse(b *testing.B) {
	benchREST(b, "/v2/documents?include=shipments,cargos&page[size]=100"+
		"&fields[document]=name,document_type,created_at,shipments,cargos"+
		"&fields[shipment]=bill_of_lading_number,pod_eta_at&fields[container]=number,current_status", 20_000)
}

func benchGraphQL(b *testing.B, query string, vars map[string]any, minBytes int) {
	payload, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		b.Fatal(err)
	}
	bench(b, minBytes, func(key string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(payload))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Token "+key)
		return req
	})
}

func benchREST(b *testing.B, path string, minBytes int) {
	bench(b, minBytes, func(key string) *http.Request {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Token "+key)
		return req
	})
}

func bench(b *testing.B, minBytes int, newRequest func(key string) *http.Request) {
	e := graphtest.New(b, graphtest.Options{Shipments: 400})
	k := e.Keys[acmeAdmin]
	do := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		e.Handler.ServeHTTP(rec, newRequest(k))
		if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) || rec.Body.Len() < minBytes {
			b.Fatalf("status %d, %d bytes: %.300s", rec.Code, rec.Body.Len(), rec.Body.Bytes())
		}
		return rec
	}
	do() // warm up: the key cache, plans, connections
	durations := make([]time.Duration, 0, b.N)
	before := graphtest.QueriesTotal(b)
	goroutines := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(goroutines)
	started := goroutines[0].Value.Uint64()
	requests := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		do()
		durations = append(durations, time.Since(start))
		requests++
	}
	b.StopTimer()
	metrics.Read(goroutines)
	slices.Sort(durations)
	pct := func(p float64) float64 {
		return float64(durations[int(p*float64(len(durations)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric((graphtest.QueriesTotal(b)-before)/float64(requests), "stmts/op")
	b.ReportMetric(float64(goroutines[0].Value.Uint64()-started)/float64(requests), "goroutines/op")
}
