package tracking_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"shipgraph/carrier/sim"
	"shipgraph/carrier/tracking"
	"shipgraph/sharedlimit"
	"shipgraph/testkit/redistest"
)

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
