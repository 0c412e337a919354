package gqlhttp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"shipgraph/graph"
	"shipgraph/graph/gqlhttp"
	"shipgraph/testkit"
)

// fanOut is the fragment fan-out of issue 20: F_i = { ...F_{i+1}
// ...F_{i+1} }, levels deep, 2^levels fields once expanded, under a
// kilobyte of document.
func fanOut(levels int) string {
	var b strings.Builder
	b.WriteString("{ viewer { ...F0 } }\n")
	for i := range levels {
		fmt.Fprintf(&b, "fragment F%d on Viewer { ...F%d ...F%d }\n", i, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment F%d on Viewer { role }\n", levels)
	return b.String()
}

// TestCostBudget: what expands past the budget is refused before
// validation expands it — in milliseconds — and introspection counts.
func TestCostBudget(t *testing.T) {
	e := testkit.New(t, testkit.Options{Shipments: 3})
	k := e.Key(t, acmeAdmin)
	hc := gqlhttp.DefaultHandlerConfig

	fast := func(what, q string) *testkit.Result {
		t.Helper()
		begin := time.Now()
		res := e.Do(t, k, q, nil)
		took := time.Since(begin)
		if took > 500*time.Millisecond {
			t.Errorf("%s: refused after %v, want milliseconds", what, took)
		}
		t.Logf("%s: refused in %v (the whole request)", what, took)
		if len(res.Errors) != 1 || res.AfterAuth != 0 || (string(res.Data) != "null" && string(res.Data) != "") {
			t.Errorf("%s: %s (%d statements); want one error, no data, no SQL", what, res, res.AfterAuth)
		}
		return res
	}
	res := fast("fragment fan-out, 30 levels", fanOut(30))
	if len(res.Errors) == 1 && !strings.Contains(res.Errors[0].Message, "fields") {
		t.Errorf("fan-out refused as %q, want the field budget", res.Errors[0].Message)
	}
	fast("9,000 duplicated fields", "{ viewer { "+strings.Repeat("role ", 9000)+"} }")

	// Introspection: aliases count, and __schema once.
	var aliased strings.Builder
	aliased.WriteString("{ ")
	for i := range hc.AliasLimit + 1 {
		fmt.Fprintf(&aliased, "s%d: __typename ", i)
	}
	aliased.WriteString("}")
	fast("aliased introspection fields", aliased.String())
	res = fast("__schema twice", `{ a: __schema { queryType { name } } b: __schema { queryType { name } } }`)
	if len(res.Errors) == 1 && !strings.Contains(res.Errors[0].Message, "__schema") {
		t.Errorf("__schema twice refused as %q", res.Errors[0].Message)
	}

	// Within the budget, all is as before: a small fan-out, the
	// dashboard, GraphiQL-sized introspection.
	e.Must(t, k, fanOut(6), nil, nil)
	e.Must(t, k, graph.DashboardQuery, testkit.Vars{"first": 100}, nil)
	e.Must(t, k, `{ __schema { types { name fields { name type { name ofType { name ofType { name } } } } } } }`, nil, nil)
}
