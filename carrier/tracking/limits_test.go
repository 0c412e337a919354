package tracking_test

import (
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"shipgraph/carrier/tracking"
)

// TestCarrierRateWaitedInPlace: a poll whose carrier's rate frees within
// a second waits for it in its worker instead of being snoozed (a River
// round trip, the request read again, and a second's delay). A carrier
// limited to 60 requests a minute (bursts of 6) gets 7 requests at once:
// the seventh's turn comes within a second, so every poll completes
// without a snooze, and the carrier never saw more than its rate allows.
func TestCarrierRateWaitedInPlace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const scac = "MSCU"
	c := e.config()
	for i := range c.Carriers {
		if c.Carriers[i].SCAC == scac {
			c.Carriers[i].RatePerMinute, c.Carriers[i].Concurrency = 60, 0
		}
	}
	var ids []string
	for _, n := range e.sim.Numbers() {
		if n.SCAC == scac && n.State == "tracked" && len(ids) < 7 {
			ids = append(ids, e.request(n.RequestType, n.RequestNumber, n.SCAC))
		}
	}
	if len(ids) < 7 {
		t.Fatalf("the simulator knows %d tracked numbers of %s, want 7", len(ids), scac)
	}
	eng, j := newEngine(t, c, e.store)
	ended := make(chan rivertype.JobState, 100)
	stop, err := eng.OnPolled(func(_ tracking.PollArgs, s rivertype.JobState) { ended <- s })
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
	deadline := time.After(30 * time.Second)
	for done := 0; done < len(ids); {
		select {
		case s := <-ended:
			if s != rivertype.JobStateCompleted {
				t.Fatalf("a poll ended %s, want every one completed without a snooze", s)
			}
			done++
		case <-deadline:
			t.Fatalf("%d of %d polls reported completed", done, len(ids))
		}
	}
	stop()
}

// TestCarrierTurnsKeptOverSnooze: polls refused by their carrier's rate
// for longer than a worker waits are snoozed until their turn, which
// they keep, so each is snoozed once: 12 requests of a carrier limited to
// 60 a minute (bursts of 6) all settle, and no poll is snoozed twice.
// Without the turns every refused poll came back together with the
// others and most were refused again.
func TestCarrierTurnsKeptOverSnooze(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const scac = "CMDU"
	c := e.config()
	for i := range c.Carriers {
		if c.Carriers[i].SCAC == scac {
			c.Carriers[i].RatePerMinute, c.Carriers[i].Concurrency = 60, 0
		}
	}
	var ids []string
	for _, n := range e.sim.Numbers() {
		if n.SCAC == scac && n.State == "tracked" && len(ids) < 12 {
			ids = append(ids, e.request(n.RequestType, n.RequestNumber, n.SCAC))
		}
	}
	if len(ids) < 12 {
		t.Fatalf("the simulator knows %d tracked numbers of %s, want 12", len(ids), scac)
	}
	eng, j := newEngine(t, c, e.store)
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
	deadline := time.After(60 * time.Second)
	for done := 0; done < len(ids); {
		select {
		case x := <-ended:
			if x.s == rivertype.JobStateCompleted {
				done++
				continue
			}
			if snoozed[x.id]++; snoozed[x.id] > 1 {
				t.Fatalf("request %s's poll snoozed %d times, want at most once (its turn kept)", x.id, snoozed[x.id])
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
