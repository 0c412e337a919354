package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"shipgraph/graph/executor"
	"shipgraph/graph/gqlhttp"
	"shipgraph/httpapi"
	"shipgraph/load"
	"shipgraph/mcp"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

func TestMain(m *testing.M) { pg.Main(m) }

// server is the HTTP chain with /mcp mounted as the composition root
// mounts it, on 127.0.0.1, over env's database.
func server(t *testing.T, env *testkit.Env, edit func(*httpapi.Config)) string {
	t.Helper()
	srv, err := mcp.New(mcp.Config{Schema: executor.NewExecutableSchema(executor.Config{}).Schema(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	c := testkit.Config(gqlhttp.DefaultHandlerConfig, load.DefaultLoaderConfig)
	c.MCP = srv.Handler
	if edit != nil {
		edit(&c.Config)
	}
	h := testkit.Start(t, env.Store, c)
	ts := httptest.NewUnstartedServer(h)
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL
}

// keyed adds the API key to every request, as "Token" or "Bearer".
type keyed struct {
	scheme, key string
}

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", k.scheme+" "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a go-sdk client session to base's /mcp with key.
func connect(t *testing.T, base, scheme, key string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "shipgraph-test", Version: "1"}, nil)
	s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + mcp.Path, HTTPClient: &http.Client{Transport: keyed{scheme, key}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// call calls a tool and returns its result with the structured content
// decoded.
func call(t *testing.T, s *sdk.ClientSession, name string, args map[string]any) (*sdk.CallToolResult, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	var out map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out)
	}
	return res, out
}

func text(r *sdk.CallToolResult) string {
	if len(r.Content) == 0 {
		return ""
	}
	if tc, ok := r.Content[0].(*sdk.TextContent); ok {
		return tc.Text
	}
	return ""
}

// The public service's ten tools and Shipgraph's own three.
var wantTools = []string{
	"search_container", "track_container", "get_container", "get_shipment_details", "get_container_transport_events",
	"get_supported_shipping_lines", "get_container_route", "list_shipments", "list_containers", "list_tracking_requests",
	"container_stats", "shipment_stats", "pickup_worklist",
}

// v2 GETs a /v2 document with key.
func v2(t *testing.T, base, key, path string) map[string]any {
	t.Helper()
	resp := testkit.Send(t, http.MethodGet, base+path, key, nil)
	if resp.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.Status, resp.Body)
	}
	var doc map[string]any
	if err := json.Unmarshal(resp.Body, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func attrs(doc map[string]any) map[string]any {
	d, _ := doc["data"].(map[string]any)
	a, _ := d["attributes"].(map[string]any)
	return a
}

// TestMCPTools lists and calls every tool with the go-sdk client against a
// seeded server and checks each answer against /v2 (or the database) for
// the same record, then the errors: bad arguments, unknown and another
// account's ids, a viewer's track_container.
func TestMCPTools(t *testing.T) {
	env := testkit.New(t, testkit.Options{Shipments: 4})
	base := server(t, env, nil)
	admin, viewer := env.Key(t, "acme/admin"), env.Key(t, "acme/viewer")
	s := connect(t, base, "Token", admin)

	ctx := context.Background()
	list, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.OutputSchema == nil || tl.Annotations == nil {
			t.Errorf("%s: no output schema or annotations", tl.Name)
		}
		if ro := tl.Annotations.ReadOnlyHint; ro != (tl.Name != "track_container") {
			t.Errorf("%s: readOnlyHint %v", tl.Name, ro)
		}
	}
	if !slices.Equal(names, slices.Sorted(slices.Values(wantTools))) {
		t.Fatalf("tools %v, want %v", names, wantTools)
	}
	gc := list.Tools[slices.Index(names, "get_container")]
	schema, _ := json.Marshal(gc.InputSchema)
	for _, want := range []string{`"required":["id"]`, `"include"`, `"transport_events"`, `"pattern"`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("get_container input schema %s lacks %s", schema, want)
		}
	}

	var containerID, shipmentID, number string
	env.SQL(t, &containerID, `SELECT c.id::text FROM containers c JOIN accounts a ON a.id = c.account_id WHERE a.slug = 'acme' ORDER BY c.number LIMIT 1`)
	env.SQL(t, &shipmentID, `SELECT shipment_id::text FROM containers WHERE id = $1`, containerID)
	env.SQL(t, &number, `SELECT number FROM containers WHERE id = $1`, containerID)

	t.Run("get_container", func(t *testing.T) {
		res, out := call(t, s, "get_container", map[string]any{"id": containerID, "include": []string{"shipment", "pod_terminal", "transport_events"}})
		if res.IsError {
			t.Fatal(text(res))
		}
		c := out["container"].(map[string]any)
		want := attrs(v2(t, base, admin, "/v2/containers/"+containerID))
		for _, k := range []string{"number", "current_status", "pickup_lfd", "available_for_pickup", "pod_arrived_at", "seal_number"} {
			if fmt.Sprint(c[k]) != fmt.Sprint(want[k]) {
				t.Errorf("%s: mcp %v, /v2 %v", k, c[k], want[k])
			}
		}
		if c["shipment"].(map[string]any)["id"] != shipmentID {
			t.Errorf("shipment %v, want %s", c["shipment"], shipmentID)
		}
		events := v2(t, base, admin, "/v2/containers/"+containerID+"/transport_events")["data"].([]any)
		if n := len(c["transport_events"].([]any)); n != len(events) {
			t.Errorf("%d transport events, /v2 has %d", n, len(events))
		}
		if !strings.Contains(text(res), number) {
			t.Errorf("summary %q does not name %s", text(res), number)
		}
		_, out = call(t, s, "get_container", map[string]any{"id": containerID})
		c = out["container"].(map[string]any)
		if _, ok := c["transport_events"]; ok || c["shipment"] == nil {
			t.Errorf("default include: %v", c)
		}
	})

	t.Run("get_shipment_details", func(t *testing.T) {
		res, out := call(t, s, "get_shipment_details", map[string]any{"id": shipmentID})
		if res.IsError {
			t.Fatal(text(res))
		}
		sh := out["shipment"].(map[string]any)
		want := attrs(v2(t, base, admin, "/v2/shipments/"+shipmentID))
		for _, k := range []string{"bill_of_lading_number", "shipping_line_scac", "port_of_discharge_name", "pod_eta_at", "pod_vessel_name"} {
			if fmt.Sprint(sh[k]) != fmt.Sprint(want[k]) {
				t.Errorf("%s: mcp %v, /v2 %v", k, sh[k], want[k])
			}
		}
		if len(sh["containers"].([]any)) == 0 {
			t.Error("no containers")
		}
	})

	t.Run("get_container_transport_events and route", func(t *testing.T) {
		res, out := call(t, s, "get_container_transport_events", map[string]any{"id": containerID})
		if res.IsError {
			t.Fatal(text(res))
		}
		evs := out["container"].(map[string]any)["transport_events"].([]any)
		want := v2(t, base, admin, "/v2/containers/"+containerID+"/transport_events")["data"].([]any)
		if len(evs) != len(want) {
			t.Fatalf("%d events, /v2 %d", len(evs), len(want))
		}
		for i := range evs {
			if got, w := evs[i].(map[string]any)["event"], want[i].(map[string]any)["attributes"].(map[string]any)["event"]; got != w {
				t.Errorf("event %d: %v, /v2 %v", i, got, w)
			}
		}
		res, out = call(t, s, "get_container_route", map[string]any{"id": containerID})
		if res.IsError {
			t.Fatal(text(res))
		}
		route := v2(t, base, admin, "/v2/containers/"+containerID+"/route?include=route_location")
		var wantPorts, wantTimes []string
		for _, l := range route["included"].([]any) {
			m := l.(map[string]any)
			if m["type"] == "route_location" {
				p := m["relationships"].(map[string]any)["location"].(map[string]any)["data"].(map[string]any)
				wantPorts = append(wantPorts, p["id"].(string))
				a := m["attributes"].(map[string]any)
				wantTimes = append(wantTimes, fmt.Sprint(a["inbound_ata_at"], a["outbound_atd_at"]))
			}
		}
		var gotPorts, gotTimes []string
		for _, l := range out["route_locations"].([]any) {
			m := l.(map[string]any)
			gotPorts = append(gotPorts, m["port"].(map[string]any)["id"].(string))
			gotTimes = append(gotTimes, fmt.Sprint(m["inbound"].(map[string]any)["ata"], m["outbound"].(map[string]any)["atd"]))
		}
		if !slices.Equal(gotTimes, wantTimes) {
			t.Errorf("route times %v, /v2 %v", gotTimes, wantTimes)
		}
		if !slices.Equal(gotPorts, wantPorts) || len(gotPorts) == 0 {
			t.Errorf("route ports %v, /v2 %v", gotPorts, wantPorts)
		}
	})

	t.Run("search_container", func(t *testing.T) {
		res, out := call(t, s, "search_container", map[string]any{"query": number})
		if res.IsError {
			t.Fatal(text(res))
		}
		found := false
		for _, c := range out["containers"].([]any) {
			found = found || c.(map[string]any)["id"] == containerID
		}
		if !found {
			t.Errorf("search %s: %v", number, out)
		}
	})

	t.Run("lists", func(t *testing.T) {
		for _, tc := range []struct{ tool, path string }{
			{"list_shipments", "/v2/shipments?page[size]=5"},
			{"list_containers", "/v2/containers?page[size]=5"},
			{"list_tracking_requests", "/v2/tracking_requests?page[size]=5"},
		} {
			res, out := call(t, s, tc.tool, map[string]any{"page_size": 5})
			if res.IsError {
				t.Fatalf("%s: %s", tc.tool, text(res))
			}
			want := v2(t, base, admin, tc.path)
			items := out["items"].([]any)
			if len(items) != len(want["data"].([]any)) {
				t.Errorf("%s: %d items, /v2 %d", tc.tool, len(items), len(want["data"].([]any)))
			}
			total := want["meta"].(map[string]any)["total"]
			if fmt.Sprint(out["meta"].(map[string]any)["total"]) != fmt.Sprint(total) {
				t.Errorf("%s: total %v, /v2 %v", tc.tool, out["meta"], total)
			}
		}
		res, out := call(t, s, "list_tracking_requests", map[string]any{"filters": map[string]any{"filter[status]": "created", "color": "red"}})
		if res.IsError {
			t.Fatal(text(res))
		}
		if u := out["unsupportedFilters"].([]any); len(u) != 1 || u[0] != "color" {
			t.Errorf("unsupportedFilters %v", u)
		}
		for _, tr := range out["items"].([]any) {
			if st := tr.(map[string]any)["status"]; st != "created" {
				t.Errorf("status filter: %v", st)
			}
		}
	})

	t.Run("reference, counts and worklist", func(t *testing.T) {
		res, out := call(t, s, "get_supported_shipping_lines", map[string]any{"search": "maersk"})
		if res.IsError || out["total_lines"].(float64) < 1 {
			t.Fatalf("%s %v", text(res), out)
		}
		res, out = call(t, s, "container_stats", map[string]any{"group_by": []string{"status"}})
		if res.IsError {
			t.Fatal(text(res))
		}
		var all int
		env.SQL(t, &all, `SELECT count(*) FROM containers c JOIN accounts a ON a.id = c.account_id WHERE a.slug = 'acme'`)
		sum := 0.0
		for _, g := range out["container_stats"].([]any) {
			sum += g.(map[string]any)["count"].(float64)
		}
		if int(sum) != all {
			t.Errorf("container_stats sums to %v, the account has %d", sum, all)
		}
		if res, _ = call(t, s, "shipment_stats", map[string]any{"group_by": []string{"shipping_line"}}); res.IsError {
			t.Fatal(text(res))
		}
		res, out = call(t, s, "pickup_worklist", nil)
		if res.IsError {
			t.Fatal(text(res))
		}
		last := ""
		for _, c := range out["items"].([]any) {
			lfd, _ := c.(map[string]any)["pickup_lfd"].(string)
			if lfd != "" && last != "" && lfd < last {
				t.Errorf("worklist not by last free day: %s after %s", lfd, last)
			}
			if lfd != "" {
				last = lfd
			}
		}
	})

	t.Run("errors", func(t *testing.T) {
		var other string
		env.SQL(t, &other, `SELECT c.id::text FROM containers c JOIN accounts a ON a.id = c.account_id WHERE a.slug = 'globex' LIMIT 1`)
		for _, tc := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"get_container", map[string]any{"id": "not-a-uuid"}, "BAD_USER_INPUT"},
			{"get_container", map[string]any{}, "BAD_USER_INPUT"},
			{"get_container", map[string]any{"id": containerID, "include": []string{"documents"}}, "BAD_USER_INPUT"},
			{"get_container", map[string]any{"id": containerID, "unknown": 1}, "BAD_USER_INPUT"},
			{"get_container", map[string]any{"id": "00000000-0000-4000-8000-000000000000"}, "NOT_FOUND"},
			{"get_container", map[string]any{"id": other}, "NOT_FOUND"},
			{"get_shipment_details", map[string]any{"id": other}, "NOT_FOUND"},
			{"get_container_route", map[string]any{"id": other}, "NOT_FOUND"},
			{"list_shipments", map[string]any{"page_size": 500}, "BAD_USER_INPUT"},
			{"track_container", map[string]any{"number": "MSKU1234560", "numberType": "container", "scac": "MAEU"}, "BAD_USER_INPUT: Request number 'MSKU1234560' is not a valid container number"},
			{"track_container", map[string]any{"numberType": "container"}, "BAD_USER_INPUT: number is required"},
		} {
			res, _ := call(t, s, tc.tool, tc.args)
			if !res.IsError || !strings.HasPrefix(text(res), tc.want) {
				t.Errorf("%s %v: isError %v %q, want %s", tc.tool, tc.args, res.IsError, text(res), tc.want)
			}
			if res.StructuredContent != nil {
				t.Errorf("%s: an error with structured content", tc.tool)
			}
		}
	})

	t.Run("viewer", func(t *testing.T) {
		vs := connect(t, base, "Bearer", viewer)
		list, err := vs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range list.Tools {
			if tl.Name == "track_container" {
				t.Error("a viewer's tools list track_container")
			}
		}
		if len(list.Tools) != len(wantTools)-1 {
			t.Errorf("viewer has %d tools", len(list.Tools))
		}
		res, _ := call(t, vs, "track_container", map[string]any{"number": "MSKU1234565"})
		if !res.IsError || !strings.HasPrefix(text(res), "FORBIDDEN") {
			t.Errorf("viewer's track_container: %v %q", res.IsError, text(res))
		}
		if res, _ := call(t, vs, "get_container", map[string]any{"id": containerID}); res.IsError {
			t.Errorf("viewer's get_container: %s", text(res))
		}
	})

	t.Run("resources", func(t *testing.T) {
		r, err := s.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "shipgraph://container/" + containerID})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Contents[0].Text, number) {
			t.Errorf("container resource: %s", r.Contents[0].Text)
		}
		if _, err := s.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "shipgraph://container/00000000-0000-4000-8000-000000000000"}); err == nil {
			t.Error("an unknown container's resource was read")
		}
		g, err := s.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "shipgraph://docs/milestone-glossary"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(g.Contents[0].Text, "container.transport.vessel_departed") {
			t.Error("glossary lacks vessel_departed")
		}
	})
}

