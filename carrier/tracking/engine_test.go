package tracking_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/riverqueue/river/rivertype"

	"shipgraph/carrier/sim"
	"shipgraph/carrier/tracking"
	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/jobs"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
	"shipgraph/webhook"
)

// env is one test's database, simulator and engines.
type env struct {
	t     testing.TB
	store *db.DB
	sim   *sim.Sim
	url   string
	dbURL string
	acct  string

	clock atomic.Pointer[time.Time] // the simulator's

	mu     sync.Mutex
	polled map[string]chan rivertype.JobState
}

func newEnv(t testing.TB) *env {
	t.Helper()
	d := pg.New(t, 0)
	store, url := d.Store, d.URL
	e0 := &env{}
	start := time.Now().UTC()
	e0.clock.Store(&start)
	s, err := sim.New(sim.Options{Seed: 3, Now: func() time.Time { return *e0.clock.Load() }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	e := e0
	e.t, e.store, e.sim, e.url, e.dbURL, e.polled = t, store, s, srv.URL, url, map[string]chan rivertype.JobState{}
	d.One(t, []any{&e.acct}, `INSERT INTO accounts (slug, company_name) VALUES ('trk', 'Tracking') RETURNING id`)
	return e
}

func (e *env) config() tracking.Config {
	c := tracking.Default
	for _, scac := range sim.DefaultSCACs {
		k := tracking.DefaultCarrier
		k.SCAC, k.BaseURL, k.Timeout = scac, e.url+"/"+scac, 5*time.Second
		c.Carriers = append(c.Carriers, k)
	}
	c.ScheduleEvery = 50 * time.Millisecond
	c.RetryBase = time.Millisecond
	// A poll's bound is production's, and River's rescue just after it:
	// room for a loaded machine (on a Citus cluster at load 40 one first
	// poll's statement took 5-13 s on its worker, and a poll that outlives
	// its bound is done again from the start, the carrier asked again).
	c.PollTimeout = time.Minute
	c.RescueAfter = time.Minute + 5*time.Second
	c.MaxAttempts = 4
	return c
}

// engine starts an engine whose polls report to the env.
func (e *env) engine(c tracking.Config) *tracking.Engine {
	e.t.Helper()
	eng, j := newEngine(e.t, c, e.store)
	e.start(eng, j)
	return eng
}

// start reports eng's polls to the env and starts j, until the test ends.
func (e *env) start(eng *tracking.Engine, j *jobs.Engine) {
	e.t.Helper()
	stop, err := eng.OnPolled(func(a tracking.PollArgs, s rivertype.JobState) { e.ch(a.RequestID) <- s })
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(stop)
	if err := j.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) ch(id string) chan rivertype.JobState {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.polled[id]
	if c == nil {
		c = make(chan rivertype.JobState, 1000)
		e.polled[id] = c
	}
	return c
}

// requestTracked requests up to n of the simulator's tracked numbers of
// the request type ("" for any) and returns the requests' ids.
func (e *env) requestTracked(typ string, n int) []string {
	e.t.Helper()
	var ids []string
	for _, num := range e.sim.Numbers() {
		if num.State == "tracked" && (typ == "" || num.RequestType == typ) && len(ids) < n {
			ids = append(ids, e.request(num.RequestType, num.RequestNumber, num.SCAC))
		}
	}
	return ids
}

// request inserts a pending request with plain SQL, as any path may.
func (e *env) request(typ, number, scac string) string {
	e.t.Helper()
	var id string
	if err := e.store.SQL().QueryRow(`INSERT INTO tracking_requests (account_id, request_type, request_number, scac, next_poll_at)
		VALUES ($1, $2, $3, $4, now()) RETURNING id`, e.acct, typ, number, scac).Scan(&id); err != nil {
		e.t.Fatal(err)
	}
	return id
}

type reqRow struct {
	Status     string
	Reason     *string
	Retrying   bool
	Retries    int
	ShipmentID *string
}

func (e *env) row(id string) reqRow {
	e.t.Helper()
	var r reqRow
	if err := e.store.SQL().QueryRow(`SELECT status, failed_reason, is_retrying, retry_count, shipment_id::text
		FROM tracking_requests WHERE id = $1`, id).Scan(&r.Status, &r.Reason, &r.Retrying, &r.Retries, &r.ShipmentID); err != nil {
		e.t.Fatal(err)
	}
	return r
}

// waitFor waits for the polls of id until ok holds of its row.
func (e *env) waitFor(id string, ok func(reqRow) bool) reqRow {
	e.t.Helper()
	// River's rescuer looks every 30 s: a rescued poll may come after one
	// look more.
	deadline := time.After(90 * time.Second)
	for {
		if r := e.row(id); ok(r) {
			return r
		}
		select {
		case <-e.ch(id):
		case <-deadline:
			e.t.Fatalf("request %s: still %+v", id, e.row(id))
		}
	}
}

func (e *env) count(query string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.store.SQL().QueryRow(query, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) number(typ, state string) sim.Number {
	e.t.Helper()
	for _, n := range e.sim.Numbers() {
		if n.RequestType == typ && n.State == state {
			return n
		}
	}
	e.t.Fatalf("the simulator has no %s %s", state, typ)
	return sim.Number{}
}

func (e *env) faults(fs ...sim.Fault) {
	e.t.Helper()
	b, _ := json.Marshal(fs)
	resp, err := http.Post(e.url+"/sim/faults", "application/json", bytes.NewReader(b))
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		e.t.Fatalf("POST /sim/faults: %d", resp.StatusCode)
	}
}

// snapshot counts what a poll writes, and the change log's event rows.
func (e *env) snapshot(shipment string) string {
	return fmt.Sprint(
		e.count(`SELECT count(*) FROM containers WHERE shipment_id = $1`, shipment),
		e.count(`SELECT count(*) FROM raw_events WHERE shipment_id = $1`, shipment),
		e.count(`SELECT count(*) FROM transport_events WHERE shipment_id = $1`, shipment),
		e.count(`SELECT count(*) FROM vessels`),
		e.count(`SELECT count(*) FROM shipments WHERE account_id = $1`, e.acct),
		e.count(`SELECT count(*) FROM change_log WHERE account_id = $1 AND record_type IN ('shipment', 'container', 'transport_event')`, e.acct),
	)
}

func TestPollKnownNumberCreates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng := e.engine(e.config())
	n := e.number("bill_of_lading", "tracked")
	id := e.request(n.RequestType, n.RequestNumber, n.SCAC)
	r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
	if r.Status != "created" || r.ShipmentID == nil {
		t.Fatalf("request %+v, want created with its shipment", r)
	}
	ship := *r.ShipmentID
	if got := e.count(`SELECT count(*) FROM shipments WHERE id = $1 AND bill_of_lading_number = $2 AND shipping_line_scac = $3`,
		ship, n.RequestNumber, n.SCAC); got != 1 {
		t.Fatalf("the shipment of %s: %d rows", n.RequestNumber, got)
	}
	for what, q := range map[string]string{
		"containers with equipment": `SELECT count(*) FROM containers WHERE shipment_id = $1 AND equipment_length IS NOT NULL AND equipment_type IS NOT NULL`,
		"raw events":                `SELECT count(*) FROM raw_events WHERE shipment_id = $1`,
		"transport events":          `SELECT count(*) FROM transport_events WHERE shipment_id = $1 AND event LIKE 'container.transport.%'`,
		"vessels":                   `SELECT count(*) FROM vessels v WHERE v.id IN (SELECT r.vessel_id FROM raw_events r WHERE r.shipment_id = $1)`,
		"milestones":                `SELECT count(*) FROM shipments WHERE id = $1 AND pol_atd_at IS NOT NULL AND pod_original_eta_at IS NOT NULL AND pod_vessel_imo IS NOT NULL`,
	} {
		if got := e.count(q, ship); got == 0 {
			t.Errorf("%s: none", what)
		}
	}
	before := e.snapshot(ship)

	// A repeated poll adds nothing.
	if err := enqueuePoll(context.Background(), eng, e.store, e.acct, id); err != nil {
		t.Fatal(err)
	}
	<-e.ch(id)
	if after := e.snapshot(ship); after != before {
		t.Fatalf("a repeated poll wrote: %s → %s", before, after)
	}
}

func TestPollUnknownNumberFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.engine(e.config())
	id := e.request("bill_of_lading", "NOSUCHNUMBER1", sim.DefaultSCACs[0])
	r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
	if r.Status != "failed" || r.Reason == nil || *r.Reason != "not_found" || r.Retries != 0 {
		t.Fatalf("request %+v, want failed not_found at once", r)
	}
}

func TestPollWithoutConnectorFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.config()
	c.Carriers = nil
	e.engine(c)
	id := e.request("bill_of_lading", "ABC123", "ZZZZ")
	r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
	if r.Status != "failed" || *r.Reason != "shipping_line_unreachable" {
		t.Fatalf("request %+v, want failed shipping_line_unreachable", r)
	}
}

func TestCarrierDownRetriesThenRecovers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := e.number("bill_of_lading", "tracked")
	e.faults(sim.Fault{SCAC: n.SCAC, Mode: sim.FaultDown, Count: 2})
	e.engine(e.config())
	id := e.request(n.RequestType, n.RequestNumber, n.SCAC)
	r := e.waitFor(id, func(r reqRow) bool { return r.Retrying })
	if r.Status != "pending" || r.Retries < 1 {
		t.Fatalf("request %+v, want pending and retrying", r)
	}
	r = e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
	if r.Status != "created" || r.Retrying || r.Retries != 0 {
		t.Fatalf("request %+v, want created after the carrier recovered", r)
	}
}

func TestMalformedWritesNothingThenExhausts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := e.number("bill_of_lading", "tracked")
	e.faults(sim.Fault{SCAC: n.SCAC, Mode: sim.FaultMalformed})
	e.engine(e.config())
	id := e.request(n.RequestType, n.RequestNumber, n.SCAC)
	r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
	if r.Status != "failed" || *r.Reason != "retries_exhausted" {
		t.Fatalf("request %+v, want failed retries_exhausted", r)
	}
	if got := e.count(`SELECT (SELECT count(*) FROM shipments WHERE account_id = $1) + (SELECT count(*) FROM raw_events WHERE account_id = $1)`, e.acct); got != 0 {
		t.Fatalf("a malformed answer wrote %d rows", got)
	}
}

