package tracking_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"shipgraph/carrier/sim"
)

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
	c.PollTimeout, c.RescueAfter = time.Second, 2*time.Second
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