// TestMCPTrackContainer creates a tracking request with an inferred type
// and line, and sees it in list_tracking_requests.
func TestMCPTrackContainer(t *testing.T) {
	env := testkit.New(t, testkit.Options{Shipments: 2})
	s := connect(t, server(t, env, nil), "Token", env.Key(t, "acme/member"))
	res, out := call(t, s, "track_container", map[string]any{"number": "MSKU1234565", "scac": "MAEU"})
	if res.IsError {
		t.Fatal(text(res))
	}
	tr := out["tracking_request"].(map[string]any)
	if tr["request_type"] != "container" || tr["request_number"] != "MSKU1234565" || tr["scac"] != "MAEU" {
		t.Errorf("tracking request %v", tr)
	}
	_, out = call(t, s, "list_tracking_requests", map[string]any{"request_type": "container", "filters": map[string]any{"request_number": "MSKU1234565"}})
	if items := out["items"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != tr["id"] {
		t.Errorf("list_tracking_requests: %v", out)
	}
}

// TestMCPAcrossInstances runs a session over two instances on one
// database: initialize on one, every other request on the other.
func TestMCPAcrossInstances(t *testing.T) {
	env := testkit.New(t, testkit.Options{Shipments: 2})
	a, b := server(t, env, nil), server(t, env, nil)
	key := env.Key(t, "acme/admin")
	flip := &alternate{bases: []string{a, b}, key: key}
	c := sdk.NewClient(&sdk.Implementation{Name: "lb", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: a + "/mcp", HTTPClient: &http.Client{Transport: flip}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 3 {
		if res, _ := call(t, s, "list_shipments", nil); res.IsError {
			t.Fatal(text(res))
		}
	}
	if flip.n[0] == 0 || flip.n[1] == 0 {
		t.Fatalf("requests per instance %v", flip.n)
	}
}

// alternate is a round-robin load balancer in the client.
type alternate struct {
	bases []string
	key   string
	n     [2]int
	i     int
}

func (a *alternate) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	i := a.i % 2
	a.i++
	a.n[i]++
	u := *r.URL
	base := strings.TrimPrefix(a.bases[i], "http://")
	u.Host = base
	r.URL, r.Host = &u, base
	r.Header.Set("Authorization", "Token "+a.key)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPCostBudget: a key whose cost budget is spent gets a tool error
// with the API's code, not a protocol failure.
func TestMCPCostBudget(t *testing.T) {
	env := testkit.New(t, testkit.Options{Shipments: 2})
	base := server(t, env, func(c *httpapi.Config) { c.CostBudget = 60 })
	s := connect(t, base, "Token", env.Key(t, "acme/admin"))
	for i := range 50 {
		res, _ := call(t, s, "list_containers", map[string]any{"page_size": 25})
		if res.IsError {
			if !strings.HasPrefix(text(res), "COST_BUDGET_EXCEEDED") {
				t.Fatalf("call %d: %q", i, text(res))
			}
			return
		}
	}
	t.Fatal("50 list_containers never exhausted a budget of 60 a minute")
}

// TestMCPUnauthenticated: /mcp needs a key.
func TestMCPUnauthenticated(t *testing.T) {
	env := testkit.New(t, testkit.Options{Shipments: 1})
	base := server(t, env, nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, auth := range []string{"", "Token nope"} {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("auth %q: %d", auth, resp.StatusCode)
		}
	}
}

// TestMCPStatements: a get_container costs the statements the same
// operation costs on /graphql (shipgraph_db_queries_total): the tool adds
// none of its own.
func TestMCPStatements(t *testing.T) {
	env := testkit.New(t, testkit.Options{Shipments: 3})
	base := server(t, env, nil)
	key := env.Key(t, "acme/admin")
	s := connect(t, base, "Token", key)
	var id string
	env.SQL(t, &id, `SELECT c.id::text FROM containers c JOIN accounts a ON a.id = c.account_id WHERE a.slug = 'acme' ORDER BY c.number LIMIT 1`)
	query, name, err := mcp.OperationText("get_container")
	if err != nil {
		t.Fatal(err)
	}
	graphql := func() {
		body, _ := json.Marshal(map[string]any{"query": query, "operationName": name,
			"variables": map[string]any{"id": id, "shipment": true, "pod_terminal": true, "transport_events": true}})
		resp := testkit.Send(t, http.MethodPost, base+"/graphql", key, body)
		if resp.Status != 200 || strings.Contains(string(resp.Body), `"errors"`) {
			t.Fatalf("/graphql: %d %s", resp.Status, resp.Body)
		}
	}
	tool := func() {
		if res, _ := call(t, s, "get_container", map[string]any{"id": id, "include": []string{"shipment", "pod_terminal", "transport_events"}}); res.IsError {
			t.Fatal(text(res))
		}
	}
	graphql()
	tool() // warm: the key is cached, the plans are built
	before := testkit.QueriesTotal(t)
	graphql()
	viaGraphQL := testkit.QueriesTotal(t) - before
	before = testkit.QueriesTotal(t)
	tool()
	viaMCP := testkit.QueriesTotal(t) - before
	if viaGraphQL == 0 || viaMCP != viaGraphQL {
		t.Errorf("get_container sent %v statements, the same GraphQL operation %v", viaMCP, viaGraphQL)
	}
	t.Logf("get_container: %v statements over MCP, %v over /graphql", viaMCP, viaGraphQL)
}

// TestMCPStdioProxy: the stdio transport (shipgraph mcp's Proxy) carries
// a go-sdk client's session to /mcp: initialize, tools/list, a call, and
// a request the server cannot be reached for answered with an error.
func TestMCPStdioProxy(t *testing.T) {
	env := testkit.New(t, testkit.Options{Shipments: 1})
	base := server(t, env, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- mcp.Proxy(context.Background(), base+"/mcp", env.Key(t, "acme/viewer"), inR, outW, nil)
		outW.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, nil)
	s, err := c.Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != len(wantTools)-1 {
		t.Errorf("a viewer over stdio has %d tools", len(list.Tools))
	}
	res, out := call(t, s, "list_containers", map[string]any{"page_size": 2})
	if res.IsError || len(out["items"].([]any)) != 2 {
		t.Errorf("list_containers over stdio: %s %v", text(res), out)
	}
	_ = s.Close()
	inW.Close()
	if err := testkit.Recv(t, done, 30*time.Second, "the proxy to end"); err != nil {
		t.Errorf("proxy: %v", err)
	}

	var answer strings.Builder
	msg := `{"jsonrpc":"2.0","id":7,"method":"tools/list"}` + "\n"
	if err := mcp.Proxy(ctx, "http://127.0.0.1:1/mcp", "k", strings.NewReader(msg), &answer, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer.String(), `"id":7`) || !strings.Contains(answer.String(), `"error"`) {
		t.Errorf("unreachable server: %q", answer.String())
	}
}

// TestMCPTrustedOnly: with trusted documents only, the tools still run
// (their operations are added to the trusted ones) while a document sent
// as text to /graphql is refused.
func TestMCPTrustedOnly(t *testing.T) {
	env := testkit.New(t, testkit.Options{Shipments: 1})
	srv, err := mcp.New(mcp.Config{Schema: executor.NewExecutableSchema(executor.Config{}).Schema()})
	if err != nil {
		t.Fatal(err)
	}
	trusted := &gqlhttp.TrustedDocuments{Only: true}
	trusted.Add(srv.Documents()...)
	base := server(t, env, func(c *httpapi.Config) { c.GraphQL.Trusted = trusted })
	key := env.Key(t, "acme/member")
	s := connect(t, base, "Token", key)
	if res, _ := call(t, s, "search_container", map[string]any{"query": "a"}); res.IsError {
		t.Errorf("search_container under trusted documents only: %s", text(res))
	}
	if res, _ := call(t, s, "list_containers", nil); res.IsError {
		t.Errorf("list_containers under trusted documents only: %s", text(res))
	}
	b := testkit.Send(t, http.MethodPost, base+"/graphql", key, []byte(`{"query":"{ containers(first: 1) { totalCount } }"}`)).Body
	if !strings.Contains(string(b), "QUERY_NOT_IN_SAFELIST") {
		t.Errorf("a document as text under trusted documents only: %s", b)
	}
}

// TestMCPRateLimit: RATE_LIMIT counts /mcp requests per key as it counts
// /graphql's: beyond the burst, 429 with Retry-After; another key is
// still served. (Stateless: a tools/call needs no initialize before it.)
func TestMCPRateLimit(t *testing.T) {
	env := testkit.New(t, testkit.Options{Shipments: 1})
	base := server(t, env, func(c *httpapi.Config) { c.RateLimit = 30 }) // bursts of 3
	// send posts body to /mcp as an MCP client does, with host as the
	// request's Host ("" for the server's address).
	send := func(key, host, body string) *testkit.HTTPResponse {
		req := testkit.Request(t, http.MethodPost, base+"/mcp", key, []byte(body))
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		return testkit.Do(t, req)
	}
	post := func(key string) *testkit.HTTPResponse {
		resp := send(key, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_supported_shipping_lines","arguments":{}}}`)
		if resp.Status == http.StatusOK && !strings.Contains(string(resp.Body), `"structuredContent"`) {
			t.Fatalf("tools/call without initialize: %s", resp.Body)
		}
		return resp
	}
	key := env.Key(t, "acme/admin")
	// Behind a reverse proxy on the same host: a loopback peer, the
	// public Host.
	if resp := send(env.Key(t, "globex/viewer"), "shipgraph.example.com", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); resp.Status != http.StatusOK {
		t.Errorf("a proxied request (Host shipgraph.example.com): %d", resp.Status)
	}
	limited := false
	for range 10 {
		if resp := post(key); resp.Status == http.StatusTooManyRequests {
			if resp.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
			limited = true
			break
		}
	}
	if !limited {
		t.Fatal("10 requests never met a rate limit of 30 a minute (bursts of 3)")
	}
	if resp := post(env.Key(t, "globex/admin")); resp.Status != http.StatusOK {
		t.Errorf("another key: %d", resp.Status)
	}
}
