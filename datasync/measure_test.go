package datasync_test

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"shipgraph/datasync"
	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/db/seed"
	"shipgraph/testkit"
	"shipgraph/testkit/s3test"
)

// TestMeasure measures what docs/datasync.md reports; it runs only with
// SHIPGRAPH_DATASYNC_MEASURE set (to the number of shipments to seed for
// the backfill, e.g. 20000), and asserts nothing about time: it logs.
//
//	SHIPGRAPH_DATASYNC_MEASURE=20000 go test -count=1 -v ./datasync -run TestMeasure
//
// SHIPGRAPH_DATASYNC_MEASURE_URL names an already seeded and migrated
// database to measure on instead (make bench-scale's, 1,000,000
// shipments: MEASURE is then only the label); SHIPGRAPH_DATASYNC_MEASURE_TABLES
// (comma-separated) limits the backfilled tables (default all four);
// SHIPGRAPH_DATASYNC_MEASURE_KINDS the destinations' kinds (default
// postgres,object_store); SHIPGRAPH_DATASYNC_MEASURE_LAG=0 skips the lag;
// SHIPGRAPH_DATASYNC_MEASURE_PROFILE=<prefix> writes a heap profile of
// each backfill at its peak to <prefix>-<kind>.heap.pprof.
func TestMeasure(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SHIPGRAPH_DATASYNC_MEASURE"))
	if n <= 0 {
		t.Skip("set SHIPGRAPH_DATASYNC_MEASURE to the shipments to seed (a measurement, not a check)")
	}
	ctx := context.Background()
	url := os.Getenv("SHIPGRAPH_DATASYNC_MEASURE_URL")
	seeded := url == ""
	if seeded {
		// No statement timeout: seeding 100,000 shipments runs statements
		// of minutes on this machine.
		url = dbtest.NewDB(t)
		if strings.Contains(url, "?") {
			url += "&statement_timeout=0"
		} else {
			url += "?statement_timeout=0"
		}
	}
	store, err := db.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if seeded {
		begin := time.Now()
		if _, _, err := seed.Run(ctx, store, seed.Options{Shipments: n, Seed: 1, Now: testkit.SeedNow}); err != nil {
			t.Fatal(err)
		}
		t.Logf("seeded %d shipments in %v", n, time.Since(begin).Round(time.Millisecond))
	}
	var tables []string
	if v := os.Getenv("SHIPGRAPH_DATASYNC_MEASURE_TABLES"); v != "" {
		tables = strings.Split(v, ",")
	} else {
		for _, tb := range db.SyncTables() {
			tables = append(tables, tb.Name)
		}
	}
	kinds := []string{"postgres", datasync.KindObjectStore}
	if v := os.Getenv("SHIPGRAPH_DATASYNC_MEASURE_KINDS"); v != "" {
		kinds = strings.Split(v, ",")
	}
	profile := os.Getenv("SHIPGRAPH_DATASYNC_MEASURE_PROFILE")
	e := &env{t: t, ctx: ctx, store: store, src: store.SQL()}
	e.acme = e.id(`SELECT id FROM accounts WHERE slug = 'acme'`)
	e.syncer = start(t, store, datasync.Config{})

	// Each kind's backfill alone (the one before paused): rows per
	// second, the process' heap and RSS while it runs.
	type measured struct {
		kind, id string
		seen     func(map[string]int64) []string
		dest     *sql.DB // a PostgreSQL destination's
	}
	var done []measured
	for _, kind := range kinds {
		var m measured
		runtime.GC()
		peak := sampler(profileFile(profile, kind))
		switch kind {
		case "postgres":
			_, destURL := destination(t)
			dest := dbtest.Open(t, destURL)
			m = measured{kind: kind, id: e.addPostgres(e.acme, destURL, tables...), seen: e.seenInTable(dest), dest: dest}
		case datasync.KindObjectStore:
			srv := s3test.Start(t, "lake")
			m = measured{kind: kind, id: e.addDestination(e.acme, datasync.KindObjectStore, objectURL(srv, "acme"), tables...)}
			m.seen = e.seenInStatus(m.id)
		default:
			t.Fatalf("SHIPGRAPH_DATASYNC_MEASURE_KINDS: %q is not postgres nor %s", kind, datasync.KindObjectStore)
		}
		rows, took := e.backfilled(m.id, len(tables))
		heap, rss := peak()
		t.Logf("%s backfill of %v: %d rows (acme's share of %d shipments) in %v: %.0f rows/s; peak heap in use %.1f MiB, peak RSS %.1f MiB",
			kind, tables, rows, n, took.Round(time.Millisecond), float64(rows)/took.Seconds(), float64(heap)/(1<<20), float64(rss)/(1<<20))
		if _, err := e.store.PauseSyncDestination(e.ctx, e.acme, m.id, true); err != nil {
			t.Fatal(err)
		}
		if m.dest != nil {
			// The lag's poll looks numbers up by prefix: an index, so that
			// a poll of a million-row table does not cost more than the
			// sync.
			if _, err := m.dest.ExecContext(e.ctx, `CREATE INDEX IF NOT EXISTS shipments_bl_prefix ON shipments (bill_of_lading_number text_pattern_ops)`); err != nil {
				t.Fatal(err)
			}
		}
		done = append(done, m)
	}
	if os.Getenv("SHIPGRAPH_DATASYNC_MEASURE_LAG") == "0" || !slices.Contains(tables, db.SyncShipments) {
		return // the lag is measured with shipments
	}

	// Steady-state lag of each kind, the others paused.
	report := func(kind string, rate int, lags []time.Duration) {
		sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
		p := func(q float64) time.Duration { return lags[int(q*float64(len(lags)-1))].Round(time.Millisecond) }
		t.Logf("%s: %d writes/s for 20 s: %d changes, commit → destination p50 %v, p99 %v, max %v", kind, rate, len(lags), p(0.5), p(0.99), p(1))
	}
	for _, m := range done {
		if _, err := e.store.PauseSyncDestination(e.ctx, e.acme, m.id, false); err != nil {
			t.Fatal(err)
		}
		if err := e.syncer.Enqueue(e.ctx, e.acme, m.id); err != nil {
			t.Fatal(err)
		}
		e.backfilled(m.id, len(tables))
		for _, rate := range []int{10, 100} {
			report(m.kind, rate, e.lagAt(rate, 20*time.Second, m.seen))
		}
		if _, err := e.store.PauseSyncDestination(e.ctx, e.acme, m.id, true); err != nil {
			t.Fatal(err)
		}
	}
}

