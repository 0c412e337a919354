package graph_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"shipgraph/graph"
	"shipgraph/graph/executor"
	"shipgraph/graph/gqlhttp"
	"shipgraph/load"
	"shipgraph/testkit"
	"shipgraph/testkit/budgets"
)

// maxDashboardStatements is what the dashboard may cost at any page size
// with a known key: the page, its totalCount, then one statement per
// level's joint read (shipment custom fields and containers, db.ReadJoint)
// and one per relationship of the next levels (the users their reference
// values name, the containers' terminals, the terminals' ports) — 6 — with
// one to spare (testkit/budgets, docs/scale.md). The API key lookup is not
// among them: the warm-up request below caches the key (httpapi's key
// cache), and the chain's cache is live before the test starts.
var maxDashboardStatements = int64(budgets.Max("dashboard"))

// dashboard is the part of the dashboard answer the statement test checks,
// so a cheap answer cannot come from a query that loaded nothing.
type dashboard struct {
	Shipments struct {
		TotalCount int
		Nodes      []struct {
			ID           string
			CustomFields []struct{ APISlug string }
			Containers   []struct {
				ID                 string
				HoldsAtPodTerminal []struct{ Name string }
				PodTerminal        *struct {
					Name string
					Port struct{ Code string }
				}
			}
		}
	}
}

// testDashboardStatements holds graph.DashboardQuery to a flat number of
// statements, the same at first: 10 and first: 100, counted two ways: the
// request's own counter and the process-wide Prometheus counter scraped
// from /metrics before and after (so the test must not run alongside
// anything else that sends SQL). A relationship loaded one row at a time
// costs ~100 statements at first: 100 and fails it. Each size runs 20
// times: a loader batch that splits on a busy machine shows up as a count
// above the first.
func testDashboardStatements(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	// Warm up: plans, connections and the query cache, so the counts below
	// are those of a steady server (they are the same cold, but a cold
	// first request is slow enough to hide a batching problem).
	e.Must(t, k, graph.DashboardQuery, testkit.Vars{"first": 100}, nil)

	const runs = 20
	counts := map[int][]int64{}
	for _, first := range []int{10, 100} {
		for i := range runs {
			var d dashboard
			res := scrapedMatches(t, fmt.Sprintf("first %d run %d", first, i), func() *testkit.Result {
				return e.Must(t, k, graph.DashboardQuery, testkit.Vars{"first": first}, &d)
			})
			counts[first] = append(counts[first], res.Statements)
			if i == 0 {
				checkDashboardLoaded(t, first, &d)
			}
		}
	}
	t.Logf("statements per dashboard request over %d runs: first 10: %v; first 100: %v", runs, counts[10], counts[100])
	for _, first := range []int{10, 100} {
		if m := slices.Max(counts[first]); m > maxDashboardStatements {
			t.Errorf("dashboard at first: %d cost up to %d statements, want at most %d (a relationship is loaded per row, or a batch split)",
				first, m, maxDashboardStatements)
		}
	}
	if a, b := slices.Max(counts[10]), slices.Max(counts[100]); a != b || slices.Min(counts[10]) != slices.Min(counts[100]) {
		t.Errorf("dashboard cost depends on the page size: first 10: %v, first 100: %v", counts[10], counts[100])
	}

	// The same over the network, as a client and /metrics see it.
	var overHTTP []int64
	for range 5 {
		req := e.NewRequest(t, "POST", k, "", body(t, map[string]any{"query": graph.DashboardQuery, "variables": map[string]any{"first": 100}}))
		before := testkit.QueriesTotal(t)
		r := e.HTTP(t, req)
		n := int64(testkit.QueriesTotal(t) - before)
		if res := r.JSON(t); r.Status != 200 || len(res.Errors) > 0 {
			t.Fatalf("over HTTP: %d %s", r.Status, res)
		}
		overHTTP = append(overHTTP, n)
	}
	t.Logf("over HTTP, first 100: %v statements", overHTTP)
	if slices.Max(overHTTP) > maxDashboardStatements {
		t.Errorf("dashboard over HTTP cost up to %d statements, want at most %d", slices.Max(overHTTP), maxDashboardStatements)
	}

	// As the server runs (REFERENCE_CACHE_TTL): terminals, ports and the
	// users of reference values come from memory once read, so the page, its count, and its custom
	// fields with its containers (one joint read) are all that is left, at either size.
	t.Run("ReferenceCache", func(t *testing.T) {
		e.Store.SetReferenceTTL(time.Minute)
		defer e.Store.SetReferenceTTL(0)
		e.Must(t, k, graph.DashboardQuery, testkit.Vars{"first": 100}, nil)
		for _, first := range []int{10, 100} {
			var counts []int64
			for range 5 {
				counts = append(counts, e.Must(t, k, graph.DashboardQuery, testkit.Vars{"first": first}, nil).Statements)
			}
			// 3, or 4 in a moment the key cache is off (its listener
			// late on a busy machine) and the key is looked up.
			if slices.Min(counts) != 3 || slices.Max(counts) > int64(budgets.Max("dashboard cached")) {
				t.Errorf("first %d with the reference cache: %v statements, want 3", first, counts)
			}
		}
	})

	// The control: with one key per batch (loading row by row) the same
	// request must blow the budget, or the test above proves nothing.
	t.Run("RowByRowFails", func(t *testing.T) {
		one := testkit.Chain(t, e.Store, gqlhttp.DefaultHandlerConfig, load.LoaderConfig{Wait: time.Millisecond, MaxBatch: 1})
		row := e.With(t, one)
		res := row.Must(t, k, graph.DashboardQuery, testkit.Vars{"first": 100}, nil)
		if res.Statements <= 100 {
			t.Errorf("row-by-row loading cost %d statements; want > 100", res.Statements)
		}
	})
}

