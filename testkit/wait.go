package testkit

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Feed collects what arrives (deliveries, events, log records) from other
// goroutines and lets a test wait for an item, with a deadline whose
// failure shows what was seen.
type Feed[T any] struct {
	mu     sync.Mutex
	items  []T
	signal chan struct{}
}

// NewFeed returns an empty feed.
func NewFeed[T any]() *Feed[T] { return &Feed[T]{signal: make(chan struct{}, 1)} }

// Add appends x and wakes a waiter.
func (f *Feed[T]) Add(x T) {
	f.mu.Lock()
	f.items = append(f.items, x)
	f.mu.Unlock()
	select {
	case f.signal <- struct{}{}:
	default:
	}
}

// All is a copy of the items so far.
func (f *Feed[T]) All() []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.items)
}

// WaitFor waits up to d for an item matching, and says whether one came.
func (f *Feed[T]) WaitFor(d time.Duration, match func(T) bool) (T, bool) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		for _, x := range f.All() {
			if match(x) {
				return x, true
			}
		}
		select {
		case <-f.signal:
		case <-deadline.C:
			var zero T
			return zero, false
		}
	}
}

// WaitN waits up to d for at least n items and returns them all, and
// whether n came.
func (f *Feed[T]) WaitN(d time.Duration, n int) ([]T, bool) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		if items := f.All(); len(items) >= n {
			return items, true
		}
		select {
		case <-f.signal:
		case <-deadline.C:
			items := f.All()
			return items, len(items) >= n
		}
	}
}

// Wait is WaitFor that fails tb, showing the last items seen.
func (f *Feed[T]) Wait(tb testing.TB, d time.Duration, what string, match func(T) bool) T {
	tb.Helper()
	x, ok := f.WaitFor(d, match)
	if !ok {
		items := f.All()
		var last []string
		for _, x := range items[max(0, len(items)-20):] {
			last = append(last, fmt.Sprint(x))
		}
		tb.Fatalf("%s: not within %s; %d seen, the last:\n%s", what, d, len(items), strings.Join(last, "\n"))
	}
	return x
}

// WaitFor polls cond every few milliseconds until it holds, failing tb
// after timeout, and returns how long it took.
func WaitFor(tb testing.TB, timeout time.Duration, what string, cond func() bool) time.Duration {
	tb.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			tb.Fatalf("waited %v for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// Recv receives from ch, failing tb, naming what, when nothing comes
// within timeout or ch is closed.
func Recv[T any](tb testing.TB, ch <-chan T, timeout time.Duration, what string) T {
	tb.Helper()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case x, ok := <-ch:
		if !ok {
			tb.Fatalf("%s: the channel closed", what)
		}
		return x
	case <-t.C:
		tb.Fatalf("waited %v for %s", timeout, what)
	}
	var zero T
	return zero
}

// QueriesTotal scrapes shipgraph_db_queries_total the way Prometheus
// does, from the /metrics handler of the server: the statements sent to
// every target (primary and replicas).
func QueriesTotal(tb testing.TB) float64 {
	tb.Helper()
	return QueriesOn(tb, "")
}

// QueriesOn scrapes shipgraph_db_queries_total{target=target} ("primary"
// or "replica"; "" sums every target).
func QueriesOn(tb testing.TB, target string) float64 {
	tb.Helper()
	rec := httptest.NewRecorder()
	promhttp.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	sc := bufio.NewScanner(rec.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sum, found := 0.0, false
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "shipgraph_db_queries_total{")
		if !ok {
			continue
		}
		labels, v, ok := strings.Cut(rest, "} ")
		if !ok || (target != "" && !strings.Contains(labels, `target="`+target+`"`)) {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			tb.Fatalf("shipgraph_db_queries_total %q: %v", v, err)
		}
		sum, found = sum+f, true
	}
	if !found {
		tb.Fatalf("shipgraph_db_queries_total{target=%q} is not exported on /metrics", target)
	}
	return sum
}

// Metric is the value of a counter or gauge of the default registry whose
// series has every label pair of labels (name, value, name, value …); 0
// when there is none.
func Metric(tb testing.TB, name string, labels ...string) float64 {
	tb.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					found = found || lp.GetName() == labels[i] && lp.GetValue() == labels[i+1]
				}
				if !found {
					continue series
				}
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// WaitMetric waits until the metric (as Metric reads it) satisfies ok,
// failing tb after timeout with its last value, and returns the value.
func WaitMetric(tb testing.TB, timeout time.Duration, name string, ok func(float64) bool, labels ...string) float64 {
	tb.Helper()
	start := time.Now()
	for {
		v := Metric(tb, name, labels...)
		if ok(v) {
			return v
		}
		if time.Since(start) > timeout {
			tb.Fatalf("waited %v for %s%v; it is %v", timeout, name, labels, v)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// WantSelection checks a column selection (type → columns, as
// load.Fields.Selection gives it): each type of want narrowed to exactly
// its columns, in any order, and each type of whole not narrowed (read
// whole).
func WantSelection(tb testing.TB, sel, want map[string][]string, whole ...string) {
	tb.Helper()
	for typ, cols := range want {
		got := slices.Clone(sel[typ])
		slices.Sort(got)
		if !slices.Equal(got, cols) {
			tb.Errorf("%s: columns %v, want %v", typ, got, cols)
		}
	}
	for _, typ := range whole {
		if _, ok := sel[typ]; ok {
			tb.Errorf("%s is narrowed to %v; want it read whole", typ, sel[typ])
		}
	}
}
