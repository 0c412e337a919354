package tracking_test

import (
	"context"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"shipgraph/app"
	"shipgraph/carrier/sim"
	"shipgraph/carrier/tracking"
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

// servesGC gives the benchmark the collector serve runs (app.GCDefaults,
// which main calls first for every verb: GOGC=400 and a soft limit of
// 1 GiB unless the environment sets them), not go test's GOGC=100; the
// test binary's own settings come back after it.
func servesGC(b *testing.B) {
	gc, limit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(gc)
	app.GCDefaults()
	b.Cleanup(func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) })
}

// gcCPU is the runtime's estimate of the CPU seconds its collector has
// used (mark, assists, idle marking) and the collections completed. The
// estimate counts marking by wall time: on a loaded machine, where the
// marking thread waits for a core, it is high (the CPU profile is the
// figure then).
func gcCPU() (seconds float64, cycles uint64) {
	m := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(m)
	return m[0].Value.Float64(), m[1].Value.Uint64()
}

// goroutinesCreated is the goroutines the process has started (each one
// the scheduler runs, parks and ends at least once).
func goroutinesCreated() uint64 {
	m := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(m)
	return m[0].Value.Uint64()
}

// minorFaults is the process's page faults served without I/O: first
// touches of memory the heap grew into.
func minorFaults() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Minflt
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

