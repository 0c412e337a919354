package tracking_test

import (
	"context"
	"testing"
	"time"

	"shipgraph/testkit/budgets"
)

// Statement budgets of one poll, as counted by shipgraph_db_queries_total
// on the primary (River's own statements go through its driver and are
// not counted there): the read of the request, BEGIN, its lock, the
// shipment, customer, vessels, milestones, containers, events, stop
// rules, status, schedule (with the change log off and the shipment's
// poll times) and COMMIT; a first poll also marks the request created.
// The budgets are testkit/budgets' (docs/scale.md's table);
// docs/tracking.md has the goal (5) and what it would take.
var (
	firstPollBudget    = budgets.Max("first poll")
	repeatedPollBudget = budgets.Max("repeated poll")
)

// TestPollStatementBudget is not parallel: the counter is the process'
// own, so nothing else may poll while it counts. The schedule is slowed
// so that only the polls enqueued here run.
func TestPollStatementBudget(t *testing.T) {
	e := newEnv(t)
	c := e.config()
	c.ScheduleEvery = time.Hour
	eng := e.engine(c)
	n := e.number("bill_of_lading", "tracked")
	var id string
	if err := e.store.SQL().QueryRow(`INSERT INTO tracking_requests (account_id, request_type, request_number, scac)
		VALUES ($1, $2, $3, $4) RETURNING id`, e.acct, n.RequestType, n.RequestNumber, n.SCAC).Scan(&id); err != nil {
		t.Fatal(err)
	}
	poll := func(what string, budget int) {
		t.Helper()
		before := primaryStatements(t)
		tx, err := e.store.SQL().BeginTx(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.EnqueuePollTx(context.Background(), tx, e.acct, id); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-e.ch(id):
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no poll ended", what)
		}
		got := int(primaryStatements(t) - before)
		t.Logf("%s: %d statements", what, got)
		if got > budget {
			t.Errorf("%s: %d statements, budget %d", what, got, budget)
		}
	}
	poll("first poll", firstPollBudget)
	if r := e.row(id); r.Status != "created" {
		t.Fatalf("request %+v, want created", r)
	}
	poll("repeated poll", repeatedPollBudget)
}