func TestTwoEnginesNeverDouble(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := e.engine(e.config()), e.engine(e.config())
	ids := e.requestTracked("container", 6)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		for _, id := range ids {
			_ = enqueuePoll(ctx, a, e.store, e.acct, id)
			_ = enqueuePoll(ctx, b, e.store, e.acct, id)
		}
	}
	for _, id := range ids {
		// created, or tracking_stopped for a shipment whose containers
		// are all back already.
		r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
		if r.ShipmentID == nil {
			t.Fatalf("request %s: %+v, want tracked", id, r)
		}
	}
	if got := e.count(`SELECT count(*) FROM (SELECT container_id, carrier_event_id FROM raw_events WHERE account_id = $1
		GROUP BY 1, 2 HAVING count(*) > 1) d`, e.acct); got != 0 {
		t.Fatalf("%d events doubled", got)
	}
	if got := e.count(`SELECT count(*) FROM (SELECT shipment_id, number FROM containers WHERE account_id = $1
		GROUP BY 1, 2 HAVING count(*) > 1) d`, e.acct); got != 0 {
		t.Fatalf("%d containers doubled", got)
	}
}

// advance moves the simulator's clock.
func (e *env) advance(d time.Duration) {
	t := e.clock.Load().Add(d)
	e.clock.Store(&t)
}

// repoll polls the requests again and waits for each poll to end.
func (e *env) repoll(eng *tracking.Engine, ids ...string) {
	e.t.Helper()
	for _, id := range ids {
		for len(e.ch(id)) > 0 {
			<-e.ch(id)
		}
		if err := enqueuePoll(context.Background(), eng, e.store, e.acct, id); err != nil {
			e.t.Fatal(err)
		}
	}
	for _, id := range ids {
		select {
		case <-e.ch(id):
		case <-time.After(30 * time.Second):
			e.t.Fatalf("request %s: no poll ended", id)
		}
	}
}