func checkDashboardLoaded(t *testing.T, first int, d *dashboard) {
	t.Helper()
	s := d.Shipments
	if len(s.Nodes) != first || s.TotalCount < first {
		t.Fatalf("first %d: %d nodes of %d", first, len(s.Nodes), s.TotalCount)
	}
	var containers, terminals, fields int
	for _, n := range s.Nodes {
		fields += len(n.CustomFields)
		for _, c := range n.Containers {
			containers++
			if c.PodTerminal != nil && c.PodTerminal.Port.Code != "" {
				terminals++
			}
		}
	}
	if containers < first || terminals == 0 || fields == 0 {
		t.Fatalf("first %d: the dashboard loaded %d containers, %d terminals with ports, %d custom fields; the seed should give some of each",
			first, containers, terminals, fields)
	}
	t.Logf("first %d: %d shipments, %d containers, %d pod terminals, %d custom field values", first, len(s.Nodes), containers, terminals, fields)
}

// wideQuery selects every relationship of shipments and of what hangs off
// them, three and four levels deep.
const wideQuery = `query Wide($first: Int!) {
  shipments(first: $first, orderBy: {field: BILL_OF_LADING_NUMBER}) {
    totalCount
    edges { cursor node { id } }
    nodes {
      id
      portOfLading { code } portOfDischarge { code }
      destination { __typename ... on Port { code } ... on MetroArea { code } }
      podTerminal { name port { code } }
      destinationTerminal {
        __typename
        ... on Terminal { name port { code } }
        ... on RailTerminal { name railPort: port { code } metroArea { code } }
      }
      lineTrackingStoppedByUser { email }
      customFields { apiSlug definition { apiSlug options { value definition { id } } } entity { __typename } }
      priority: customField(apiSlug: "priority_level") { value }
      documents {
        id user { email } account { companyName } emailSubmission { subject }
        lastDocumentRepresentation { schemaVersion } cargos { number } shipments { id }
      }
      containers {
        number shipment { id } podTerminal { port { code } } pickupFacility { name }
        customFields { value definition { apiSlug } } documents { id }
      }
    }
  }
}`

// wideQueryPaths is the number of relationship paths in wideQuery plus the
// key lookup, the page and its count: the most statements it may cost if
// every relationship at every level is one batch: 3 + 8 + 14 + 4
// (testkit/budgets).
var wideQueryPaths = int64(budgets.Max("wide query"))

// testWideQueryStatements: every relationship, not only the dashboard's,
// is loaded in batches: the wide query costs at most one statement per
// relationship path, at 10 rows as at 100. (Two sibling batches that feed
// one loader — ports reached through terminals and rail terminals — may or
// may not land in one statement, so the count is bounded, not fixed.)
func testWideQueryStatements(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	hc := gqlhttp.DefaultHandlerConfig
	hc.ComplexityLimit = 1 << 30 // not what this test is about
	w := e.WithGraphQL(t, hc)
	counts := map[int][]int64{}
	for _, first := range []int{10, 100} {
		for range 5 {
			var d struct {
				Shipments struct {
					Nodes []struct {
						Documents  []idObj
						Containers []idObj
					}
				}
			}
			res := w.Must(t, k, wideQuery, testkit.Vars{"first": first}, &d)
			counts[first] = append(counts[first], res.Statements)
			if len(d.Shipments.Nodes) != first {
				t.Fatalf("first %d: %d shipments", first, len(d.Shipments.Nodes))
			}
		}
	}
	t.Logf("wide query statements: first 10: %v; first 100: %v (bound %d)", counts[10], counts[100], wideQueryPaths)
	for _, first := range []int{10, 100} {
		if m := slices.Max(counts[first]); m > wideQueryPaths {
			t.Errorf("wide query at first: %d cost up to %d statements, want at most %d", first, m, wideQueryPaths)
		}
	}
}

