package graph_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"shipgraph/graph/executor"
	"shipgraph/graph/gqlhttp"
	"shipgraph/testkit"
)

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
	send := func(env *testkit.Env, q string) run {
		t.Helper()
		env.Must(t, k, q, nil, nil) // the key is cached from here on
		w0 := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("written"))
		h0 := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("handed_over"))
		before := testkit.QueriesTotal(t)
		res := env.Must(t, k, q, nil, nil)
		return run{
			stmts:      res.AfterAuth,
			scraped:    int64(testkit.QueriesTotal(t) - before),
			written:    testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("written")) - w0,
			handedOver: testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("handed_over")) - h0,
			data:       string(res.Data),
		}
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
