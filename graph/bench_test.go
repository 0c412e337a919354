package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime/metrics"
	"slices"
	"syscall"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"shipgraph/graph"
	"shipgraph/graph/gqlhttp"
	"shipgraph/load"
	"shipgraph/testkit"
	"shipgraph/tracing"
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

// BenchmarkCompareDashboardTraced is BenchmarkCompareDashboard with
// tracing on, every request sampled (docs/tracing.md): its spans go through
// the SDK's batch processor to an exporter that drops them, so the cost is
// Shipgraph's and the SDK's, without the network.
func BenchmarkCompareDashboardTraced(b *testing.B) {
	tp, err := tracing.New(context.Background(), sdktrace.NewBatchSpanProcessor(tracetest.NewNoopExporter()))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tp.Shutdown(context.Background()) }()
	benchTracer = tp.Provider()
	defer func() { benchTracer = nil }()
	benchGraphQL(b, benchDashboard, nil, 20_000)
}

// benchTracer, when set, traces the benchmark's chain.
var benchTracer trace.TracerProvider

// BenchmarkCompareDashboardBudget is BenchmarkCompareDashboard with a cost
// budget (GRAPHQL_COST_BUDGET, per process) too large to refuse: the cost
// of charging every operation and writing its headers.
func BenchmarkCompareDashboardBudget(b *testing.B) {
	benchCostBudget = 1 << 40
	defer func() { benchCostBudget = 0 }()
	benchGraphQL(b, benchDashboard, nil, 20_000)
}

// benchCostBudget, when positive, is the benchmark chain's cost budget.
var benchCostBudget int

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
	e := testkit.New(b, testkit.Options{Shipments: 400})
	if benchTracer != nil || benchCostBudget > 0 {
		c := testkit.Config(gqlhttp.DefaultHandlerConfig, load.DefaultLoaderConfig)
		c.Tracing, c.CostBudget = benchTracer, benchCostBudget
		e.Handler = testkit.Start(b, e.Store, c)
	}
	e.Store.SetReferenceTTL(time.Minute) // as the server does (REFERENCE_CACHE_TTL)
	k := e.Keys[acmeAdmin]
	do := func() {
		w := &sink{header: http.Header{}}
		e.Handler.ServeHTTP(w, newRequest(k))
		if w.code != http.StatusOK || w.errors || w.n < minBytes {
			b.Fatalf("status %d, %d bytes, errors %v: %.300s", w.code, w.n, w.errors, w.head)
		}
	}
	do() // warm up: the key cache, plans, connections
	durations := make([]time.Duration, 0, b.N)
	before := testkit.QueriesTotal(b)
	goroutines := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(goroutines)
	started := goroutines[0].Value.Uint64()
	requests := 0
	cpu0 := processCPU(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		do()
		durations = append(durations, time.Since(start))
		requests++
	}
	b.StopTimer()
	cpu := processCPU(b) - cpu0
	metrics.Read(goroutines)
	slices.Sort(durations)
	pct := func(p float64) float64 {
		return float64(durations[int(p*float64(len(durations)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric((testkit.QueriesTotal(b)-before)/float64(requests), "stmts/op")
	b.ReportMetric(float64(goroutines[0].Value.Uint64()-started)/float64(requests), "goroutines/op")
	b.ReportMetric(float64(cpu.Microseconds())/float64(requests), "cpu-µs/op")
}

// processCPU is the CPU time (user and system) the test process has used:
// per request, the server's CPU (with the benchmark's own small part) as
// the kernel counts it, which a loaded machine's wall times do not show.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sink is the response writer of the benchmarks: like a connection it
// keeps nothing of the body (so B/op and allocs/op are the server's), but
// counts it, keeps its start for messages and looks for an "errors"
// member.
type sink struct {
	header http.Header
	code   int
	n      int
	head   []byte
	tail   []byte // the last bytes written, for a member split across writes
	errors bool
}

func (s *sink) Header() http.Header { return s.header }

func (s *sink) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
}

func (s *sink) Write(p []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	if len(s.head) < 300 {
		s.head = append(s.head, p[:min(len(p), 300-len(s.head))]...)
	}
	joined := append(s.tail, p[:min(len(p), 16)]...)
	if bytes.Contains(joined, []byte(`"errors"`)) || bytes.Contains(p, []byte(`"errors"`)) {
		s.errors = true
	}
	s.tail = append(s.tail[:0], p[max(0, len(p)-16):]...)
	s.n += len(p)
	return len(p), nil
}