// scrapedMatches runs the request do and checks that the process-wide
// counter (/metrics) moved by the statements the request counted. A
// statement the request's counter misses differs on every try; one another
// goroutine of the process sent in the window (a background loop of an
// earlier test's server) does not come back three times in a row.
func scrapedMatches(t *testing.T, what string, do func() *testkit.Result) *testkit.Result {
	t.Helper()
	for try := 0; ; try++ {
		before := testkit.QueriesTotal(t)
		res := do()
		scraped := int64(testkit.QueriesTotal(t) - before)
		if scraped == res.Statements {
			return res
		}
		if try == 2 {
			t.Errorf("%s: /metrics counted %d statements, the request counter %d (three tries)", what, scraped, res.Statements)
			return res
		}
	}
}

// TestFastPathHandOverStatements: a query that starts on the fast path and
// is handed over to gqlgen has every statement of both runs counted, in
// shipgraph_db_queries_total and in the request's own counter (the access
// log's), and counts as handed_over. Not parallel: it reads process-wide
// counters.
//
// The query has two root fields, run side by side on the fast path: a page
// of shipments with its count (statements no loader caches, so gqlgen's run
// sends them again) and __type, which the fast path hands over without SQL.
// So the handed-over request must cost what the page costs on the fast path
// plus what the whole query costs on gqlgen's executor alone.
func TestFastPathHandOverStatements(t *testing.T) {
	e := testkit.New(t, testkit.Options{Shipments: 12})
	k := e.Key(t, acmeAdmin)
	hc := gqlhttp.DefaultHandlerConfig
	hc.NoFastPath = true
	gq := e.WithGraphQL(t, hc)

	const page = `shipments(first: 5, orderBy: {field: BILL_OF_LADING_NUMBER}) { totalCount nodes { id billOfLadingNumber } }`
	const query = `{ ` + page + ` __type(name: "Shipment") { name } }`

	type run struct {
		stmts, scraped      int64
		written, handedOver float64
		data                string
	}
	// send runs q once more after a first run (the key is cached from
	// there on). The process-wide counter also counts what the process
	// runs in the background meanwhile (on Citus the change feed polls),
	// so a run whose two counts differ is tried again, up to five times:
	// a metric that miscounts the request's statements differs every time.
	send := func(env *testkit.Env, q string) run {
		t.Helper()
		env.Must(t, k, q, nil, nil)
		var r run
		for range 5 {
			w0 := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("written"))
			h0 := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("handed_over"))
			before := testkit.QueriesTotal(t)
			res := env.Must(t, k, q, nil, nil)
			r = run{
				stmts:      res.AfterAuth,
				scraped:    int64(testkit.QueriesTotal(t) - before),
				written:    testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("written")) - w0,
				handedOver: testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("handed_over")) - h0,
				data:       string(res.Data),
			}
			if r.scraped == r.stmts {
				break
			}
		}
		return r
	}

	alone := send(e, `{ `+page+` }`)
	if alone.written != 1 || alone.handedOver != 0 || alone.stmts < 2 {
		t.Fatalf("the page alone: written %v, handed over %v, %d statements; want it written with at least 2", alone.written, alone.handedOver, alone.stmts)
	}
	gqlgen := send(gq, query)
	handed := send(e, query)
	t.Logf("statements: page on the fast path %d, query on gqlgen %d, query handed over %d (/metrics %d)",
		alone.stmts, gqlgen.stmts, handed.stmts, handed.scraped)

	if handed.written != 0 || handed.handedOver != 1 {
		t.Errorf("written %v, handed over %v; want the query handed over once", handed.written, handed.handedOver)
	}
	if handed.data != gqlgen.data {
		t.Errorf("handed over: %s\ngqlgen alone: %s", handed.data, gqlgen.data)
	}
	if want := alone.stmts + gqlgen.stmts; handed.stmts != want {
		t.Errorf("the handed-over request counted %d statements, want %d (fast attempt %d + gqlgen's run %d)", handed.stmts, want, alone.stmts, gqlgen.stmts)
	}
	for name, r := range map[string]run{"page alone": alone, "gqlgen": gqlgen, "handed over": handed} {
		if r.scraped != r.stmts {
			t.Errorf("%s: shipgraph_db_queries_total counted %d statements, the request's counter %d", name, r.scraped, r.stmts)
		}
	}
}