func TestETAMovesThenTrackingStops(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng := e.engine(e.config())
	ids := e.requestTracked("bill_of_lading", 6)
	etas := func() map[string]string {
		out := map[string]string{}
		for _, id := range ids {
			r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
			if r.ShipmentID == nil {
				t.Fatalf("request %s: %+v", id, r)
			}
			var eta, orig string
			if err := e.store.SQL().QueryRow(`SELECT coalesce(pod_eta_at::text, ''), coalesce(pod_original_eta_at::text, '')
				FROM shipments WHERE id = $1`, *r.ShipmentID).Scan(&eta, &orig); err != nil {
				t.Fatal(err)
			}
			out[id] = eta + "|" + orig
		}
		return out
	}
	before := etas()
	e.advance(9 * 24 * time.Hour)
	e.repoll(eng, ids...)
	after := etas()
	moved := 0
	for _, id := range ids {
		b, a := before[id], after[id]
		if b != a {
			moved++
		}
		if b[strings.Index(b, "|"):] != a[strings.Index(a, "|"):] {
			t.Errorf("request %s: the original ETA changed: %s → %s", id, b, a)
		}
	}
	if moved == 0 {
		t.Fatalf("no ETA moved in 9 days of the simulator's clock: %v", after)
	}

	// Months later every container is back empty: tracking stops.
	e.advance(150 * 24 * time.Hour)
	e.repoll(eng, ids...)
	for _, id := range ids {
		r := e.row(id)
		if r.Status != "tracking_stopped" {
			t.Errorf("request %s: %+v, want tracking_stopped", id, r)
			continue
		}
		if got := e.count(`SELECT count(*) FROM shipments WHERE id = $1 AND line_tracking_stopped_at IS NOT NULL
			AND line_tracking_stopped_reason = 'all_containers_terminated'`, *r.ShipmentID); got != 1 {
			t.Errorf("request %s: its shipment's tracking did not stop as all_containers_terminated", id)
		}
	}
	if got := e.count(`SELECT count(*) FROM tracking_requests WHERE account_id = $1 AND next_poll_at IS NOT NULL
		AND status = 'tracking_stopped'`, e.acct); got != 0 {
		t.Errorf("%d stopped requests still scheduled", got)
	}
}

// TestEndedVoyageSucceedsThenStops: a request for a voyage that ended
// long ago (every container back empty) is created, then stopped, in the
// poll that first finds it: the change log holds both transitions, in
// that order, and webhook receivers hear tracking_request.succeeded (its
// request as of that event: created) before .tracking_stopped.
func TestEndedVoyageSucceedsThenStops(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.advance(200 * 24 * time.Hour)
	e.engine(e.config())
	hook := newHookReceiver(t, e, webhook.EventTrackingSucceeded, webhook.EventTrackingStopped)
	n := e.number("bill_of_lading", "tracked")
	id := e.request(n.RequestType, n.RequestNumber, n.SCAC)
	r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
	if r.Status != "tracking_stopped" {
		t.Fatalf("request for an ended voyage: %+v, want tracking_stopped", r)
	}
	got := pg.Column[string](t, e.store.SQL(), `SELECT new ->> 'status' FROM change_log
		WHERE account_id = $1 AND record_type = 'tracking_request' AND record_id = $2 AND op = 'UPDATE' AND changed @> '{status}'
		ORDER BY pos`, e.acct, id)
	if strings.Join(got, ",") != "created,tracking_stopped" {
		t.Errorf("status changes logged: %v, want created then tracking_stopped", got)
	}
	// Delivered in that order, each saying the request's status as of its
	// event (succeeded: created, not already tracking_stopped).
	delivered := hook.wait(t, 2)
	if len(delivered) != 2 || delivered[0] != webhook.EventTrackingSucceeded+" created" ||
		delivered[1] != webhook.EventTrackingStopped+" tracking_stopped" {
		t.Errorf("delivered %q, want succeeded (created) then tracking_stopped", delivered)
	}
}

