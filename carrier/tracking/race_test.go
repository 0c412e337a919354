package tracking_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lib/pq"
	"shipgraph/carrier/sim"
	"shipgraph/carrier/tracking"
	"shipgraph/sharedlimit"
	"shipgraph/testkit/pg"
	"shipgraph/testkit/redistest"
)

// shipmentNumbers groups the simulator's tracked numbers by shipment: each
// group is a bill of lading, its booking number and its containers, all of
// which name one shipment.
func shipmentNumbers(s *sim.Sim) [][]sim.Number {
	var out [][]sim.Number
	for _, n := range s.Numbers() {
		if n.State != "tracked" {
			continue
		}
		if n.RequestType == "bill_of_lading" {
			out = append(out, nil)
		}
		if len(out) > 0 {
			out[len(out)-1] = append(out[len(out)-1], n)
		}
	}
	return out
}

// TestRacingPollsMakeOneShipment: every request naming one shipment (its
// bill of lading, its booking number and each of its containers) is
// created in one statement, so that the first polls of all of them run at
// the same moment on two engines. Each shipment is stored once, every
// request of it points at that one, and its containers and events are
// stored once.
func TestRacingPollsMakeOneShipment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.engine(e.config())
	e.engine(e.config())
	groups := shipmentNumbers(e.sim)
	if len(groups) > 24 {
		groups = groups[:24]
	}
	var typ, num, scac []string
	for _, g := range groups {
		for _, n := range g {
			typ, num, scac = append(typ, n.RequestType), append(num, n.RequestNumber), append(scac, n.SCAC)
		}
	}
	ids := pg.Column[string](t, e.store.SQL(), `INSERT INTO tracking_requests (account_id, request_type, request_number, scac, next_poll_at)
		SELECT $1, u.t, u.n, u.s, now() FROM unnest($2::text[], $3::text[], $4::text[]) AS u(t, n, s) RETURNING id`,
		e.acct, pq.StringArray(typ), pq.StringArray(num), pq.StringArray(scac))
	if len(ids) != len(num) || len(groups) < 10 {
		t.Fatalf("%d requests of %d shipments", len(ids), len(groups))
	}
	for _, id := range ids {
		if r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" }); r.ShipmentID == nil {
			t.Fatalf("request %s: %+v, want tracked", id, r)
		}
	}
	if got := e.count(`SELECT count(*) FROM (SELECT 1 FROM shipments WHERE account_id = $1
		GROUP BY shipping_line_scac, upper(normalized_number) HAVING count(*) > 1) d`, e.acct); got != 0 {
		t.Errorf("%d shipments doubled", got)
	}
	if got := e.count(`SELECT count(*) FROM shipments WHERE account_id = $1`, e.acct); got != len(groups) {
		t.Errorf("%d shipments stored for %d", got, len(groups))
	}
	i := 0
	for _, g := range groups {
		first := e.row(ids[i])
		for range g {
			if r := e.row(ids[i]); *r.ShipmentID != *first.ShipmentID {
				t.Errorf("request %s (%s): shipment %s, its bill of lading's is %s", ids[i], num[i], *r.ShipmentID, *first.ShipmentID)
			}
			i++
		}
	}
	if got := e.count(`SELECT count(*) FROM (SELECT 1 FROM containers WHERE account_id = $1
		GROUP BY shipment_id, number HAVING count(*) > 1) d`, e.acct); got != 0 {
		t.Errorf("%d containers doubled", got)
	}
	if got := e.count(`SELECT count(*) FROM (SELECT 1 FROM raw_events r JOIN containers c ON c.account_id = r.account_id AND c.id = r.container_id
		WHERE r.account_id = $1 GROUP BY c.shipment_id, c.number, r.carrier_event_id HAVING count(*) > 1) d`, e.acct); got != 0 {
		t.Errorf("%d events doubled", got)
	}
	if got := e.count(`SELECT count(*) FROM raw_events r WHERE r.account_id = $1
		AND NOT EXISTS (SELECT 1 FROM containers c WHERE c.account_id = r.account_id AND c.id = r.container_id AND c.shipment_id = r.shipment_id)`, e.acct); got != 0 {
		t.Errorf("%d events on another shipment than their container's", got)
	}
}

// TestEstimatesStoredOnce: a carrier that publishes one estimate (same
// event, time and place) again, under another event id, in one answer or
// a later one, gives the container one transport event for it; the raw
// events keep every publication.
func TestEstimatesStoredOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng := e.engine(e.config())
	ids := e.requestTracked("bill_of_lading", 12)
	for _, id := range ids {
		e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
	}
	for range 3 {
		e.advance(2 * 24 * time.Hour)
		e.repoll(eng, ids...)
	}
	repeated := `SELECT count(*) FROM raw_events WHERE account_id = $1 AND estimated
		AND (container_id, event, event_at, location_locode) IN (SELECT container_id, event, event_at, location_locode
			FROM raw_events WHERE account_id = $1 AND estimated GROUP BY 1, 2, 3, 4 HAVING count(*) > 1)`
	if e.count(repeated, e.acct) == 0 {
		t.Fatal("the simulator repeated no estimate: nothing tested")
	}
	if got := e.count(`SELECT count(*) FROM (SELECT 1 FROM transport_events WHERE account_id = $1 AND event LIKE 'container.transport.estimated.%'
		GROUP BY container_id, event, event_at, location_locode HAVING count(*) > 1) d`, e.acct); got != 0 {
		t.Errorf("%d estimates stored more than once as transport events", got)
	}
}

