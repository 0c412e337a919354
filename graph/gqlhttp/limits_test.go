package gqlhttp_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"shipgraph/graph"
	"shipgraph/graph/gqlhttp"
	"shipgraph/testkit"
)

// nested returns a query nested depth levels deep (root field included):
// shipment → containers → shipment → … → id.
func nested(depth int) string {
	var b strings.Builder
	b.WriteString(`query($id: ID!) { shipment(id: $id) { `)
	for d := 2; d < depth; d++ {
		if d%2 == 0 {
			b.WriteString("containers { ")
		} else {
			b.WriteString("shipment { ")
		}
	}
	b.WriteString("id ")
	b.WriteString(strings.Repeat("} ", depth-1))
	b.WriteString("}")
	return b.String()
}

// dashboardPages is the dashboard query n times in one operation, aliased.
func dashboardPages(n int) string {
	body := graph.DashboardQuery[strings.Index(graph.DashboardQuery, "shipments("):strings.LastIndex(graph.DashboardQuery, "}")]
	var b strings.Builder
	b.WriteString("query Pages($first: Int = 100) {\n")
	for i := range n {
		fmt.Fprintf(&b, "p%d: %s\n", i, strings.Replace(body, ", after: $after", "", 1))
	}
	b.WriteString("}")
	return b.String()
}

var complexityRe = regexp.MustCompile(`complexity (\d+)`)

// measureComplexity asks a handler with a complexity limit of 1 and reads
// the complexity from its refusal: the weights are the server's own.
func measureComplexity(t *testing.T, e *testkit.Env, k, query string, vars testkit.Vars) int {
	t.Helper()
	hc := gqlhttp.DefaultHandlerConfig
	hc.ComplexityLimit = 1
	m := e.WithGraphQL(t, hc)
	res := m.Do(t, k, query, vars)
	if len(res.Errors) != 1 {
		t.Fatalf("complexity probe: %s", res)
	}
	sub := complexityRe.FindStringSubmatch(res.Errors[0].Message)
	if sub == nil {
		t.Fatalf("complexity probe: %s", res)
	}
	n, _ := strconv.Atoi(sub[1])
	return n
}

