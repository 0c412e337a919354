package tracking

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"shipgraph/db"
	"shipgraph/testkit/pg"
)

// queue fills l with n polls of each account's first queue.
func (l *lanes) queue(n int, accounts ...string) {
	if l.queued == nil {
		l.queued, l.held = map[lane][]*waiting{}, map[lane]bool{}
	}
	for _, a := range accounts {
		k := lane{account: a}
		if len(l.queued[k]) == 0 {
			l.order = append(l.order, k)
		}
		for range n {
			l.queued[k] = append(l.queued[k], &waiting{a: &applied{Poll: Poll{AccountID: a}}})
		}
	}
}

func (l *lanes) free(accounts ...string) {
	for _, a := range accounts {
		delete(l.held, lane{account: a})
	}
}

func shape(batch []group, _ []lane) string {
	var out []string
	for _, g := range batch {
		out = append(out, fmt.Sprintf("%s:%d", g.account, len(g.ws)))
	}
	return fmt.Sprint(out)
}

// TestLanesTake: a batch takes the queues no writer holds, longest
// waiting first, up to maxBatch polls, one group per account sorted by
// account; without grouping one queue; what is left stays queued in its
// order.
func TestLanesTake(t *testing.T) {
	var l lanes
	l.queue(1, "c", "a")
	l.queue(maxBatch, "b")
	l.queue(2, "d")
	l.held[lane{account: "a"}] = true
	l.queued[lane{account: "a", n: 1}] = []*waiting{{a: &applied{}}}
	l.order = append(l.order, lane{account: "a", n: 1})
	if got, want := shape(l.take(true)), "[b:31 c:1]"; got != want {
		t.Fatalf("first batch %s, want %s", got, want)
	}
	want := []lane{{account: "a"}, {account: "b"}, {account: "d"}, {account: "a", n: 1}}
	if !l.held[lane{account: "b"}] || !l.held[lane{account: "c"}] || !slices.Equal(l.order, want) {
		t.Fatalf("held %v, order %v", l.held, l.order)
	}
	if got := shape(l.take(true)); got != "[a:1 d:2]" {
		t.Fatalf("second batch %s, want [a:1 d:2]: a's first queue and b are held", got)
	}
	l.free("a", "b", "d")
	delete(l.held, lane{account: "a", n: 1})
	if got := shape(l.take(false)); got != "[a:1]" {
		t.Fatalf("without grouping %s, want [a:1]", got)
	}
	if got := shape(l.take(false)); got != "[b:1]" {
		t.Fatalf("without grouping %s, want [b:1]", got)
	}
	if got := shape(l.take(true)); got != "[]" || len(l.order) != 0 || len(l.queued) != 0 {
		t.Fatalf("left %s, order %v, queued %v", got, l.order, l.queued)
	}
}

// TestVesselsWrittenOneAtATime: batches written at once (on Citus one
// transaction per queue, as many at once as queues have polls) that name
// the same new vessels send one vessel statement between them, not one
// each: two vessel statements at once deadlocked on Citus (40P01, the
// reference table's shard lock taken for the insert and then, stronger,
// for the update), failing both batches' polls. Not parallel: it counts
// the process' statements.
func TestVesselsWrittenOneAtATime(t *testing.T) {
	d := pg.New(t, 0)
	polls := []*applied{{Poll: Poll{Shipment: &db.PolledShipment{}, Vessels: []db.PolledVessel{
		{IMO: "9300001", Name: "ONE"}, {IMO: "9300002", Name: "TWO"}}}}}
	statements := func() float64 {
		var m dto.Metric
		if err := db.QueriesTotal.WithLabelValues("primary").Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetCounter().GetValue()
	}
	var v vessels
	before := statements()
	const batches = 8
	errs := make(chan error, batches)
	var wg sync.WaitGroup
	for range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- v.write(context.Background(), d.Store, polls)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := statements() - before; got != 1 {
		t.Errorf("%d batches naming the same new vessels sent %.0f statements, want 1", batches, got)
	}
}

// TestLanesTakeOneQueueAnAccount: a batch takes one of an account's
// queues, and leaves the other to another writer (takeable), so that one
// account's polls are written by two transactions side by side; taken
// together they were one transaction, one batch after another.
func TestLanesTakeOneQueueAnAccount(t *testing.T) {
	var l lanes
	l.queue(3, "x", "y")
	l.queued[lane{account: "x", n: 1}] = []*waiting{{a: &applied{}}, {a: &applied{}}}
	l.order = append(l.order, lane{account: "x", n: 1})
	if got, want := shape(l.take(true)), "[x:3 y:3]"; got != want {
		t.Fatalf("first batch %s, want %s", got, want)
	}
	if !l.takeable() {
		t.Fatal("x's second queue is left to no writer")
	}
	if got, want := shape(l.take(true)), "[x:2]"; got != want {
		t.Fatalf("second batch %s, want %s (x's second queue)", got, want)
	}
	if l.takeable() {
		t.Fatalf("nothing is left, yet takeable: order %v", l.order)
	}
}