// A process killed (SIGKILL) in the middle of a poll loses nothing and
// doubles nothing: the job it held is rescued by the next process's River
// (RescueAfter), the poll runs again and writes each event once.
func TestKilledMidPoll(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := e.number("bill_of_lading", "tracked")
	// The carrier answers this number only after a minute: the child is
	// mid-poll (its job running, its request locked by nobody yet) when
	// it dies.
	e.faults(sim.Fault{SCAC: n.SCAC, Number: n.RequestNumber, Mode: sim.FaultSlow, Delay: sim.Duration(time.Minute)})
	id := e.request(n.RequestType, n.RequestNumber, n.SCAC)

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"="+e.dbURL+" "+e.url)
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	// Wait for the child's poll to be running (River's row).
	deadline := time.Now().Add(30 * time.Second)
	for e.count(`SELECT count(*) FROM river_job WHERE kind = 'tracking_poll' AND state = 'running' AND args->>'request_id' = $1`, id) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the child never started the poll")
		}
		waitRow(e)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if r := e.row(id); r.Status != "pending" {
		t.Fatalf("after the kill: %+v, want still pending", r)
	}

	// A new process: the carrier answers again; the dead poll is rescued.
	e.faults()
	c := e.config()
	c.PollTimeout, c.RescueAfter = 5*time.Second, 6*time.Second
	e.engine(c)
	r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
	if r.ShipmentID == nil {
		t.Fatalf("after the restart: %+v, want tracked", r)
	}
	if got := e.count(`SELECT count(*) FROM (SELECT container_id, carrier_event_id FROM raw_events WHERE account_id = $1
		GROUP BY 1, 2 HAVING count(*) > 1) d`, e.acct); got != 0 {
		t.Fatalf("%d events doubled", got)
	}
	if got := e.count(`SELECT count(*) FROM raw_events WHERE account_id = $1`, e.acct); got == 0 {
		t.Fatal("no events after the restart")
	}
}

// waitRow waits a moment for a row another process writes (the child's:
// no channel reaches across processes).
func waitRow(e *env) {
	select {
	case <-time.After(20 * time.Millisecond):
	case <-e.t.Context().Done():
	}
}

// TestCarrierConcurrencySharedOverInstances: a carrier's concurrency limit
// holds over every instance through Redis. Two engines (two instances on
// one database, each with its own connection to a real redis-server) poll
// six requests of one slow carrier whose CARRIER_<SCAC>_CONCURRENCY is 1:
// the carrier never sees two requests at once, and every request settles.
// Each engine alone would allow one: without the shared limit the two
// together reach two.
func TestCarrierConcurrencySharedOverInstances(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	redis := redistest.Start(t)
	const scac = "MAEU"
	e.faults(sim.Fault{SCAC: scac, Mode: "slow", Delay: sim.Duration(150 * time.Millisecond)})
	var inFlight, most, seen atomic.Int64
	counted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/"+scac+"/v2/events") {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			seen.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
		}
		// The simulator's own handler answers (slowly, as faulted).
		proxy, _ := http.NewRequestWithContext(r.Context(), r.Method, e.url+r.URL.RequestURI(), nil)
		proxy.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(proxy)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			_, _ = w.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(counted.Close)

	c := e.config()
	for i := range c.Carriers {
		if c.Carriers[i].SCAC == scac {
			c.Carriers[i].BaseURL = counted.URL + "/" + scac
			c.Carriers[i].Concurrency = 1
			c.Carriers[i].RatePerMinute = 0
		}
	}
	for range 2 {
		limits, err := sharedlimit.Open(redis.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(limits.Close)
		e.start(newEngine(t, c, e.store, tracking.WithShared(limits)))
	}
	var ids []string
	for _, n := range e.sim.Numbers() {
		if n.SCAC == scac && n.State == "tracked" && n.RequestType == "bill_of_lading" && len(ids) < 6 {
			ids = append(ids, e.request(n.RequestType, n.RequestNumber, n.SCAC))
		}
	}
	if len(ids) < 2 {
		t.Fatalf("the simulator knows %d bills of lading of %s", len(ids), scac)
	}
	for _, id := range ids {
		if r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" }); r.ShipmentID == nil {
			t.Errorf("request %s: %+v, want its shipment", id, r)
		}
	}
	if got := most.Load(); got != 1 {
		t.Errorf("the carrier saw %d requests at once over the two instances, want 1 (CONCURRENCY=1 shared)", got)
	}
	t.Logf("%d carrier requests for %d tracking requests, at most %d at once", seen.Load(), len(ids), most.Load())
}