// hookReceiver is a webhook of the account for events, delivered by a
// fan-out and dispatcher of the webhook engine to a receiver on 127.0.0.1
// that records "event status" of each delivery (status: the reference
// object's, as the notification froze it).
type hookReceiver struct {
	mu  sync.Mutex
	got []string
}

func newHookReceiver(t *testing.T, e *env, events ...string) *hookReceiver {
	t.Helper()
	h := &hookReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var doc struct{ Event, Status string }
		_ = json.NewDecoder(req.Body).Decode(&doc)
		h.mu.Lock()
		h.got = append(h.got, doc.Event+" "+doc.Status)
		h.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	if _, err := e.store.SQL().Exec(`INSERT INTO webhooks (account_id, url, events, secret) VALUES ($1, $2, $3, 'secret')`,
		e.acct, srv.URL, pq.Array(events)); err != nil {
		t.Fatal(err)
	}
	payload := func(ctx context.Context, account, id string) ([]byte, error) {
		var event, status string
		err := e.store.SQL().QueryRowContext(ctx, `SELECT event, coalesce(payload ->> 'status', '') FROM webhook_notifications
			WHERE account_id = $1 AND id = $2`, account, id).Scan(&event, &status)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]string{"event": event, "status": status})
	}
	c := webhook.Config{Payload: payload, AllowPrivate: true, Poll: 50 * time.Millisecond, RetryBase: time.Millisecond}
	d := webhook.NewDispatcher(e.store, c)
	f := webhook.NewFanOut(e.store, c, d.Wake)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); d.Run(ctx) }()
	go func() { defer wg.Done(); f.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return h
}

// wait returns the deliveries once there are n of them (or fails).
func (h *hookReceiver) wait(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	testkit.WaitFor(t, 30*time.Second, "webhook deliveries", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		got = append(got[:0], h.got...)
		return len(got) >= n
	})
	return got
}

// rateLimited is the env's engine configuration with scac limited to 60
// requests a minute (bursts of 6) and no concurrency limit, and n tracking
// requests of scac's tracked numbers.
func (e *env) rateLimited(t *testing.T, scac string, n int) (tracking.Config, []string) {
	t.Helper()
	c := e.config()
	for i := range c.Carriers {
		if c.Carriers[i].SCAC == scac {
			c.Carriers[i].RatePerMinute, c.Carriers[i].Concurrency = 60, 0
		}
	}
	var ids []string
	for _, x := range e.sim.Numbers() {
		if x.SCAC == scac && x.State == "tracked" && len(ids) < n {
			ids = append(ids, e.request(x.RequestType, x.RequestNumber, x.SCAC))
		}
	}
	if len(ids) < n {
		t.Fatalf("the simulator knows %d tracked numbers of %s, want %d", len(ids), scac, n)
	}
	return c, ids
}

// TestCarrierRateWaitedInPlace: a poll whose carrier's rate frees within
// a second waits for it in its worker instead of being snoozed (a River
// round trip, the request read again, and a second's delay). A carrier
// limited to 60 requests a minute (bursts of 6) gets 7 requests at once:
// the seventh's turn comes within a second, so no poll's first ask of
// the carrier is snoozed, and every poll completes.
func TestCarrierRateWaitedInPlace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, ids := e.rateLimited(t, "MSCU", 7)
	why := postponements()
	eng, j := newLoggedEngine(t, c, e.store, slog.New(why))
	type end struct {
		id string
		s  rivertype.JobState
	}
	ended := make(chan end, 100)
	stop, err := eng.OnPolled(func(a tracking.PollArgs, s rivertype.JobState) { ended <- end{a.RequestID, s} })
	if err != nil {
		t.Fatal(err)
	}
	e.start(eng, j)
	for _, id := range ids {
		if r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" }); r.Status == "pending" {
			t.Errorf("request %s: %+v", id, r)
		}
	}
	// Each poll reports its end (a snooze too): wait for seven completed.
	// A poll that failed (its transaction outlived the poll's timeout on a
	// loaded machine: River retries it) or met its request held by another
	// transaction asks the carrier again, an eighth request, which may find
	// the rate's next turn more than a second away: what the test holds is
	// that no poll's first ask was refused.
	deadline := time.After(90 * time.Second)
	for done := 0; done < len(ids); {
		select {
		case x := <-ended:
			if x.s == rivertype.JobStateCompleted {
				done++
				continue
			}
			r := why.of(x.id)
			if len(r) == 0 || r[0] == "carrier_busy" {
				t.Fatalf("a poll of %s ended %s (%v), want every one completed without a snooze for the carrier's rate", x.id, x.s, r)
			}
			t.Logf("request %s's poll ended %s (%v) and runs again", x.id, x.s, r)
		case <-deadline:
			t.Fatalf("%d of %d polls reported completed", done, len(ids))
		}
	}
	stop()
}