func testLimits(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	ship := e.Text(t, `SELECT s.id FROM shipments s JOIN accounts a ON a.id = s.account_id WHERE a.slug = 'acme' ORDER BY s.id LIMIT 1`)
	hc := gqlhttp.DefaultHandlerConfig

	t.Run("Depth", func(t *testing.T) {
		e.Must(t, k, nested(hc.DepthLimit), testkit.Vars{"id": ship}, nil)
		res := e.Do(t, k, nested(hc.DepthLimit+1), testkit.Vars{"id": ship})
		testkit.Refused(t, "depth 13", res, "DEPTH_LIMIT_EXCEEDED")
		// Fragments do not hide depth.
		frag := `query($id: ID!) { shipment(id: $id) { ...S } }
			fragment S on Shipment { containers { shipment { containers { shipment { containers { shipment { ...T } } } } } } }
			fragment T on Shipment { containers { shipment { containers { shipment { containers { id } } } } } }`
		testkit.Refused(t, "depth through fragments", e.Do(t, k, frag, testkit.Vars{"id": ship}), "DEPTH_LIMIT_EXCEEDED")
		// Introspection nests deeper than the limit and must still work.
		e.Must(t, k, `{ __schema { types { name fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } }`, nil, nil)
	})

	t.Run("Complexity", func(t *testing.T) {
		one := measureComplexity(t, e, k, graph.DashboardQuery, testkit.Vars{"first": 100})
		ten := measureComplexity(t, e, k, dashboardPages(10), nil)
		t.Logf("complexity: dashboard at first: 100 = %d; ten such pages = %d; limit %d", one, ten, hc.ComplexityLimit)
		if one > hc.ComplexityLimit || ten <= hc.ComplexityLimit {
			t.Errorf("the limit %d must pass the dashboard (%d) and refuse ten pages of it (%d)", hc.ComplexityLimit, one, ten)
		}
		e.Must(t, k, graph.DashboardQuery, testkit.Vars{"first": 100}, nil)
		testkit.Refused(t, "ten dashboard pages", e.Do(t, k, dashboardPages(10), nil), "COMPLEXITY_LIMIT_EXCEEDED")
		// Variables count: the same query asks for 100 rows per page by
		// default and is refused as such.
		testkit.Refused(t, "ten pages by variable", e.Do(t, k, dashboardPages(10), testkit.Vars{"first": 100}), "COMPLEXITY_LIMIT_EXCEEDED")
	})

	// The complexity of an operation without variables is kept by its
	// text; one with variables is weighed on every request, by its
	// values.
	t.Run("ComplexityKept", func(t *testing.T) {
		probe := gqlhttp.DefaultHandlerConfig
		probe.ComplexityLimit = 1
		m := e.WithGraphQL(t, probe)
		weigh := func(query string, vars testkit.Vars) string {
			res := m.Do(t, k, query, vars)
			if len(res.Errors) != 1 || complexityRe.FindString(res.Errors[0].Message) == "" {
				t.Fatalf("complexity probe: %s", res)
			}
			return complexityRe.FindString(res.Errors[0].Message)
		}
		fixed := dashboardPages(2)
		fixed = strings.Replace(fixed, "query Pages($first: Int = 100)", "query Pages", 1)
		fixed = strings.ReplaceAll(fixed, "$first", "7")
		first, again := weigh(fixed, nil), weigh(fixed, nil)
		if first != again {
			t.Errorf("the same operation weighed %s, then %s", first, again)
		}
		if other := weigh(strings.ReplaceAll(fixed, "first: 7", "first: 70"), nil); other == first {
			t.Errorf("another text weighed as the first (%s)", other)
		}
		small, large := weigh(dashboardPages(2), testkit.Vars{"first": 1}), weigh(dashboardPages(2), testkit.Vars{"first": 100})
		if small == large {
			t.Errorf("first: 1 and first: 100 weighed alike (%s): the variables' complexity was kept", small)
		}
		if dflt := weigh(dashboardPages(2), nil); dflt != large {
			t.Errorf("the default (100) weighed %s, first: 100 %s", dflt, large)
		}
	})

	t.Run("Aliases", func(t *testing.T) {
		q := func(n int) string {
			var b strings.Builder
			b.WriteString("{ ")
			for i := range n {
				fmt.Fprintf(&b, "a%d: viewer { role } ", i)
			}
			return b.String() + "}"
		}
		e.Must(t, k, q(hc.AliasLimit), nil, nil)
		testkit.Refused(t, "16 aliases", e.Do(t, k, q(hc.AliasLimit+1), nil), "ALIAS_LIMIT_EXCEEDED")
		// Nested aliases count too.
		nestedAliases := `{ viewer { `
		for i := range hc.AliasLimit + 1 {
			nestedAliases += fmt.Sprintf("r%d: role ", i)
		}
		testkit.Refused(t, "16 nested aliases", e.Do(t, k, nestedAliases+"} }", nil), "ALIAS_LIMIT_EXCEEDED")
	})

	t.Run("ParserTokens", func(t *testing.T) {
		q := "{ viewer { " + strings.Repeat("role ", hc.TokenLimit) + "} }"
		res := e.Do(t, k, q, nil)
		if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "token") || res.AfterAuth != 0 {
			t.Errorf("%d tokens: %s (%d statements after the key lookup); want one error about the token limit and no SQL", hc.TokenLimit+6, res, res.AfterAuth)
		}
		if len(res.Errors) == 1 && res.Errors[0].Code() == "" {
			t.Errorf("token limit error without a code: %s", res)
		}
	})

	t.Run("PageSize", func(t *testing.T) {
		// Nested lists are bounded by the parents' page size; the root
		// sizes are capped.
		testkit.Refused(t, "first 101", e.Do(t, k, `{ shipments(first: 101) { nodes { id } } }`, nil), "BAD_USER_INPUT")
		testkit.Refused(t, "last 101", e.Do(t, k, `{ containers(last: 101) { nodes { id } } }`, nil), "BAD_USER_INPUT")
		testkit.Refused(t, "page size 101", e.Do(t, k, `{ documents(page: {number: 1, size: 101}) { nodes { id } } }`, nil), "BAD_USER_INPUT")
	})
}

// testNoSuggestions: no error names a field, argument, type or value the
// client did not send ("Did you mean …?"): that would let anyone map the
// schema with introspection switched off.
func testNoSuggestions(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	for _, q := range []string{
		`{ shipmnts { totalCount } }`,
		`{ shipments { nodez { id } } }`,
		`{ shipments(firs: 5) { totalCount } }`,
		`{ shipments(orderBy: {field: POD_ETA}) { totalCount } }`,
		`{ shipments(orderBy: {feild: POD_ETA_AT}) { totalCount } }`,
		`{ shipments(filter: {serch: "x"}) { totalCount } }`,
		`query($f: ShipmentFiltr) { shipments(filter: $f) { totalCount } }`,
		`{ shipments { nodes { destination { name } } } }`,
		`{ shipments { nodes { containers } } }`,
		`{ viewer { role { name } } }`,
		`{ containers(filter: {statuses: [AVAILABL]}) { totalCount } }`,
		`mutation { updateShipmentCustomFeld(shipmentId: "x", apiSlug: "y") { id } }`,
		`{ shipment(idd: "x") { id } }`,
	} {
		res := e.Do(t, k, q, nil)
		if len(res.Errors) == 0 {
			t.Errorf("%s: no error", q)
		}
		for _, er := range res.Errors {
			if strings.Contains(strings.ToLower(er.Message), "did you mean") {
				t.Errorf("%s: error suggests: %q", q, er.Message)
			}
			if er.Code() == "" {
				t.Errorf("%s: error without extensions.code: %+v", q, er)
			}
		}
		if res.AfterAuth != 0 {
			t.Errorf("%s: %d statements after the key lookup, want none", q, res.AfterAuth)
		}
	}
	// Variables of the wrong enum value.
	res := e.Do(t, k, `query($s: [ContainerStatus!]) { containers(filter: {statuses: $s}) { totalCount } }`, testkit.Vars{"s": []string{"AVAILABL"}})
	if len(res.Errors) == 0 || strings.Contains(strings.ToLower(res.Errors[0].Message), "did you mean") {
		t.Errorf("enum variable: %s", res)
	}
}
