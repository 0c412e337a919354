package tracking_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"shipgraph/carrier/sim"
	"shipgraph/db"
)

// The numbers of docs/tracking.md: go test -run '^$' -bench . ./carrier/tracking/
// (the simulator runs in the same process over loopback HTTP; its CPU
// counts in the per-core figures).

func primaryStatements(b testing.TB) float64 {
	var m dto.Metric
	if err := db.QueriesTotal.WithLabelValues("primary").Write(&m); err != nil {
		b.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// pgCPU is the CPU time (user and system) the PostgreSQL server has used so
// far: its postmaster's own and its ended backends' (reaped), and its live
// processes'. ok is false when the server is not a process of this machine
// that /proc shows (its postmaster found from a backend's parent).
func pgCPU(e *env) (seconds float64, ok bool) {
	var pid int
	if err := e.store.SQL().QueryRow(`SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		return 0, false
	}
	stat := func(pid string) []string {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return nil
		}
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i > 0 && strings.Contains(s[:i], "(postgres") {
			return strings.Fields(s[i+2:]) // from the state: ppid [1], utime [11], stime [12], cutime [13], cstime [14]
		}
		return nil
	}
	ticks := func(f []string, from, to int) float64 {
		var t float64
		for i := from; i <= to && i < len(f); i++ {
			v, _ := strconv.ParseFloat(f[i], 64)
			t += v
		}
		return t
	}
	be := stat(strconv.Itoa(pid))
	if be == nil {
		return 0, false
	}
	pm := be[1]
	f := stat(pm)
	if f == nil {
		return 0, false
	}
	t := ticks(f, 11, 14)
	kids, _ := filepath.Glob("/proc/" + pm + "/task/*/children")
	for _, k := range kids {
		b, _ := os.ReadFile(k)
		for _, c := range strings.Fields(string(b)) {
			t += ticks(stat(c), 11, 12)
		}
	}
	return t / 100, true // USER_HZ: 100 on Linux
}

// tracked are the simulator's tracked bills of lading.
func tracked(e *env) []sim.Number {
	var out []sim.Number
	for _, n := range e.sim.Numbers() {
		if n.State == "tracked" && n.RequestType == "bill_of_lading" {
			out = append(out, n)
		}
	}
	return out
}

// newAccount adds an account (a number is tracked once per account).
func newAccount(e *env, i int) string {
	var id string
	if err := e.store.SQL().QueryRow(`INSERT INTO accounts (slug, company_name) VALUES ('bench-' || gen_random_uuid(), 'B')
		RETURNING id`).Scan(&id); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// BenchmarkRequestToCreated: a request inserted (as POST
// /v2/tracking_requests does) and its poll enqueued in a transaction,
// until the request is created with its shipment: p50 and p99.
func BenchmarkRequestToCreated(b *testing.B) {
	e := newEnv(b)
	eng := e.engine(e.config())
	nums := tracked(e)
	ctx := context.Background()
	var lat, seen []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e.acct = newAccount(e, i)
		n := nums[i%len(nums)]
		b.StartTimer()
		start := time.Now()
		id := e.request(n.RequestType, n.RequestNumber, n.SCAC)
		if err := enqueuePoll(ctx, eng, e.store, e.acct, id); err != nil {
			b.Fatal(err)
		}
		r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
		seen = append(seen, time.Since(start))
		if r.ShipmentID == nil {
			b.Fatalf("request %+v", r)
		}
		// When the poll's transaction wrote created, by the database's
		// clock: River's completion notice (which the wait above rides)
		// comes up to a flush interval later.
		var ms float64
		if err := e.store.SQL().QueryRow(`SELECT extract(epoch FROM updated_at - created_at) * 1000 FROM tracking_requests
			WHERE id = $1`, id).Scan(&ms); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Duration(ms*float64(time.Millisecond)))
	}
	b.StopTimer()
	for _, d := range []struct {
		name string
		v    []time.Duration
	}{{"created", lat}, {"seen", seen}} {
		slices.Sort(d.v)
		b.ReportMetric(float64(d.v[len(d.v)/2].Microseconds())/1000, d.name+"-p50-ms")
		b.ReportMetric(float64(d.v[min(len(d.v)-1, len(d.v)*99/100)].Microseconds())/1000, d.name+"-p99-ms")
	}
}

// BenchmarkPollThroughput: b.N requests due at once, polled by one
// engine: polls and events a second, per CPU second, and the store's
// statements per poll.
func BenchmarkPollThroughput(b *testing.B) {
	b.Run("one-account", func(b *testing.B) { pollThroughput(b, 1<<30) })
	b.Run("account-per-request", func(b *testing.B) { pollThroughput(b, 1) })
}

// pollThroughput runs b.N requests, perAccount to an account (at most one
// per tracked number).
func pollThroughput(b *testing.B, perAccount int) {
	e := newEnv(b)
	nums := tracked(e)
	perAccount = min(perAccount, len(nums))
	var ids []string
	for i := 0; i < b.N; i++ {
		if i%perAccount == 0 {
			e.acct = newAccount(e, i)
		}
		n := nums[i%len(nums)]
		ids = append(ids, e.request(n.RequestType, n.RequestNumber, n.SCAC))
	}
	stmts, cpu := primaryStatements(b), cpuSeconds()
	pg0, pgOK := pgCPU(e)
	b.ResetTimer()
	start := time.Now()
	c := e.config()
	for i := range c.Carriers {
		c.Carriers[i].RatePerMinute, c.Carriers[i].Concurrency = 0, 0 // the engine's cost, not the carriers' limits
	}
	e.engine(c)
	for _, id := range ids {
		e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
	}
	elapsed := time.Since(start)
	b.StopTimer()
	var events int
	if err := e.store.SQL().QueryRow(`SELECT count(*) FROM raw_events`).Scan(&events); err != nil {
		b.Fatal(err)
	}
	used := cpuSeconds() - cpu
	if pg1, ok := pgCPU(e); ok && pgOK {
		// The server's CPU for the polls (River's statements included, the
		// requests' set-up not): meaningful only when nothing else uses it.
		b.ReportMetric((pg1-pg0)*1000/float64(b.N), "pg-cpu-ms/poll")
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "polls/s")
	b.ReportMetric(float64(events)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(b.N)/used, "polls/cpu-s")
	b.ReportMetric(float64(events)/used, "events/cpu-s")
	b.ReportMetric((primaryStatements(b)-stmts)/float64(b.N), "stmts/poll")
}