// TestCarrierTurnsKeptOverSnooze: polls refused by their carrier's rate
// for longer than a worker waits are snoozed until their turn, which
// they keep, so each is snoozed once: 12 requests of a carrier limited to
// 60 a minute (bursts of 6) all settle, and no poll is refused by the rate
// twice in a row.
// Without the turns every refused poll came back together with the
// others and most were refused again.
func TestCarrierTurnsKeptOverSnooze(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, ids := e.rateLimited(t, "CMDU", 12)
	why := postponements()
	eng, j := newLoggedEngine(t, c, e.store, slog.New(why))
	type end struct {
		id string
		s  rivertype.JobState
	}
	ended := make(chan end, 1000)
	stop, err := eng.OnPolled(func(a tracking.PollArgs, s rivertype.JobState) { ended <- end{a.RequestID, s} })
	if err != nil {
		t.Fatal(err)
	}
	e.start(eng, j)
	snoozed := map[string]int{}
	deadline := time.After(120 * time.Second)
	for done := 0; done < len(ids); {
		select {
		case x := <-ended:
			if x.s == rivertype.JobStateCompleted {
				done++
				continue
			}
			// A poll refused by the rate comes back at its turn and takes
			// it: refused twice in a row is the defect. One that failed
			// (River retries it) or met its request held by another
			// transaction after its turn asks for a new one.
			r := why.of(x.id)
			if len(r) == 0 {
				t.Fatalf("request %s's poll ended %s without saying why", x.id, x.s)
			}
			if n := len(r); n > 1 && r[n-1] == "carrier_busy" && r[n-2] == "carrier_busy" {
				t.Fatalf("request %s's poll was refused by the carrier's rate twice in a row (%v), want its turn kept", x.id, r)
			}
			if r[len(r)-1] == "carrier_busy" {
				snoozed[x.id]++
			} else {
				t.Logf("request %s's poll ended %s (%v) and runs again", x.id, x.s, r)
			}
		case <-deadline:
			t.Fatalf("%d of %d polls completed", done, len(ids))
		}
	}
	stop()
	if len(snoozed) == 0 {
		t.Errorf("no poll was snoozed: 12 requests at once should exceed what the rate frees within a second")
	}
	t.Logf("%d of %d polls snoozed once", len(snoozed), len(ids))
}

// logged is a slog handler for a tracking engine's log in tests: it keeps
// the records its filter accepts (every one without a filter), in order,
// and sends each one's message on said when there is room (nil: no
// channel).
type logged struct {
	filter func(slog.Record) bool
	said   chan string
	mu     sync.Mutex
	kept   []slog.Record
}

func (l *logged) Enabled(context.Context, slog.Level) bool { return true }
func (l *logged) Handle(_ context.Context, r slog.Record) error {
	if l.filter != nil && !l.filter(r) {
		return nil
	}
	l.mu.Lock()
	l.kept = append(l.kept, r.Clone())
	l.mu.Unlock()
	select {
	case l.said <- r.Message:
	default:
	}
	return nil
}
func (l *logged) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logged) WithGroup(string) slog.Handler      { return l }

// saying is a log whose messages are sent on its said channel.
func saying() *logged { return &logged{said: make(chan string, 100)} }

