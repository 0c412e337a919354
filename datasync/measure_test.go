package datasync_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
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
func TestMeasure(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SHIPGRAPH_DATASYNC_MEASURE"))
	if n <= 0 {
		t.Skip("set SHIPGRAPH_DATASYNC_MEASURE to the shipments to seed (a measurement, not a check)")
	}
	ctx := context.Background()
	store, err := db.Open(ctx, dbtest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	begin := time.Now()
	if _, _, err := seed.Run(ctx, store, seed.Options{Shipments: n, Seed: 1, Now: testkit.SeedNow}); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d shipments in %v", n, time.Since(begin).Round(time.Millisecond))
	e := &env{t: t, ctx: ctx, store: store, src: store.SQL()}
	e.acme = e.id(`SELECT id FROM accounts WHERE slug = 'acme'`)
	e.syncer = start(t, store, datasync.Config{})
	_, destURL := destination(t)
	dest := dbtest.Open(t, destURL)

	// Backfill: rows per second and the process' heap while it runs.
	peakHeap := heapSampler()
	id := e.addPostgres(e.acme, destURL)
	rows, took := e.backfilled(id)
	peak := peakHeap()
	t.Logf("backfill: %d rows (4 tables, acme's share of %d shipments) in %v: %.0f rows/s; peak heap in use %.1f MiB",
		rows, n, took.Round(time.Millisecond), float64(rows)/took.Seconds(), float64(peak)/(1<<20))

	// The same into Parquet files on the S3-compatible server.
	srv := s3test.Start(t, "lake")
	runtime.GC()
	peakHeap = heapSampler()
	lake := e.addDestination(e.acme, datasync.KindObjectStore, objectURL(srv, "acme"))
	rows, took = e.backfilled(lake)
	peak = peakHeap()
	t.Logf("object store backfill: %d rows in %v: %.0f rows/s; peak heap in use %.1f MiB",
		rows, took.Round(time.Millisecond), float64(rows)/took.Seconds(), float64(peak)/(1<<20))
	// The lags below are the PostgreSQL destination's alone.
	if _, err := e.store.PauseSyncDestination(e.ctx, e.acme, lake, true); err != nil {
		t.Fatal(err)
	}

	for _, rate := range []int{10, 100} {
		lags := e.lagAt(dest, rate, 20*time.Second)
		sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
		p := func(q float64) time.Duration { return lags[int(q*float64(len(lags)-1))].Round(time.Millisecond) }
		t.Logf("%d writes/s for 20 s: %d changes, commit → destination p50 %v, p99 %v, max %v", rate, len(lags), p(0.5), p(0.99), p(1))
	}
}

// heapSampler samples the process' heap in use every 50 ms until the
// function it returns is called, which returns the peak.
func heapSampler() func() uint64 {
	var peak uint64
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
			peak = max(peak, m.HeapInuse)
		}
	}()
	return func() uint64 { close(done); <-stopped; return peak }
}

// backfilled waits until every table of the destination follows the log
// and returns the rows written and the time since the call.
func (e *env) backfilled(id string) (int64, time.Duration) {
	begin := time.Now()
	var rows int64
	testkit.WaitFor(e.t, 30*time.Minute, "the backfill", func() bool {
		rows = 0
		sts := e.status(e.acme, id)
		if len(sts) != len(db.SyncTables()) {
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
// the time from its commit to its row's first sight at the destination
// (polled every 10 ms).
func (e *env) lagAt(dest *sql.DB, rate int, d time.Duration) []time.Duration {
	e.t.Helper()
	prefix := fmt.Sprintf("LAG%03d", rate)
	var mu sync.Mutex
	committed := map[string]time.Time{}
	seen := map[string]time.Time{}
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
			mu.Lock()
			committed[num] = time.Now()
			mu.Unlock()
		}
	}()
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			rows, err := dest.QueryContext(e.ctx, `SELECT bill_of_lading_number FROM shipments WHERE bill_of_lading_number LIKE $1`, prefix+"%")
			if err != nil {
				continue
			}
			now := time.Now()
			mu.Lock()
			for rows.Next() {
				var num string
				if rows.Scan(&num) == nil {
					if _, ok := seen[num]; !ok {
						seen[num] = now
					}
				}
			}
			mu.Unlock()
			rows.Close()
		}
	}()
	wg.Wait()
	testkit.WaitFor(e.t, time.Minute, "every write at the destination", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) >= len(committed)
	})
	close(stop)
	mu.Lock()
	defer mu.Unlock()
	var lags []time.Duration
	for num, at := range committed {
		lags = append(lags, max(0, seen[num].Sub(at)))
	}
	return lags
}
