package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"shipgraph/testkit"

	"shipgraph/graph/gqlhttp"
	"shipgraph/testkit/redistest"
)

// costQuery weighs 1 + 2×5 = 11 (a page of five, two fields a node).
const (
	costQuery = `{ shipments(first: 5) { nodes { id } } }`
	costOf    = 11
	// 66 a minute: 1.1 units a second come back, far less than a query
	// between two requests of the test, however slow.
	budget = 66
)

// charged reads a reply's cost headers; it fails the test when they are
// missing.
func charged(t *testing.T, what string, r *reply) (cost, remaining, limit int) {
	t.Helper()
	var err error
	for _, h := range []struct {
		name string
		into *int
	}{{gqlhttp.HeaderCost, &cost}, {gqlhttp.HeaderCostRemaining, &remaining}, {gqlhttp.HeaderCostLimit, &limit}} {
		if *h.into, err = strconv.Atoi(r.header.Get(h.name)); err != nil {
			t.Fatalf("%s: header %s = %q (%d %s)", what, h.name, r.header.Get(h.name), r.status, r.body)
		}
	}
	return cost, remaining, limit
}

// budgetRefused checks a 429 of the budget: Retry-After, the code, the
// headers, no data.
func budgetRefused(t *testing.T, what string, r *reply) {
	t.Helper()
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("%s: %d %s, want 429", what, r.status, r.body)
	}
	if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Errorf("%s: Retry-After %q", what, r.header.Get("Retry-After"))
	}
	var body struct {
		Data   json.RawMessage
		Errors []struct {
			Extensions map[string]any
		}
	}
	if err := json.Unmarshal(r.body, &body); err != nil || len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != gqlhttp.CodeCostBudget || body.Data != nil {
		t.Errorf("%s: body %s, want one %s error and no data", what, r.body, gqlhttp.CodeCostBudget)
	}
	if cost, _, _ := charged(t, what, r); cost != costOf {
		t.Errorf("%s: cost %d, want %d", what, cost, costOf)
	}
}