// profileFile is where the heap profile of kind's backfill goes ("" when
// no profile was asked for).
func profileFile(prefix, kind string) string {
	if prefix == "" {
		return ""
	}
	return prefix + "-" + kind + ".heap.pprof"
}

// sampler samples the process' heap in use and resident set every 50 ms
// until the function it returns is called, which returns their peaks.
// With a file named, it writes a heap profile there at each new peak of
// the heap in use (the profile's in-use figures are the last collection's).
func sampler(file string) func() (heap, rss uint64) {
	var peakHeap, peakRSS uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peakHeap && file != "" {
				if f, err := os.Create(file); err == nil {
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					_ = f.Close()
				}
			}
			peakHeap = max(peakHeap, m.HeapInuse)
			peakRSS = max(peakRSS, residentSet())
		}
	}()
	return func() (uint64, uint64) { close(done); <-stopped; return peakHeap, peakRSS }
}

// residentSet is the process' resident set in bytes (Linux; 0 elsewhere).
func residentSet() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// backfilled waits until the destination's tables (n of them) follow the
// log and returns the rows written and the time since the call.
func (e *env) backfilled(id string, n int) (int64, time.Duration) {
	begin := time.Now()
	var rows int64
	testkit.WaitFor(e.t, 30*time.Minute, "the backfill", func() bool {
		rows = 0
		sts := e.status(e.acme, id)
		if len(sts) != n {
			return false
		}
		for _, st := range sts {
			if st.Phase != "follow" {
				return false
			}
			rows += st.RowsWritten
		}
		return true
	})
	return rows, time.Since(begin)
}

