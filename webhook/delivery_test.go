package webhook_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
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

// containerOf is a container of account (the n-th by id) and its shipment.
func (e *env) containerOf(t testing.TB, account string, n int) (string, string) {
	t.Helper()
	var c, s string
	if err := e.Store.SQL().QueryRowContext(context.Background(),
		`SELECT id, shipment_id FROM containers WHERE account_id = $1 ORDER BY id OFFSET $2 LIMIT 1`, account, n).Scan(&c, &s); err != nil {
		t.Fatal(err)
	}
	return c, s
}

// toggle changes available_for_pickup of container: one container.updated.
func (e *env) toggle(t testing.TB, container string) {
	t.Helper()
	e.Exec(t, `UPDATE containers SET available_for_pickup = NOT coalesce(available_for_pickup, false) WHERE id = $1`, container)
}

func TestDeliveredSignedForEachSubscribedEvent(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	c1, s1 := e.containerOf(t, e.acme, 0)
	g1, _ := e.containerOf(t, e.globex, 0)
	e.Exec(t, `UPDATE containers SET current_status = 'on_ship', available_for_pickup = false WHERE id = $1`, c1)
	// Before the webhook exists: not for it.
	e.toggle(t, c1)
	hook := e.webhook(t, e.acme, r.URL+"/hook", webhook.EventContainerUpdated, webhook.EventTransportAvailable, webhook.EventShipmentEstimatedArrival)
	other := newReceiver(t)
	e.webhook(t, e.globex, other.URL, webhook.EventContainerUpdated)
	e.webhook(t, e.acme, other.URL, webhook.EventTransportDelivered) // not raised below
	e.Exec(t, `UPDATE webhooks SET active = false WHERE url = $1 AND account_id = $2`, other.URL, e.acme)
	e.start(t, e.Store, webhook.Config{})
	t0 := time.Now()
	defer func() { t.Logf("took %s", time.Since(t0)) }()

	// Plain SQL, as another system writes.
	e.Exec(t, `UPDATE containers SET current_status = 'available', available_for_pickup = true WHERE id = $1`, c1)
	e.Exec(t, `UPDATE shipments SET pod_eta_at = coalesce(pod_eta_at, $2) + interval '1 day' WHERE id = $1`, s1, time.Now())
	e.Exec(t, `UPDATE containers SET seal_number = 'nothing-watched' WHERE id = $1`, c1)
	// Shipgraph's own write (the demo activity moves statuses).
	if _, err := e.Store.DemoActivity(context.Background(), 3); err != nil {
		t.Fatal(err)
	}

	want := map[string]bool{webhook.EventContainerUpdated: true, webhook.EventTransportAvailable: true, webhook.EventShipmentEstimatedArrival: true}
	got := map[string]bool{}
	var ids []string
	for len(got) < len(want) {
		d := r.wait(t, 15*time.Second)
		if !want[d.event] {
			continue // the demo activity may raise more of these events
		}
		got[d.event] = true
		if sig := d.header.Get(webhook.SignatureHeader); !webhook.Verify("secret-"+r.URL+"/hook", d.body, sig) {
			t.Errorf("%s: signature %q does not verify over the body", d.event, sig)
		}
		if ct := d.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q: a custom header overrode it", ct)
		}
		if d.header.Get("X-Custom") != "yes" {
			t.Errorf("custom header missing: %v", d.header)
		}
		ids = append(ids, d.id)
	}
	testkit.WaitFor(t, 30*time.Second, "every notification delivered", func() bool {
		return e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE webhook_id = $1 AND delivery_status <> 'succeeded'`, hook) == 0
	})
	for _, id := range ids {
		var attempts, codes int
		e.one(t, fmt.Sprintf(`SELECT attempts, (SELECT count(*) FROM webhook_delivery_attempts a
			WHERE a.account_id = n.account_id AND a.notification_id = n.id AND a.status_code = 200 AND a.error IS NULL AND a.response_body = '{"ok":true}')
			FROM webhook_notifications n WHERE id = '%s' AND delivered_at IS NOT NULL AND claimed_by IS NULL`, id), &attempts, &codes)
		if attempts != 1 || codes != 1 {
			t.Errorf("%s: attempts %d, recorded 200s %d", id, attempts, codes)
		}
	}
	if n := len(other.deliveries()); n != 0 {
		t.Errorf("another account's, an inactive and an unsubscribed webhook got %d deliveries", n)
	}
	if n := e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE account_id = $1`, e.globex); n != 0 {
		t.Errorf("globex has %d notifications for acme's changes", n)
	}
	_ = g1
	for _, d := range r.deliveries() {
		if d.event == webhook.EventContainerUpdated && strings.Contains(string(d.body), `"seal_number"`) {
			t.Errorf("a change of no watched attribute was delivered: %s", d.body)
		}
	}
}

