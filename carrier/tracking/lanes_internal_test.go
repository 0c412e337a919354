package tracking

import (
	"fmt"
	"slices"
	"testing"
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