// postponements is a log of why each poll of a tracking engine ended
// without completing: snoozed (its "tracking: poll postponed" line:
// carrier_busy or request_busy) or failed (its "tracking: poll failed"
// line, which River retries).
func postponements() *logged {
	return &logged{filter: func(r slog.Record) bool {
		return r.Message == "tracking: poll postponed" || r.Message == "tracking: poll failed"
	}}
}

// of returns why request's polls ended without completing so far, in
// order: the postponed line's reason, or "failed: " and the error.
func (l *logged) of(request string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var whys []string
	for _, r := range l.kept {
		var req, why string
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "request":
				req = a.Value.String()
			case "why":
				why = a.Value.String()
			case "err":
				why = "failed: " + a.Value.String()
			}
			return true
		})
		if req == request {
			whys = append(whys, why)
		}
	}
	return whys
}

// TestHeldRequestKeepsCarrierAnswer: a poll whose request another
// transaction holds (the schedule's claim of a round, another instance)
// writes the carrier's answer again once the row is free, instead of
// being snoozed and asking the carrier again: every refused write spent a
// second turn of the carrier's rate (319 of 10,000 in a backlog). The
// test holds the request's row until the engine says it will write again,
// then frees it: the request settles with the carrier asked no more, and
// the poll completes without a snooze.
func TestHeldRequestKeepsCarrierAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const scac = "HLCU"
	var asked atomic.Int64
	h := e.sim.Handler()
	counted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/"+scac+"/v2/events") {
			asked.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(counted.Close)
	c := e.config()
	for i := range c.Carriers {
		if c.Carriers[i].SCAC == scac {
			c.Carriers[i].BaseURL = counted.URL + "/" + scac
		}
	}
	var n sim.Number
	for _, x := range e.sim.Numbers() {
		if x.SCAC == scac && x.RequestType == "bill_of_lading" && x.State == "tracked" {
			n = x
			break
		}
	}
	if n.SCAC != scac {
		t.Fatalf("the simulator has no tracked bill of lading of %s", scac)
	}
	id := e.request(n.RequestType, n.RequestNumber, n.SCAC)

	ctx := context.Background()
	hold, err := e.store.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hold.Rollback() }()
	if _, err := hold.Exec(`SELECT 1 FROM tracking_requests WHERE account_id = $1 AND id = $2 FOR UPDATE`, e.acct, id); err != nil {
		t.Fatal(err)
	}

	log := saying()
	eng, j := newLoggedEngine(t, c, e.store, slog.New(log))
	ended := make(chan rivertype.JobState, 100)
	stop, err := eng.OnPolled(func(a tracking.PollArgs, s rivertype.JobState) {
		if a.RequestID == id {
			ended <- s
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	if err := j.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := enqueuePoll(ctx, eng, e.store, e.acct, id); err != nil {
		t.Fatal(err)
	}

	deadline := time.After(60 * time.Second)
	for waiting := true; waiting; {
		select {
		case m := <-log.said:
			waiting = !strings.Contains(m, "writing the answer again")
		case s := <-ended:
			t.Fatalf("the poll of a held request ended %s before the row was freed, want it to keep the carrier's answer and write it again", s)
		case <-deadline:
			t.Fatal("the engine never met the held request")
		}
	}
	before := asked.Load()
	if before == 0 {
		t.Fatal("the carrier was not asked before the write")
	}
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-ended:
		if s != rivertype.JobStateCompleted {
			t.Fatalf("the poll ended %s, want completed without a snooze", s)
		}
	case <-deadline:
		t.Fatal("the poll did not end after the row was freed")
	}
	if r := e.row(id); r.Status == "pending" || r.ShipmentID == nil {
		t.Errorf("request: %+v, want its shipment", r)
	}
	if got := asked.Load(); got != before {
		t.Errorf("the carrier was asked %d times, %d of them after the row was freed: want its first answer written", got, got-before)
	}
}

// TestLanesWriteAccountsTogether: with one lane, the polls of many
// accounts that finish together are written by shared transactions on
// plain PostgreSQL (requests of several accounts with one xmin); on Citus
// too every request is tracked once.
func TestLanesWriteAccountsTogether(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var ids []string
	for i, n := range tracked(e) {
		if i == 24 {
			break
		}
		e.acct = newAccount(e, i)
		ids = append(ids, e.request(n.RequestType, n.RequestNumber, n.SCAC))
	}
	c := e.config()
	c.Writers = 1
	e.engine(c)
	for _, id := range ids {
		if r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" }); r.ShipmentID == nil {
			t.Fatalf("request %s: %+v, want tracked", id, r)
		}
	}
	if got := e.count(`SELECT count(*) FROM shipments WHERE account_id IN (SELECT account_id FROM tracking_requests WHERE id = ANY($1))`,
		pq.StringArray(ids)); got != len(ids) {
		t.Fatalf("%d shipments for %d requests of one each", got, len(ids))
	}
	if !e.store.GroupsAccounts() {
		return // Citus: one account a transaction; xmin is each worker's own, not comparable across shards
	}
	if e.count(`SELECT count(*) FROM (SELECT xmin::text FROM tracking_requests WHERE id = ANY($1)
		GROUP BY 1 HAVING count(DISTINCT account_id) > 1) x`, pq.StringArray(ids)) == 0 {
		t.Fatal("every account's polls were written by a transaction of their own")
	}
}

