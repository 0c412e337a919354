package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"shipgraph/graph"
	"shipgraph/graph/gqlhttp"
	"shipgraph/load"
	"shipgraph/testkit"
	"shipgraph/tracing"
)

// Caller's trace context, as a gateway sends it.
const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

func tracedChain(t *testing.T, tp trace.TracerProvider) (http.Handler, map[string]string) {
	t.Helper()
	url, keys := seeded(t)
	c := testkit.Config(gqlhttp.DefaultHandlerConfig, load.DefaultLoaderConfig)
	c.Tracing = tp
	return testkit.Start(t, open(t, url), c), keys
}

// inMemoryTracing installs a tracer provider whose spans the returned
// exporter keeps, shut down when t ends.
func inMemoryTracing(t *testing.T) (*tracetest.InMemoryExporter, *tracing.Provider) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp, err := tracing.New(context.Background(), sdktrace.NewSimpleSpanProcessor(exp))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return exp, tp
}

func post(t *testing.T, h http.Handler, key, query string, vars map[string]any, traceparent bool) *httptest.ResponseRecorder {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	r := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(b))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Token "+key)
	if traceparent {
		r.Header.Set("Traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"errors"`) {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	return w
}

func attr(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

// TestTraceSpanTree: a dashboard request with a caller's traceparent is one
// trace continuing the caller's: the HTTP server span (semantic conventions,
// the request id), under it the GraphQL operation (name, type, complexity,
// written on the fast path), under that one span per SQL statement with
// its text and row count and never a bound value.
func TestTraceSpanTree(t *testing.T) {
	exp, tp := inMemoryTracing(t)
	h, keys := tracedChain(t, tp.Provider())
	k := keys["acme/admin"]
	post(t, h, k, graph.DashboardQuery, map[string]any{"first": 2}, false) // warm: the key cache
	exp.Reset()

	w := post(t, h, k, graph.DashboardQuery, map[string]any{"first": 2}, true)
	spans := exp.GetSpans().Snapshots()
	var httpSpan, opSpan sdktrace.ReadOnlySpan
	var sql []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.SpanContext().TraceID().String() != callerTrace {
			t.Errorf("span %q is in trace %s, not the caller's", s.Name(), s.SpanContext().TraceID())
		}
		switch {
		case s.Name() == "POST /graphql":
			httpSpan = s
		case s.Name() == "query Dashboard":
			opSpan = s
		case s.InstrumentationScope().Name == "shipgraph/db":
			sql = append(sql, s)
		default:
			t.Errorf("unexpected span %q", s.Name())
		}
	}
	for _, s := range spans {
		n, _ := attr(s, "db.response.returned_rows")
		q, _ := attr(s, "db.query.text")
		t.Logf("%s %s parent %s %v rows %s %.90s", s.SpanContext().SpanID(), s.Name(), s.Parent().SpanID(), s.EndTime().Sub(s.StartTime()), n.String(), q.AsString())
	}
	if httpSpan == nil || opSpan == nil {
		t.Fatalf("spans: %v", names(spans))
	}
	if httpSpan.Parent().SpanID().String() != callerSpan || !httpSpan.Parent().IsRemote() || httpSpan.SpanKind() != trace.SpanKindServer {
		t.Errorf("HTTP span: parent %s remote %v kind %v", httpSpan.Parent().SpanID(), httpSpan.Parent().IsRemote(), httpSpan.SpanKind())
	}
	for key, want := range map[string]string{"http.request.method": "POST", "shipgraph.request_id": w.Header().Get("X-Request-Id")} {
		if v, _ := attr(httpSpan, key); v.AsString() != want || want == "" {
			t.Errorf("HTTP span %s = %q, want %q", key, v.AsString(), want)
		}
	}
	if v, _ := attr(httpSpan, "http.response.status_code"); v.AsInt64() != 200 {
		t.Errorf("HTTP span status code %v", v.String())
	}
	if opSpan.Parent().SpanID() != httpSpan.SpanContext().SpanID() {
		t.Errorf("the operation's parent is not the HTTP span")
	}
	if v, _ := attr(opSpan, "graphql.operation.type"); v.AsString() != "query" {
		t.Errorf("operation type %q", v.String())
	}
	if v, _ := attr(opSpan, "graphql.operation.name"); v.AsString() != "Dashboard" {
		t.Errorf("operation name %q", v.String())
	}
	if v, _ := attr(opSpan, "shipgraph.graphql.complexity"); v.AsInt64() <= 0 {
		t.Errorf("complexity %v", v.String())
	}
	if v, ok := attr(opSpan, "shipgraph.graphql.fast_path"); !ok || !v.AsBool() {
		t.Errorf("fast path %v %v, want true", v.String(), ok)
	}
	if len(sql) < 4 {
		t.Fatalf("%d statement spans, want the dashboard's 4 or more: %v", len(sql), names(spans))
	}
	rows := int64(0)
	for _, s := range sql {
		if s.Parent().SpanID() != opSpan.SpanContext().SpanID() {
			t.Errorf("statement span %q is not a child of the operation", s.Name())
		}
		q, _ := attr(s, "db.query.text")
		if !strings.Contains(q.AsString(), "$1") || s.SpanKind() != trace.SpanKindClient {
			t.Errorf("statement span %q: query %q kind %v", s.Name(), q.AsString(), s.SpanKind())
		}
		if sys, _ := attr(s, "db.system.name"); sys.AsString() != "postgresql" {
			t.Errorf("db.system.name %q", sys.String())
		}
		for _, a := range s.Attributes() {
			if strings.Contains(a.Value.String(), k) || uuidLike(a.Value.String()) {
				t.Errorf("statement span %q records a bound value: %s=%s", s.Name(), a.Key, a.Value.String())
			}
		}
		if n, ok := attr(s, "db.response.returned_rows"); ok {
			rows += n.AsInt64()
		}
	}
	if rows < 2 {
		t.Errorf("statement spans counted %d rows, want the page's and more", rows)
	}

	// Handed over to gqlgen's executor: the span says so.
	exp.Reset()
	post(t, h, k, `query Mixed { __schema { queryType { name } } shipments(first: 1) { nodes { id } } }`, nil, false)
	for _, s := range exp.GetSpans().Snapshots() {
		if s.Name() == "query Mixed" {
			if v, ok := attr(s, "shipgraph.graphql.fast_path"); !ok || v.AsBool() {
				t.Errorf("handed over: fast path %v %v, want false", v.String(), ok)
			}
			if s.Parent().IsValid() && s.Parent().TraceID().String() == callerTrace {
				t.Errorf("a request without traceparent continued the caller's trace")
			}
		}
	}
}

// TestTraceOff: without a tracer provider the chain makes no span, even
// for a request with a traceparent while a provider is installed globally.
func TestTraceOff(t *testing.T) {
	exp, _ := inMemoryTracing(t)
	h, keys := tracedChain(t, nil)
	post(t, h, keys["acme/admin"], graph.DashboardQuery, map[string]any{"first": 2}, true)
	if spans := exp.GetSpans(); len(spans) != 0 {
		t.Errorf("tracing off made %d spans: %v", len(spans), names(spans.Snapshots()))
	}
}

// TestTraceOTLP: configured by the OTEL_* variables alone, spans arrive
// over OTLP/HTTP (protobuf) at a receiver, with the service name.
func TestTraceOTLP(t *testing.T) {
	var mu sync.Mutex
	var got []string
	var service string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(b, &req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					service = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					got = append(got, s.Name)
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	defer recv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "shipgraph-test")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	tp, err := tracing.FromEnv(context.Background())
	if err != nil || tp == nil {
		t.Fatalf("FromEnv: %v %v", tp, err)
	}
	h, keys := tracedChain(t, tp.Provider())
	post(t, h, keys["acme/admin"], graph.DashboardQuery, map[string]any{"first": 2}, true)
	if err := tp.Shutdown(context.Background()); err != nil { // flushes the batch
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	joined := strings.Join(got, ",")
	if !strings.Contains(joined, "POST /graphql") || !strings.Contains(joined, "query Dashboard") || !strings.Contains(joined, "SELECT") {
		t.Errorf("received spans %v", got)
	}
	if service != "shipgraph-test" {
		t.Errorf("service.name %q", service)
	}
}

func TestTracingConfigured(t *testing.T) {
	env := func(kv ...string) (func(string) string, []string) {
		m := map[string]string{}
		for _, s := range kv {
			k, v, _ := strings.Cut(s, "=")
			m[k] = v
		}
		return func(k string) string { return m[k] }, kv
	}
	for _, c := range []struct {
		env  []string
		want bool
	}{
		{nil, false},
		{[]string{"PATH=/bin"}, false},
		{[]string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318"}, true},
		{[]string{"OTEL_SERVICE_NAME=x"}, true},
		{[]string{"OTEL_SERVICE_NAME=x", "OTEL_SDK_DISABLED=true"}, false},
		{[]string{"OTEL_SERVICE_NAME=x", "OTEL_TRACES_EXPORTER=none"}, false},
	} {
		if got := tracing.Configured(env(c.env...)); got != c.want {
			t.Errorf("%v: %v, want %v", c.env, got, c.want)
		}
	}
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}

// uuidLike reports whether s holds a UUID (an id bound as a parameter).
func uuidLike(s string) bool {
	for i := 0; i+36 <= len(s); i++ {
		if c := s[i : i+36]; c[8] == '-' && c[13] == '-' && c[18] == '-' && c[23] == '-' && strings.Trim(strings.ReplaceAll(c, "-", ""), "0123456789abcdef") == "" {
			return true
		}
	}
	return false
}

// TestTraceSubscriptionEvents: an SSE subscription over a traced request
// gets one trace per event (named for the changed record's type, linked to
// the request's span), with the statements re-reading the record as its
// children; the request's own trace holds no event.
func TestTraceSubscriptionEvents(t *testing.T) {
	exp, tp := inMemoryTracing(t)
	url, keys := seeded(t)
	c := testkit.Config(gqlhttp.DefaultHandlerConfig, load.DefaultLoaderConfig)
	c.Tracing = tp
	in := start(t, url, &c)
	var id string
	if err := in.store.SQL().QueryRowContext(context.Background(),
		`SELECT c.id FROM containers c JOIN accounts a ON a.id = c.account_id WHERE a.slug = 'acme' ORDER BY c.id LIMIT 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	events, cancel := sseStream(t, in.url, keys["acme/viewer"],
		`subscription Watch { containerUpdated { operation id container { id number shipment { id } } } }`, "")
	testkit.WaitFor(t, 30*time.Second, "the subscription", func() bool { return in.h.Subscriptions() == 1 })
	if _, err := in.store.SQL().ExecContext(context.Background(), `UPDATE containers SET seal_number = 'TRACED' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	select {
	case <-events:
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	cancel()
	var ev sdktrace.ReadOnlySpan
	var server sdktrace.ReadOnlySpan
	testkit.WaitFor(t, 10*time.Second, "the event's and the request's spans", func() bool {
		for _, s := range exp.GetSpans().Snapshots() {
			switch {
			case s.Name() == "subscription event container":
				ev = s
			case s.SpanKind() == trace.SpanKindServer:
				server = s
			}
		}
		return ev != nil && server != nil
	})
	if ev.Parent().IsValid() || ev.SpanContext().TraceID() == server.SpanContext().TraceID() {
		t.Errorf("the event is not a trace of its own: parent %v", ev.Parent())
	}
	if l := ev.Links(); len(l) != 1 || l[0].SpanContext.SpanID() != server.SpanContext().SpanID() {
		t.Errorf("event links %v, want the request's span %v", l, server.SpanContext().SpanID())
	}
	for k, want := range map[string]string{"shipgraph.change.type": "container", "shipgraph.change.operation": "UPDATE",
		"shipgraph.change.record_id": id, "graphql.operation.name": "Watch"} {
		if v, _ := attr(ev, k); v.String() != want {
			t.Errorf("event span %s = %q, want %q", k, v.String(), want)
		}
	}
	if v, _ := attr(ev, "shipgraph.change.log_id"); v.AsInt64() <= 0 {
		t.Errorf("event span log id %v", v)
	}
	children := 0
	for _, s := range exp.GetSpans().Snapshots() {
		if s.Parent().SpanID() == ev.SpanContext().SpanID() {
			children++
			if v, _ := attr(s, "db.query.text"); !strings.Contains(v.String(), "$1") || strings.Contains(v.String(), id) {
				t.Errorf("statement span %q: placeholders, never the id", v.String())
			}
		}
		if s.SpanContext().TraceID() == server.SpanContext().TraceID() && strings.HasPrefix(s.Name(), "subscription event") {
			t.Errorf("an event span in the request's trace")
		}
	}
	if children < 2 { // the container, then its shipment
		t.Errorf("%d statement spans under the event", children)
	}
}