func TestRetriedThenFailed(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	r.SetStatus(500)
	c1, _ := e.containerOf(t, e.acme, 0)
	hook := e.webhook(t, e.acme, r.URL, webhook.EventContainerUpdated)
	e.start(t, e.Store, webhook.Config{RetryBase: time.Millisecond})
	e.toggle(t, c1)
	testkit.WaitFor(t, 60*time.Second, "the notification failed", func() bool {
		return e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE webhook_id = $1 AND delivery_status = 'failed'`, hook) == 1
	})
	var attempts, rows, errs int
	var lastErr string
	e.one(t, `SELECT attempts, last_error, (SELECT count(*) FROM webhook_delivery_attempts a WHERE a.account_id = n.account_id AND a.notification_id = n.id),
		(SELECT count(*) FROM webhook_delivery_attempts a WHERE a.account_id = n.account_id AND a.notification_id = n.id AND a.status_code = 500 AND a.error LIKE 'HTTP 500%' AND a.response_body = '{"ok":true}')
		FROM webhook_notifications n`, &attempts, &lastErr, &rows, &errs)
	if attempts != webhook.MaxAttempts || rows != webhook.MaxAttempts || errs != webhook.MaxAttempts {
		t.Errorf("attempts %d, rows %d, 500s recorded %d; want %d", attempts, rows, errs, webhook.MaxAttempts)
	}
	if !strings.HasPrefix(lastErr, "HTTP 500") {
		t.Errorf("last_error %q", lastErr)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(r.deliveries()); n != webhook.MaxAttempts {
		t.Errorf("receiver got %d requests, want %d", n, webhook.MaxAttempts)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	e := newEnv(t)
	target := newReceiver(t)
	redirect := newRedirector(t, target.URL)
	c1, _ := e.containerOf(t, e.acme, 0)
	hook := e.webhook(t, e.acme, redirect, webhook.EventContainerUpdated)
	e.start(t, e.Store, webhook.Config{RetryBase: time.Hour})
	e.toggle(t, c1)
	testkit.WaitFor(t, 10*time.Second, "an attempt", func() bool {
		return e.Count(t, `SELECT count(*) FROM webhook_delivery_attempts a JOIN webhook_notifications n ON n.account_id = a.account_id AND n.id = a.notification_id
			WHERE n.account_id = $2 AND n.webhook_id = $1 AND a.status_code = 307`, hook, e.acme) == 1
	})
	if e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE webhook_id = $1 AND delivery_status = 'pending' AND attempts = 1`, hook) != 1 {
		t.Error("a 307 did not leave the notification pending for a retry")
	}
	if n := len(target.deliveries()); n != 0 {
		t.Errorf("the redirect was followed (%d requests)", n)
	}
}

func TestDeadEndpointDoesNotDelayLive(t *testing.T) {
	e := newEnv(t)
	dead, live := newReceiver(t), newReceiver(t)
	dead.SetHang(true)
	// Three containers: one record's notifications go one at a time, so
	// the dead endpoint's bound is reached by two records' first ones.
	var containers []string
	for i := range 3 {
		c, _ := e.containerOf(t, e.acme, i)
		containers = append(containers, c)
	}
	e.webhook(t, e.acme, dead.URL, webhook.EventContainerUpdated)
	liveHook := e.webhook(t, e.acme, live.URL, webhook.EventContainerUpdated)
	abort, kill := context.WithCancel(context.Background())
	defer kill() // the dead endpoint's deliveries: no need to wait for their timeout
	e.start(t, e.Store, webhook.Config{Workers: 4, PerWebhook: 2, Timeout: 30 * time.Second, Abort: abort})
	const n = 30
	for i := range n {
		e.toggle(t, containers[i%len(containers)])
	}
	testkit.WaitFor(t, 20*time.Second, "every live delivery", func() bool {
		return e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE webhook_id = $1 AND delivery_status = 'succeeded'`, liveHook) == n
	})
	// Its second request may have been claimed among the last: wait for
	// it (a read at once can come before it arrives), then check the bound.
	dead.Got.WaitN(30*time.Second, 2)
	if got := len(dead.deliveries()); got != 2 {
		t.Errorf("the dead endpoint has %d requests in flight, want its bound 2", got)
	}
}

func TestTwoProcessesDeliverEachOnce(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	var containers []string
	for i := range 4 {
		c, _ := e.containerOf(t, e.acme, i)
		containers = append(containers, c)
	}
	hook := e.webhook(t, e.acme, r.URL, webhook.EventContainerUpdated)
	e.start(t, e.Store, webhook.Config{Workers: 4, PerWebhook: 4})
	e.start(t, e.Open(t), webhook.Config{Workers: 4, PerWebhook: 4})
	const n = 120
	for i := range n {
		e.toggle(t, containers[i%len(containers)])
	}
	testkit.WaitFor(t, 30*time.Second, "every delivery", func() bool {
		return e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE webhook_id = $1 AND delivery_status = 'succeeded'`, hook) == n
	})
	time.Sleep(200 * time.Millisecond)
	seen := map[string]int{}
	for _, d := range r.deliveries() {
		seen[d.id]++
	}
	if len(seen) != n {
		t.Errorf("%d distinct notifications delivered, want %d", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("notification %s delivered %d times", id, k)
		}
	}
	if k := e.Count(t, `SELECT count(*) FROM webhook_notifications`); k != n {
		t.Errorf("%d notifications raised for %d changes", k, n)
	}
}