// TestFirstPollsAnalyzeNewTables: a new database's tables, never analyzed,
// get statistics once the engine has written its first polls (the plans
// made without them take account-wide indexes: docs/tracking.md), without
// waiting for autovacuum's naptime; the engine's own one-off analyze.
func TestFirstPollsAnalyzeNewTables(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	stats := func() int {
		return e.count(`SELECT count(DISTINCT tablename) FROM pg_stats WHERE schemaname = 'public'
			AND tablename IN ('tracking_requests', 'shipments', 'containers', 'raw_events', 'change_log')`)
	}
	if got := stats(); got != 0 {
		t.Fatalf("%d tracking tables with statistics before any poll, want 0", got)
	}
	eng := e.engine(e.config())
	nums := tracked(e)
	var ids []string
	for i := 0; len(ids) < 60; i++ {
		if i%len(nums) == 0 && i > 0 {
			e.acct = newAccount(e, i)
		}
		n := nums[i%len(nums)]
		ids = append(ids, e.request(n.RequestType, n.RequestNumber, n.SCAC))
	}
	for _, id := range ids {
		e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
	}
	select {
	case <-eng.Analyzed():
	case <-time.After(2 * time.Minute):
		t.Fatal("60 polls written and no analyze ended")
	}
	if dbtest.Citus(t) {
		return // nothing is analyzed there (db.AnalyzeUnanalyzed)
	}
	if got := stats(); got != 5 {
		t.Fatalf("%d of the 5 tracking tables with statistics after the analyze, want 5", got)
	}
}

// TestStartPollsDueAtOnce: an engine's first schedule round runs as it
// starts, not after River's leader election and its periodic enqueuer's
// stagger. Another process holds the leadership here for the whole test,
// so the periodic round (RunOnStart included) never runs in this one: a
// request due before the start is polled by the round the start inserted
// (without it the test waits for a round that never comes).
func TestStartPollsDueAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.store.SQL().Exec(`INSERT INTO river_leader (leader_id, elected_at, expires_at)
		VALUES ('elsewhere', now(), now() + interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	n := e.number("bill_of_lading", "tracked")
	id := e.request(n.RequestType, n.RequestNumber, n.SCAC)
	c := e.config()
	c.ScheduleEvery = time.Hour
	e.engine(c)
	if r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" }); r.Status != "created" {
		t.Fatalf("request %+v, want created", r)
	}
	if got := e.count(`SELECT count(*) FROM river_leader WHERE leader_id = 'elsewhere'`); got != 1 {
		t.Fatalf("the leadership moved (%d rows of the other process): the periodic round may have polled", got)
	}
	if got := e.count(`SELECT count(*) FROM river_job WHERE kind = 'tracking_schedule'`); got != 1 {
		t.Fatalf("%d schedule rounds, want the start's one", got)
	}
}
