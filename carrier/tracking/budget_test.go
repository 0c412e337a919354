package tracking_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"shipgraph/testkit/budgets"
)

// Statement budgets of polls, as counted by shipgraph_db_queries_total on
// the primary (River's own statements go through its driver and are not
// counted there). A poll reads its request, then its account's polls that
// finish together are written in one transaction (apply.go): BEGIN, one
// statement for the whole batch after the requests' lock (db.ApplyPolls: their
// shipments, containers, events, stop facts, statuses and schedule) and
// COMMIT; the vessels this process has not written yet go before, on
// their own, and a shipment whose port of discharge or ETA moves, or a
// stop, takes one more. A poll alone costs all of them; polls that finish
// together share them (the goal, issue 37: ≤ 5 a poll).
// The budgets are testkit/budgets' (docs/scale.md's table).
var (
	singlePollBudget   = float64(budgets.Max("lone poll"))
	repeatedPollBudget = float64(budgets.Max("lone repeated poll"))
	batchedPollBudget  = float64(budgets.Max("polls together"))
)

const batchedPolls = 30

// TestPollStatementBudget is not parallel: the counter is the process'
// own, so nothing else may poll while it counts. The schedule is slowed
// so that only the polls enqueued here run, and its one round at start-up
// (the engine's start inserts it; the leader's periodic round comes only
// ScheduleEvery later) has ended before anything is counted: its
// statements would otherwise land in whichever poll it overlaps.
func TestPollStatementBudget(t *testing.T) {
	e := newEnv(t)
	c := e.config()
	c.ScheduleEvery = time.Hour
	for i := range c.Carriers {
		c.Carriers[i].RatePerMinute, c.Carriers[i].Concurrency = 0, 0
	}
	eng, j := newEngine(t, c, e.store)
	ended, cancel, err := j.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	e.start(eng, j)
	for scheduled := false; !scheduled; {
		select {
		case ev := <-ended:
			scheduled = ev.Job.Kind == "tracking_schedule"
		case <-time.After(60 * time.Second):
			t.Fatal("the schedule's round at start-up never ended")
		}
	}
	insert := func(number, typ, scac string) string {
		var id string
		if err := e.store.SQL().QueryRow(`INSERT INTO tracking_requests (account_id, request_type, request_number, scac)
			VALUES ($1, $2, $3, $4) RETURNING id`, e.acct, typ, number, scac).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	// poll enqueues the polls of ids in one transaction and returns the
	// statements a poll took, on average.
	poll := func(what string, ids ...string) float64 {
		t.Helper()
		before := primaryStatements(t)
		tx, err := e.store.SQL().BeginTx(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if err := eng.EnqueuePollTx(context.Background(), tx, e.acct, id); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			select {
			case s := <-e.ch(id):
				if s != rivertype.JobStateCompleted {
					t.Fatalf("%s: poll of %s ended %s", what, id, s)
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("%s: no poll of %s ended", what, id)
			}
		}
		got := (primaryStatements(t) - before) / float64(len(ids))
		t.Logf("%s: %.2f statements a poll (%d polls)", what, got, len(ids))
		return got
	}
	n := e.number("bill_of_lading", "tracked")
	id := insert(n.RequestNumber, n.RequestType, n.SCAC)
	if got := poll("first poll", id); got > singlePollBudget {
		t.Errorf("first poll: %.0f statements, budget %.0f", got, singlePollBudget)
	}
	if r := e.row(id); r.Status != "created" {
		t.Fatalf("request %+v, want created", r)
	}
	if got := poll("repeated poll", id); got > repeatedPollBudget {
		t.Errorf("repeated poll: %.0f statements, budget %.0f", got, repeatedPollBudget)
	}

	// Many polls of one account at once: they share their transactions.
	var ids []string
	for _, n := range tracked(e) {
		if n.RequestNumber != e.number("bill_of_lading", "tracked").RequestNumber && len(ids) < batchedPolls {
			ids = append(ids, insert(n.RequestNumber, n.RequestType, n.SCAC))
		}
	}
	if len(ids) < batchedPolls {
		t.Fatalf("%d tracked numbers in the simulator, want %d", len(ids), batchedPolls)
	}
	if got := poll("first polls together", ids...); got > batchedPollBudget {
		t.Errorf("first polls together: %.2f statements a poll, budget %.0f", got, batchedPollBudget)
	}
	for _, id := range ids {
		if r := e.row(id); r.Status != "created" && r.Status != "tracking_stopped" {
			t.Fatalf("request %+v, want created or tracking_stopped", r)
		}
	}
	if got := poll("repeated polls together", ids...); got > batchedPollBudget {
		t.Errorf("repeated polls together: %.2f statements a poll, budget %.0f", got, batchedPollBudget)
	}
}