// lagAt inserts shipments at rate a second for d, and returns for each
// the time from its commit to seen's first sight of it at the destination
// (polled every 10 ms). seen is given the inserts' numbers and log
// positions not yet seen, and returns those it sees.
func (e *env) lagAt(rate int, d time.Duration, seen func(map[string]int64) []string) []time.Duration {
	e.t.Helper()
	prefix := fmt.Sprintf("LAG%03d%d-", rate, time.Now().UnixNano()%1e6)
	var mu sync.Mutex
	committed := map[string]time.Time{}
	waiting := map[string]int64{} // number → the log's head after its commit
	arrived := map[string]time.Time{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		end := time.After(d)
		for i := 0; ; i++ {
			select {
			case <-end:
				return
			case <-tick.C:
			}
			num := fmt.Sprintf("%s%08d", prefix, i)
			if _, err := e.src.ExecContext(e.ctx, `INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number,
shipping_line_scac, shipping_line_name, shipping_line_short_name) VALUES ($1, $2, $2, 'MAEU', 'Maersk', 'Maersk')`, e.acme, num); err != nil {
				e.t.Error(err)
				return
			}
			at := time.Now()
			head, err := e.store.SyncLogHead(e.ctx, e.acme)
			if err != nil {
				e.t.Error(err)
				return
			}
			mu.Lock()
			committed[num], waiting[num] = at, head
			mu.Unlock()
		}
	}()
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			mu.Lock()
			ask := maps.Clone(waiting)
			mu.Unlock()
			if len(ask) == 0 {
				continue
			}
			got := seen(ask)
			now := time.Now()
			mu.Lock()
			for _, num := range got {
				if _, ok := arrived[num]; !ok {
					arrived[num] = now
					delete(waiting, num)
				}
			}
			mu.Unlock()
		}
	}()
	wg.Wait()
	testkit.WaitFor(e.t, 2*time.Minute, "every write at the destination", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(arrived) >= len(committed)
	})
	close(stop)
	<-polled
	mu.Lock()
	defer mu.Unlock()
	var lags []time.Duration
	for num, at := range committed {
		lags = append(lags, max(0, arrived[num].Sub(at)))
	}
	return lags
}

// seenInTable sees a number when its row is in the destination's
// shipments table.
func (e *env) seenInTable(dest *sql.DB) func(map[string]int64) []string {
	return func(ask map[string]int64) []string {
		var prefix string
		for num := range ask {
			prefix = num[:strings.IndexByte(num, '-')+1]
			break
		}
		rows, err := dest.QueryContext(e.ctx, `SELECT bill_of_lading_number FROM shipments WHERE bill_of_lading_number LIKE $1`, prefix+"%")
		if err != nil {
			return nil
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var num string
			if rows.Scan(&num) == nil {
				if _, ok := ask[num]; ok {
					out = append(out, num)
				}
			}
		}
		return out
	}
}

// seenInStatus sees a number when the destination's shipments table has
// stored a position at or past the one after its commit: its file and
// manifest are written.
func (e *env) seenInStatus(id string) func(map[string]int64) []string {
	return func(ask map[string]int64) []string {
		sts, err := e.store.SyncStatuses(e.ctx, e.acme, id, nil)
		if err != nil {
			return nil
		}
		var out []string
		for _, st := range sts {
			if st.Table != db.SyncShipments {
				continue
			}
			for num, pos := range ask {
				if st.Phase == "follow" && st.Pos >= pos {
					out = append(out, num)
				}
			}
		}
		return out
	}
}