// withShipments gives e a simulator of perCarrier shipments a carrier
// (the same seed and clock; the default is 12), so that one account can
// track as many numbers as a benchmark polls: an account tracks a number
// once.
func (e *env) withShipments(perCarrier int) {
	s, err := sim.New(sim.Options{Seed: 3, Shipments: perCarrier, Now: func() time.Time { return *e.clock.Load() }})
	if err != nil {
		e.t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	e.t.Cleanup(srv.Close)
	e.sim, e.url = s, srv.URL
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
	servesGC(b)
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

// pollThroughput runs b.N requests, perAccount to an account. An account
// tracks a number once, so the simulator is given enough tracked bills of
// lading for perAccount (with its default 72, "one account" of 300 polls
// was five accounts of 72 and 12 polls, written side by side).
func pollThroughput(b *testing.B, perAccount int) {
	servesGC(b)
	e := newEnv(b)
	perAccount = min(perAccount, b.N)
	if nums := tracked(e); len(nums) < perAccount {
		// Three of four shipments are tracked bills of lading.
		e.withShipments(perAccount*4/3/len(sim.DefaultSCACs) + 2)
	}
	nums := tracked(e)
	if len(nums) < perAccount {
		b.Fatalf("the simulator tracks %d bills of lading, %d wanted", len(nums), perAccount)
	}
	accounts := 0
	var ids []string
	for i := 0; i < b.N; i++ {
		if i%perAccount == 0 {
			e.acct = newAccount(e, i)
			accounts++
		}
		n := nums[i%len(nums)]
		ids = append(ids, e.request(n.RequestType, n.RequestNumber, n.SCAC))
	}
	stmts, cpu, steps, pgCPU := primaryStatements(b), cpuSeconds(), pipeline(b), postgresCPU()
	gcSeconds, gcCycles := gcCPU()
	goroutines, faults := goroutinesCreated(), minorFaults()
	b.ResetTimer()
	start := time.Now()
	var dbStart time.Time
	if err := e.store.SQL().QueryRow(`SELECT clock_timestamp()`).Scan(&dbStart); err != nil {
		b.Fatal(err)
	}
	c := e.config()
	for i := range c.Carriers {
		c.Carriers[i].RatePerMinute, c.Carriers[i].Concurrency = 0, 0 // the engine's cost, not the carriers' limits
	}
	// Production's schedule, not the tests' 50 ms: the b.N requests are due
	// before the engine starts, and its first round (run on start) claims
	// them all, ScheduleBatch at a time. A round every 50 ms only added a
	// River periodic job (inserted, fetched, run, completed) and an empty
	// claim about every poll, in both processes' CPU a poll.
	c.ScheduleEvery = tracking.Default.ScheduleEvery
	// BENCH_WORKERS sets the workers instead of TRACKING_WORKERS' default.
	if v, err := strconv.Atoi(os.Getenv("BENCH_WORKERS")); err == nil {
		c.Workers = v
	}
	// BENCH_WRITERS sets the write transactions at once (TRACKING_WRITERS).
	if v, err := strconv.Atoi(os.Getenv("BENCH_WRITERS")); err == nil {
		c.Writers = v
	}
	e.engine(c)
	// One deadline for all (not waitFor's 30 s a request): on a loaded
	// machine the last of b.N polls may run a minute after the first.
	deadline := time.After(10 * time.Minute)
	for _, id := range ids {
		for e.row(id).Status == "pending" {
			select {
			case <-e.ch(id):
			case <-deadline:
				b.Fatalf("request %s: still %+v", id, e.row(id))
			}
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	var events int
	if err := e.store.SQL().QueryRow(`SELECT count(*) FROM raw_events`).Scan(&events); err != nil {
		b.Fatal(err)
	}
	// The run's shape, by the database's clock: from the start to the
	// first write transaction (the engine's start, its first claim, the
	// workers' first polls), and the polls a second between the first and
	// the last write transaction's start (the steady state, without the
	// ramp and the last batch).
	var first, last time.Time
	var later int
	if err := e.store.SQL().QueryRow(`SELECT min(last_polled_at), max(last_polled_at),
		count(*) FILTER (WHERE last_polled_at > (SELECT min(last_polled_at) FROM tracking_requests WHERE id = ANY($1::uuid[])))
		FROM tracking_requests WHERE id = ANY($1::uuid[])`, pq.StringArray(ids)).Scan(&first, &last, &later); err != nil {
		b.Fatal(err)
	}
	used := cpuSeconds() - cpu
	gcAfter, cyclesAfter := gcCPU()
	// The collector's share of the Go process's CPU, and its collections a
	// hundred polls.
	b.ReportMetric(100*(gcAfter-gcSeconds)/used, "gc-cpu-%")
	b.ReportMetric(100*float64(cyclesAfter-gcCycles)/float64(b.N), "gcs/100polls")
	b.ReportMetric(float64(goroutinesCreated()-goroutines)/float64(b.N), "goroutines/poll")
	b.ReportMetric(float64(minorFaults()-faults)/float64(b.N), "faults/poll")
	if pgCPU > 0 {
		b.ReportMetric(1000*(postgresCPU()-pgCPU)/float64(b.N), "pg-cpu-ms/poll")
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "polls/s")
	b.ReportMetric(float64(events)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(b.N)/used, "polls/cpu-s")
	b.ReportMetric(float64(events)/used, "events/cpu-s")
	b.ReportMetric((primaryStatements(b)-stmts)/float64(b.N), "stmts/poll")
	after := pipeline(b)
	n := after["batches"] - steps["batches"]
	b.ReportMetric((after["polls"]-steps["polls"])/max(n, 1), "polls/batch")
	for _, s := range []string{"read", "fetch", "queue", "write"} {
		c := after[s+"#"] - steps[s+"#"]
		b.ReportMetric(1000*(after[s]-steps[s])/max(c, 1), s+"-ms")
	}
	b.ReportMetric(after["postponed"]-steps["postponed"], "snoozes")
	b.ReportMetric(float64(accounts), "accounts")
	b.ReportMetric(float64(first.Sub(dbStart).Milliseconds()), "ramp-ms")
	// Of the ramp, the engine's start to its first schedule round's run
	// (River's fetch of the job: attempted_at, the database's clock).
	var round time.Time
	if err := e.store.SQL().QueryRow(`SELECT min(attempted_at) FROM river_job WHERE kind = 'tracking_schedule'`).Scan(&round); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(round.Sub(dbStart).Milliseconds()), "round-ms")
	if d := last.Sub(first).Seconds(); d > 0 {
		b.ReportMetric(float64(later)/d, "steady-polls/s")
	}
	b.ReportMetric(float64(events)/float64(b.N), "events/poll")
}

// pipeline reads the engine's pipeline metrics (sums in seconds, counts
// with #): batches, polls batched, each step's time, postponed polls.
func pipeline(b testing.TB) map[string]float64 {
	out := map[string]float64{}
	var m dto.Metric
	if err := tracking.BatchPolls.Write(&m); err != nil {
		b.Fatal(err)
	}
	out["batches"], out["polls"] = float64(m.GetHistogram().GetSampleCount()), m.GetHistogram().GetSampleSum()
	for _, s := range []string{"read", "fetch", "queue", "write"} {
		var m dto.Metric
		if err := tracking.PollSeconds.WithLabelValues(s).(prometheus.Metric).Write(&m); err != nil {
			b.Fatal(err)
		}
		out[s], out[s+"#"] = m.GetHistogram().GetSampleSum(), float64(m.GetHistogram().GetSampleCount())
	}
	for _, r := range []string{"carrier_busy", "request_busy"} {
		var m dto.Metric
		if err := tracking.Postponed.WithLabelValues(r).Write(&m); err != nil {
			b.Fatal(err)
		}
		out["postponed"] += m.GetCounter().GetValue()
	}
	return out
}

// postgresCPU is the CPU seconds of the PostgreSQL processes this test
// binary started (their postmaster, its reaped and live backends), 0
// where there are none (an outside server): the database's share of a
// poll, next to the Go process' own (cpuSeconds).
func postgresCPU() float64 {
	procs, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	ticks := map[int]float64{}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		if err != nil {
			continue
		}
		// After the command's closing parenthesis: state, ppid, … utime
		// (14th field), stime, cutime, cstime.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		if len(f) < 15 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
		var t float64
		for _, s := range f[11:15] {
			v, _ := strconv.ParseFloat(s, 64)
			t += v
		}
		ticks[pid] = t
	}
	var sum func(pid int) float64
	sum = func(pid int) float64 {
		t := ticks[pid]
		for _, c := range children[pid] {
			t += sum(c)
		}
		return t
	}
	var total float64
	for _, c := range children[os.Getpid()] {
		total += sum(c)
	}
	return total / 100 // USER_HZ
}
