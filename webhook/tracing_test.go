package webhook_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"shipgraph/resolve"
	"shipgraph/rest"
	"shipgraph/testkit"
	"shipgraph/webhook"
)

// Tracing off: no span, no traceparent to the receiver. On: each attempt
// is a trace of its own (webhook <event> → the payload's statements, the
// POST client span, the recording), and the receiver gets the POST span's
// traceparent; a refused attempt is an error span.
func TestDeliveryTraces(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	c1, _ := e.containerOf(t, e.acme, 0)
	hook := e.webhook(t, e.acme, r.URL+"/hook", webhook.EventContainerUpdated)
	res := resolve.New(e.Store, resolve.Deps{})
	payload := func(ctx context.Context, account, id string) ([]byte, error) {
		return rest.NotificationPayload(ctx, res, rest.Config{}, account, id)
	}

	_, stop := e.start(t, e.Store, webhook.Config{Payload: payload})
	e.toggle(t, c1)
	if d := r.wait(t, 15*time.Second); d.header.Get("traceparent") != "" {
		t.Errorf("tracing off, yet the receiver got traceparent %q", d.header.Get("traceparent"))
	}
	stop()

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	e.start(t, e.Store, webhook.Config{Payload: payload, Tracer: tp})
	e.toggle(t, c1)
	d := r.wait(t, 15*time.Second)
	root := waitSpan(t, exp, "webhook container.updated")
	if root.Parent.IsValid() || root.SpanKind != trace.SpanKindInternal {
		t.Errorf("root span: parent %v, kind %v", root.Parent, root.SpanKind)
	}
	wantAttrs(t, root, map[string]string{"shipgraph.webhook.id": hook, "shipgraph.webhook.notification_id": d.id,
		"shipgraph.webhook.event": "container.updated", "shipgraph.webhook.attempt": "1", "shipgraph.webhook.status": "succeeded"})
	var post *tracetest.SpanStub
	statements := 0
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID() != root.SpanContext.TraceID() || s.SpanContext.SpanID() == root.SpanContext.SpanID() {
			continue
		}
		if s.Parent.SpanID() != root.SpanContext.SpanID() {
			t.Errorf("span %s is not the attempt's child", s.Name)
		}
		if s.Name == "POST" {
			post = &s
		} else {
			statements++
			for _, kv := range s.Attributes {
				if kv.Key == "db.query.text" && strings.Contains(kv.Value.String(), d.id) {
					t.Errorf("a statement span records a bound value: %s", kv.Value.String())
				}
			}
		}
	}
	if post == nil || statements < 2 {
		t.Fatalf("POST span %v, %d statement spans (payload and recording): %v", post, statements, exp.GetSpans())
	}
	origin := strings.TrimSuffix(r.URL, "/")
	if post.SpanKind != trace.SpanKindClient {
		t.Errorf("POST span kind %v", post.SpanKind)
	}
	wantAttrs(t, *post, map[string]string{"http.request.method": "POST", "http.response.status_code": "200",
		"url.full": origin, "server.address": "127.0.0.1"})
	want := "00-" + post.SpanContext.TraceID().String() + "-" + post.SpanContext.SpanID().String() + "-01"
	if got := d.header.Get("traceparent"); got != want {
		t.Errorf("traceparent %q, want the POST span's %q", got, want)
	}

	// A refused attempt (HTTP 500): error spans, retried.
	r.status.Store(500)
	exp.Reset()
	e.toggle(t, c1)
	r.wait(t, 15*time.Second)
	failed := waitSpan(t, exp, "webhook container.updated")
	if failed.Status.Code != codes.Error || !strings.Contains(failed.Status.Description, "HTTP 500") {
		t.Errorf("refused attempt's status %+v", failed.Status)
	}
	wantAttrs(t, failed, map[string]string{"shipgraph.webhook.status": "pending"})
	for _, s := range exp.GetSpans() {
		if s.Name == "POST" && s.SpanContext.TraceID() == failed.SpanContext.TraceID() {
			wantAttrs(t, s, map[string]string{"http.response.status_code": "500", "error.type": "500"})
			if s.Status.Code != codes.Error {
				t.Errorf("POST span of a 500: status %+v", s.Status)
			}
		}
	}
}

// waitSpan waits for an ended span named name.
func waitSpan(t *testing.T, exp *tracetest.InMemoryExporter, name string) tracetest.SpanStub {
	t.Helper()
	var found tracetest.SpanStub
	testkit.WaitFor(t, 10*time.Second, "span "+name, func() bool {
		for _, s := range exp.GetSpans() {
			if s.Name == name {
				found = s
				return true
			}
		}
		return false
	})
	return found
}

func wantAttrs(t *testing.T, s tracetest.SpanStub, want map[string]string) {
	t.Helper()
	got := map[attribute.Key]string{}
	for _, kv := range s.Attributes {
		got[kv.Key] = kv.Value.String()
	}
	for k, v := range want {
		if got[attribute.Key(k)] != v {
			t.Errorf("span %s: %s = %q, want %q (all: %v)", s.Name, k, got[attribute.Key(k)], v, got)
		}
	}
}