func TestKilledProcessClaimsExpire(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	r.SetHang(true)
	c1, _ := e.containerOf(t, e.acme, 0)
	hook := e.webhook(t, e.acme, r.URL, webhook.EventContainerUpdated)
	abort, kill := context.WithCancel(context.Background())
	_, stopA := e.start(t, e.Store, webhook.Config{Timeout: 2 * time.Second, ClaimMargin: 10 * time.Millisecond, Abort: abort, Owner: "process-a"})
	e.toggle(t, c1)
	r.wait(t, 10*time.Second) // A is delivering
	kill()                    // mid-delivery: nothing recorded, the claim stays
	stopA()
	r.SetHang(false)
	var owner, until string
	var attempts int
	e.one(t, `SELECT claimed_by, claimed_until::text, attempts FROM webhook_notifications WHERE delivery_status = 'pending'`, &owner, &until, &attempts)
	if owner != "process-a" || attempts != 0 {
		t.Fatalf("after the kill: claimed by %q, %d attempts", owner, attempts)
	}
	e.start(t, e.Open(t), webhook.Config{Owner: "process-b"})
	testkit.WaitFor(t, 15*time.Second, "delivered by process b", func() bool {
		return e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE webhook_id = $1 AND delivery_status = 'succeeded'`, hook) == 1
	})
	if e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE delivered_at >= $1::timestamptz`, until) != 1 {
		t.Error("delivered before the dead process' claim expired")
	}
	if n := e.Count(t, `SELECT count(*) FROM webhook_delivery_attempts`); n != 1 {
		t.Errorf("%d attempts recorded, want 1 (the killed one records nothing)", n)
	}
}

func TestPrivateAddressRefusedAtDelivery(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	_, port, _ := net.SplitHostPort(r.Listener.Addr().String())
	// hooks.example.com resolved to a public address when the webhook
	// was created; now it resolves to loopback (DNS rebinding).
	resolve := func(ctx context.Context, host string) ([]netip.Addr, error) {
		if host == "hooks.example.com" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	c1, _ := e.containerOf(t, e.acme, 0)
	hook := e.webhook(t, e.acme, "http://hooks.example.com:"+port+"/", webhook.EventContainerUpdated)
	_, stop := e.start(t, e.Store, webhook.Config{Resolve: resolve, RetryBase: 50 * time.Millisecond})
	e.toggle(t, c1)
	testkit.WaitFor(t, 10*time.Second, "refused attempts", func() bool {
		return e.Count(t, `SELECT count(*) FROM webhook_delivery_attempts WHERE status_code IS NULL AND error = 'webhook address 127.0.0.1 is loopback, private, link-local or metadata'`) >= 2
	})
	stop()
	if n := len(r.deliveries()); n != 0 {
		t.Fatalf("the receiver on loopback got %d requests", n)
	}
	// The same with private addresses allowed (the tests' and demos'
	// switch): delivered.
	e.start(t, e.Store, webhook.Config{Resolve: resolve, AllowPrivate: true, RetryBase: 50 * time.Millisecond})
	testkit.WaitFor(t, 10*time.Second, "delivered", func() bool {
		return e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE webhook_id = $1 AND delivery_status = 'succeeded'`, hook) == 1
	})
}

func TestQueueLimitRecordsFailed(t *testing.T) {
	e := newEnv(t)
	c1, _ := e.containerOf(t, e.acme, 0)
	g1, _ := e.containerOf(t, e.globex, 0)
	hook := e.webhook(t, e.acme, "https://hooks.example.com/", webhook.EventContainerUpdated)
	e.webhook(t, e.globex, "https://hooks.example.com/", webhook.EventContainerUpdated)
	for range 5 {
		e.toggle(t, c1)
		e.toggle(t, g1)
	}
	f := webhook.NewFanOut(e.Store, e.config(webhook.Config{QueueLimit: 3}), nil)
	for {
		more, err := f.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			break
		}
	}
	rows := e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE webhook_id = $1 AND delivery_status = 'pending'`, hook)
	failed := e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE webhook_id = $1 AND delivery_status = 'failed'
		AND attempts = 0 AND last_error LIKE 'not queued:%WEBHOOK_QUEUE_LIMIT%'`, hook)
	if rows != 3 || failed != 2 {
		t.Errorf("acme: %d pending, %d failed with the reason; want 3 and 2", rows, failed)
	}
	if n := e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE account_id = $1 AND delivery_status = 'pending'`, e.globex); n != 3 {
		t.Errorf("globex: %d pending, want 3 (its own limit)", n)
	}
}

func TestFanOutConcurrentRaisesOnce(t *testing.T) {
	e := newEnv(t)
	c1, _ := e.containerOf(t, e.acme, 0)
	e.webhook(t, e.acme, "https://hooks.example.com/", webhook.EventContainerUpdated)
	const n = 300
	for range n {
		e.toggle(t, c1)
	}
	var wg sync.WaitGroup
	for range 3 {
		store := e.Open(t)
		f := webhook.NewFanOut(store, e.config(webhook.Config{Batch: 7}), nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2000 {
				more, err := f.Step(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if !more && e.Count(t, `SELECT count(*) FROM webhook_notifications`) == n {
					return
				}
			}
		}()
	}
	wg.Wait()
	if k := e.Count(t, `SELECT count(*) FROM webhook_notifications`); k != n {
		t.Errorf("%d notifications for %d changes", k, n)
	}
	cur, err := e.Store.WebhookCursor(context.Background(), e.acme)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	if err := e.Store.SQL().QueryRow(`SELECT pos FROM change_log WHERE account_id = $1 ORDER BY pos DESC LIMIT 1`, e.acme).Scan(&last); err != nil {
		t.Fatal(err)
	}
	if cur != last {
		t.Errorf("position %d, want the account's last row %d", cur, last)
	}
}

func TestDrainFinishesDeliveriesInFlight(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	release := make(chan struct{})
	inner := r.Config.Handler
	r.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		<-release
		inner.ServeHTTP(w, req)
	})
	c1, _ := e.containerOf(t, e.acme, 0)
	hook := e.webhook(t, e.acme, r.URL, webhook.EventContainerUpdated)
	_, stop := e.start(t, e.Store, webhook.Config{})
	e.toggle(t, c1)
	testkit.WaitFor(t, 10*time.Second, "a claim", func() bool {
		return e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE claimed_by IS NOT NULL`) == 1
	})
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("the dispatcher stopped with a delivery in flight")
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	<-stopped
	if e.Count(t, `SELECT count(*) FROM webhook_notifications WHERE webhook_id = $1 AND delivery_status = 'succeeded' AND claimed_by IS NULL`, hook) != 1 {
		t.Error("the delivery in flight at the drain was not finished and recorded")
	}
}

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
	r.SetStatus(500)
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
