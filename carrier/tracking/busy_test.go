package tracking_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"shipgraph/carrier/sim"
	"shipgraph/carrier/tracking"
	"shipgraph/jobs"
)

// said sends each log message of a tracking engine on a channel.
type said chan string

func (s said) Enabled(context.Context, slog.Level) bool { return true }
func (s said) Handle(_ context.Context, r slog.Record) error {
	select {
	case s <- r.Message:
	default:
	}
	return nil
}
func (s said) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s said) WithGroup(string) slog.Handler      { return s }

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
	if _, err := hold.Exec(`SELECT 1 FROM tracking_requests WHERE id = $1 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}

	log := make(said, 100)
	j := jobs.New(e.store, jobsConfig(c))
	eng, err := tracking.New(c, e.store, j, slog.New(log))
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = j.Stop(ctx)
	})
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
		case m := <-log:
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
