package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"shipgraph/graph"
	"shipgraph/graph/executor"
	"shipgraph/graph/gqlhttp"
	"shipgraph/testkit"
)

// fastCase is one request of the fast-path comparison and how it must be
// answered: written on the fast path, or handed over to gqlgen.
type fastCase struct {
	name    string
	query   string
	vars    testkit.Vars
	handOff bool
}

// TestFastPath sends every request twice, to the server's chain and to one
// with the fast path off (gqlgen's executor alone), and wants the same
// bytes back; and it wants the fast path to have written exactly the
// requests it should (shipgraph_graphql_fast_path_total). Not parallel: it
// reads process-wide counters. Its database has values that need escaping
// and times with fractions of a second and offsets.
func TestFastPath(t *testing.T) {
	e := testkit.New(t, testkit.Options{Shipments: 40})
	k := e.Key(t, acmeAdmin)
	acme := e.Account(t, "acme")
	for _, stmt := range []string{
		`UPDATE shipments SET bill_of_lading_number = E'q"uo\\te\n\ttab\r\x01\x1f ü 🚢 <&> \u2028',
			ref_numbers = ARRAY[E'a"b', E'c\\d', ''], created_at = '2026-03-01 12:34:56.123456+00'
			WHERE account_id = $1 AND id = (SELECT id FROM shipments WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1)`,
		`UPDATE shipments SET created_at = '2026-03-01 09:00:00.5-07:00'
			WHERE account_id = $1 AND id = (SELECT id FROM shipments WHERE account_id = $1 ORDER BY created_at DESC, id DESC OFFSET 1 LIMIT 1)`,
		`UPDATE custom_fields SET value = to_jsonb(E'val"ue\\ \n ü'::text)
			WHERE account_id = $1 AND id = (SELECT c.id FROM custom_fields c JOIN custom_field_definitions d ON d.account_id = c.account_id AND d.id = c.definition_id
				WHERE d.account_id = $1 AND d.data_type = 'text' LIMIT 1)`,
	} {
		if _, err := e.Store.SQL().Exec(stmt, acme); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	hc := gqlhttp.DefaultHandlerConfig
	hc.NoFastPath = true
	hc.ComplexityLimit = 1 << 30
	gq := e.WithGraphQL(t, hc)
	hc.NoFastPath = false
	fast := e.WithGraphQL(t, hc)

	cases := []fastCase{
		{name: "compare.sh dashboard", query: benchDashboard},
		{name: "playground dashboard", query: graph.DashboardQuery, vars: testkit.Vars{"first": 100}},
		{name: "wide query", query: wideQuery, vars: testkit.Vars{"first": 40}},
		{name: "fragments, aliases, directives", query: `query($yes: Boolean!, $no: Boolean!, $n: Int) {
			__typename
			a: shipments(first: $n) { ...page }
			b: shipments(last: 2, orderBy: {field: BILL_OF_LADING_NUMBER, direction: DESC}) {
				edges { cursor node { id refNumbers tags } } pageInfo { hasPreviousPage hasNextPage startCursor endCursor } }
			viewer { __typename role user { email } account { id companyName } }
		}
		fragment page on ShipmentConnection {
			totalCount
			nodes {
				__typename id
				bl: billOfLadingNumber @include(if: $yes)
				skipped: shippingLineScac @skip(if: $yes)
				kept: shippingLineScac @skip(if: $no)
				... on Node { id }
				... @include(if: $no) { createdAt }
				...ship
				containers { ... on Container { number holdsAtPodTerminal { name status description } feesAtPodTerminal { type amount currencyCode } } }
			}
		}
		fragment ship on Shipment { id createdAt customFields { __typename apiSlug value displayValue } }`,
			vars: testkit.Vars{"yes": true, "no": false, "n": 7}},
		{name: "numbered page", query: `{ containers(page: {number: 3, size: 5}) { totalCount nodes { id number weightInLbs pickupLfd availableForPickup } } }`},
		{name: "documents", query: `{ documents(first: 10) { nodes { id name documentType createdAt shipments { id } cargos { number } user { email } } } }`},
		{name: "a key selected on a union and on its member", query: `{ customFields(first: 20) { nodes { entity {
			__typename ... on Shipment { __typename id } ... on Container { __typename number } } } } }`},
		{name: "definitions", query: `{ customFieldDefinitions(first: 20) { nodes { id apiSlug dataType options { value position } } } }`},
		{name: "node not found", query: `{ node(id: "00000000-0000-0000-0000-000000000000") { id } shipment(id: "nope") { id } }`},
		{name: "escapes in arguments and aliases", query: `{ ab_c: shipments(first: 1, filter: {search: "no \"such\" \\ bill\n"}) { nodes { id } totalCount } }`},

		// Everything else is gqlgen's, and answered the same.
		{name: "argument error", query: `{ shipments(first: -1) { nodes { id } } }`, handOff: true},
		{name: "introspection", query: `{ __schema { queryType { name } } }`, handOff: true},
		{name: "typename and introspection", query: `{ __typename __type(name: "Port") { name } }`, handOff: true},
		{name: "resolver error", query: `{ shipments(after: "not a cursor") { nodes { id } } }`, handOff: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { compareFastPath(t, fast, gq, k, c) })
	}

	// Every attribute of every Node type, through node(id:) and an
	// inline fragment, on the records of attributes_test.go's sample.
	node := introspect(t, e, k, "Node")
	for _, pt := range node.PossibleTypes {
		sel := selection(t, e, k, introspect(t, e, k, pt.Name))
		ids := sampleIDs(t, e, nodeTables[pt.Name], acme, 12)
		var q strings.Builder
		vars := testkit.Vars{}
		q.WriteString("query(")
		for i := range ids {
			fmt.Fprintf(&q, "$id%d: ID! ", i)
		}
		q.WriteString(") {")
		for i, id := range ids {
			fmt.Fprintf(&q, " n%d: node(id: $id%d) { __typename ... on %s { %s } }", i, i, pt.Name, sel)
			vars[fmt.Sprintf("id%d", i)] = id
		}
		q.WriteString(" }")
		t.Run("every attribute of "+pt.Name, func(t *testing.T) {
			compareFastPath(t, fast, gq, k, fastCase{query: q.String(), vars: vars})
		})
	}
}

func compareFastPath(t *testing.T, fast, gq *testkit.Env, k string, c fastCase) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": c.query, "variables": c.vars})
	if err != nil {
		t.Fatal(err)
	}
	send := func(env *testkit.Env) *testkit.HTTPResponse {
		res := env.HTTP(t, env.NewRequest(t, http.MethodPost, k, "", body))
		if res.Status != http.StatusOK {
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
		return res
	}
	written, handed := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("written")), testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("handed_over"))
	got := send(fast)
	dw := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("written")) - written
	dh := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("handed_over")) - handed
	want := send(gq)
	if !bytes.Equal(got.Body, want.Body) {
		t.Errorf("fast path and gqlgen differ\nfast:   %s\ngqlgen: %s", got.Body, want.Body)
	}
	hasErrors := bytes.Contains(want.Body, []byte(`"errors"`))
	switch {
	case c.handOff && (dw != 0 || dh != 1):
		t.Errorf("written %v, handed over %v; want it handed over to gqlgen", dw, dh)
	case c.handOff && !hasErrors && !strings.Contains(c.query, "__"):
		t.Errorf("handed over without errors: %s", want.Body)
	case !c.handOff && (dw != 1 || dh != 0):
		t.Errorf("written %v, handed over %v; want it written on the fast path (%s)", dw, dh, want.Body)
	case !c.handOff && hasErrors:
		t.Errorf("a request with errors was written on the fast path: %s", want.Body)
	}
	if len(want.Body) < 40 {
		t.Logf("%s", want.Body)
	}
}