// One key's budget is spent over both instances: each answer says what
// the operation cost and what the shared budget holds after it, both
// instances refuse with 429 once it holds less than the cost, another key
// has its own, and an operation costing more than the whole budget is
// refused without a wait. Without the shared count (TestCostBudgetPerProcess)
// each instance would hold a budget of its own.
func TestCostBudgetShared(t *testing.T) {
	rs := redistest.Start(t)
	cfg := testkit.Defaults()
	cfg.RateLimit = 0
	cfg.CostBudget = budget
	a, b, keys, _ := twoInstances(t, rs.URL, cfg)
	key := keys["acme/member"]
	m := budgetMetrics(t)
	// 66 = 6 × 11: six operations alternating between the instances,
	// the remaining budget going down by 11 each time (plus what came
	// back meanwhile: about a unit a second).
	prev := budget
	for i := range 6 {
		in := a
		if i%2 == 1 {
			in = b
		}
		r := in.gql(t, key, costQuery)
		if r.status != http.StatusOK {
			t.Fatalf("operation %d: %d %s", i, r.status, r.body)
		}
		cost, remaining, limit := charged(t, "operation "+strconv.Itoa(i), r)
		if cost != costOf || limit != budget || remaining < prev-costOf || remaining > prev-costOf+2 {
			t.Fatalf("operation %d: cost %d remaining %d limit %d, want %d, %d (+2), %d", i, cost, remaining, limit, costOf, prev-costOf, budget)
		}
		prev = remaining
	}
	for name, in := range map[string]*instance{"a": a, "b": b} {
		budgetRefused(t, "instance "+name+" past the budget", in.gql(t, key, costQuery))
	}
	// GET is charged the same.
	budgetRefused(t, "GET past the budget", a.do(t, http.MethodGet, "/graphql?"+url.Values{"query": {costQuery}}.Encode(), key, ""))
	m.check(t, "past the budget", 6*costOf, 3, 0)
	// Another key has a budget of its own.
	r := b.gql(t, keys["acme/viewer"], costQuery)
	if _, remaining, _ := charged(t, "another key", r); r.status != http.StatusOK || remaining < budget-costOf-1 {
		t.Errorf("another key: %d, remaining %d %s", r.status, remaining, r.body)
	}
	// 1 + 2 × 100 = 201 > 66: no wait would be enough.
	r = a.gql(t, keys["globex/admin"], `{ shipments(first: 100) { nodes { id } } }`)
	if r.status != http.StatusOK || r.header.Get("Retry-After") != "" || !strings.Contains(string(r.body), gqlhttp.CodeCostBudget) {
		t.Errorf("an operation over the whole budget: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	if cost, _, _ := charged(t, "over the whole budget", r); cost != 201 {
		t.Errorf("over the whole budget: cost %d, want 201", cost)
	}
	m.check(t, "over the whole budget", 7*costOf, 3, 1)
	// It took nothing: globex's budget is whole.
	if _, remaining, _ := charged(t, "after the refusal", a.gql(t, keys["globex/admin"], costQuery)); remaining < budget-costOf-1 {
		t.Errorf("a refused operation was charged: remaining %d", remaining)
	}
}

// Without Redis each process counts its own budget, with the same
// answers.
func TestCostBudgetPerProcess(t *testing.T) {
	url, keys := seeded(t)
	cfg := testkit.Defaults()
	cfg.RateLimit = 0
	cfg.CostBudget = budget
	in := start(t, url, &cfg)
	key := keys["acme/member"]
	m := budgetMetrics(t)
	prev := budget
	for i := range 6 {
		r := in.gql(t, key, costQuery)
		cost, remaining, _ := charged(t, "operation "+strconv.Itoa(i), r)
		if r.status != http.StatusOK || cost != costOf || remaining < prev-costOf || remaining > prev-costOf+2 {
			t.Fatalf("operation %d: %d cost %d remaining %d (before %d) %s", i, r.status, cost, remaining, prev, r.body)
		}
		prev = remaining
	}
	budgetRefused(t, "past the budget", in.gql(t, key, costQuery))
	m.check(t, "past the budget", 6*costOf, 1, 0)
	// An operation on a WebSocket is charged the same budget: its
	// refusal is its error, with the numbers the headers would carry.
	ws := in.ws(t, key)
	ws.Subscribe("q", costQuery, nil)
	if m := ws.Next(10 * time.Second); m.Type != "error" && m.Type != "next" || !strings.Contains(string(m.Payload), gqlhttp.CodeCostBudget) || !strings.Contains(string(m.Payload), `"retryAfter"`) {
		t.Errorf("on a WebSocket past the budget: %s %s", m.Type, m.Payload)
	}
	m.check(t, "on a WebSocket", 6*costOf, 2, 0)
	// A second process has a budget of its own.
	other := start(t, url, &cfg)
	if r := other.gql(t, key, costQuery); r.status != http.StatusOK {
		t.Errorf("another process: %d %s", r.status, r.body)
	}
}

// Off (the default), answers carry no cost headers.
func TestCostBudgetOff(t *testing.T) {
	url, keys := seeded(t)
	in := start(t, url, nil)
	r := in.gql(t, keys["acme/member"], costQuery)
	if r.status != http.StatusOK || r.header.Get(gqlhttp.HeaderCost) != "" {
		t.Errorf("budget off: %d %q", r.status, r.header.Get(gqlhttp.HeaderCost))
	}
}

// budgetSnapshot holds the budget's metrics at a point of a test, to check
// what came after (tests of this package do not run in parallel).
type budgetSnapshot struct{ charged, exhausted, tooBig float64 }

func budgetMetrics(t *testing.T) budgetSnapshot {
	return budgetSnapshot{
		testkit.Metric(t, "shipgraph_cost_budget_charged_total"),
		testkit.Metric(t, "shipgraph_cost_budget_refusals_total", "reason", "exhausted"),
		testkit.Metric(t, "shipgraph_cost_budget_refusals_total", "reason", "too_big"),
	}
}

// check: since the snapshot, charged units were charged and the budget
// refused exhausted operations a wait would cure and tooBig that none
// would.
func (s budgetSnapshot) check(t *testing.T, what string, charged, exhausted, tooBig float64) {
	t.Helper()
	now := budgetMetrics(t)
	if d := now.charged - s.charged; d != charged {
		t.Errorf("%s: shipgraph_cost_budget_charged_total grew by %v, want %v", what, d, charged)
	}
	if d := now.exhausted - s.exhausted; d != exhausted {
		t.Errorf("%s: refusals{reason=exhausted} grew by %v, want %v", what, d, exhausted)
	}
	if d := now.tooBig - s.tooBig; d != tooBig {
		t.Errorf("%s: refusals{reason=too_big} grew by %v, want %v", what, d, tooBig)
	}
}
