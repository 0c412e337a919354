package tracking

import (
	"fmt"
	"slices"
	"testing"
)

// queue fills l with n polls of each account.
func (l *lanes) queue(n int, accounts ...string) {
	if l.queued == nil {
		l.queued, l.held = map[string][]*waiting{}, map[string]bool{}
	}
	for _, a := range accounts {
		if len(l.queued[a]) == 0 {
			l.order = append(l.order, a)
		}
		for range n {
			l.queued[a] = append(l.queued[a], &waiting{a: &applied{Poll: Poll{AccountID: a}}})
		}
	}
}

func shape(batch []group) string {
	var out []string
	for _, g := range batch {
		out = append(out, fmt.Sprintf("%s:%d", g.account, len(g.ws)))
	}
	return fmt.Sprint(out)
}

// TestLanesTake: a batch takes the accounts no lane holds, longest
// waiting first, up to maxBatch polls, sorted by account; without
// grouping one account; what is left stays queued in its order.
func TestLanesTake(t *testing.T) {
	var l lanes
	l.queue(1, "c", "a")
	l.queue(maxBatch, "b")
	l.queue(2, "d")
	l.held["a"] = true
	if got, want := shape(l.take(true)), "[b:31 c:1]"; got != want {
		t.Fatalf("first batch %s, want %s", got, want)
	}
	if !l.held["b"] || !l.held["c"] || !slices.Equal(l.order, []string{"a", "b", "d"}) {
		t.Fatalf("held %v, order %v", l.held, l.order)
	}
	if got := shape(l.take(true)); got != "[d:2]" {
		t.Fatalf("second batch %s, want [d:2]: a and b are held", got)
	}
	delete(l.held, "a")
	delete(l.held, "b")
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
