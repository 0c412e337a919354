package datasync_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shipgraph/datasync"
	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/testkit"
	"shipgraph/testkit/duckdbtest"
	"shipgraph/testkit/s3test"
)

// writer changes the account's shipments until stopped: inserts with
// containers, updates and deletes, as a steady write load.
func (e *env) writer(account string) (stop func() int) {
	ctx, cancel := context.WithCancel(e.ctx)
	var n atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			var err error
			switch i % 3 {
			case 0:
				_, err = e.src.ExecContext(ctx, `WITH s AS (INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number,
shipping_line_scac, shipping_line_name, shipping_line_short_name) VALUES ($1, $2, $2, 'MAEU', 'Maersk', 'Maersk') RETURNING id)
INSERT INTO containers (account_id, shipment_id, number) SELECT $1, id, $2 FROM s`, account, fmt.Sprintf("W%09d", i))
			case 1:
				_, err = e.src.ExecContext(ctx, `UPDATE shipments SET pod_vessel_name = $2 WHERE account_id = $1
AND id = (SELECT id FROM shipments WHERE account_id = $1 ORDER BY created_at DESC LIMIT 1)`, account, fmt.Sprintf("V%d", i))
			case 2:
				if i%9 == 2 {
					_, err = e.src.ExecContext(ctx, `DELETE FROM containers WHERE account_id = $1
AND id = (SELECT id FROM containers WHERE account_id = $1 ORDER BY created_at LIMIT 1)`, account)
				}
			}
			if err == nil {
				n.Add(1)
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() int { cancel(); wg.Wait(); return int(n.Load()) }
}

// outage is how long a destination stays stopped under writes.
const outage = 30 * time.Second

// The destination stops for 30 s under writes: the sync records the
// error, backs off, and once the destination is back, catches up with
// nothing lost and nothing doubled (the destination equals the source,
// key by key). Parallel with the object store's outage, so that CI waits
// for the two outages once.
func TestDestinationDownUnderWrites(t *testing.T) {
	t.Parallel()
	e := open(t, datasync.Config{MaxBackoff: 2 * time.Second})
	for i := range 3 {
		e.shipment(e.acme, fmt.Sprintf("ACME%04d", i), 2)
	}
	srv, destURL := destination(t)
	dest := dbtest.Open(t, destURL)
	id := e.addPostgres(e.acme, destURL)
	e.waitEqual(dest, e.acme, 60*time.Second)

	stop := e.writer(e.acme)
	testkit.WaitFor(t, 10*time.Second, "writes followed", func() bool { return e.rowsAt(dest) > 6 })
	e.outage(id, stop, func() { srv.Stop(t) }, func() { srv.Start(t) })
	e.waitEqual(dest, e.acme, 90*time.Second)
	e.noErrorLeft(id)
}

// The object store stops for 30 s under writes, then comes back on the
// same address and data: the sync records the error, then catches up, and
// DuckDB's latest-version query of the files equals the source.
func TestObjectStoreDownUnderWrites(t *testing.T) {
	t.Parallel()
	e := open(t, datasync.Config{MaxBackoff: 2 * time.Second})
	for i := range 3 {
		e.shipment(e.acme, fmt.Sprintf("ACME%04d", i), 2)
	}
	srv := s3test.Start(t, "lake")
	id := e.addDestination(e.acme, datasync.KindObjectStore, objectURL(srv, "acme"))
	e.waitCaughtUp(e.acme, id, 60*time.Second)

	stop := e.writer(e.acme)
	testkit.WaitFor(t, 10*time.Second, "writes followed", func() bool {
		for _, st := range e.status(e.acme, id) {
			if st.Table == db.SyncContainers && st.RowsWritten > 6+3 {
				return true
			}
		}
		return false
	})
	e.outage(id, stop, func() { srv.Stop(t) }, func() { srv.Restart(t) })
	e.waitCaughtUp(e.acme, id, 90*time.Second)
	e.checkLake(srv, "acme", e.acme)
	e.noErrorLeft(id)
}

// A batch whose file is written but whose manifest the store refuses (the
// store went down between the two, as in TestObjectStoreDownUnderWrites
// once in CI) is written again, once the store is back, under the same
// name, with its manifest, although the log moved on meanwhile: no file is
// left that no manifest names (a loader listing manifests or files sees
// the same batches).
func TestObjectStoreManifestRefused(t *testing.T) {
	t.Parallel()
	e := open(t, datasync.Config{MaxBackoff: time.Second})
	e.shipment(e.acme, "ACME0000", 1)
	srv := s3test.Start(t, "lake")
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	// The store refuses manifests while refuse is set.
	var refuse atomic.Bool
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, ".manifest.json") {
			http.Error(w, "refused by the test", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	via := *srv
	via.Endpoint = front.URL
	id := e.addDestination(e.acme, datasync.KindObjectStore, objectURL(&via, "acme"))
	e.waitCaughtUp(e.acme, id, 60*time.Second)

	refuse.Store(true)
	e.shipment(e.acme, "ACME0001", 1)
	testkit.WaitFor(t, 30*time.Second, "the sync to record the refused manifest", func() bool {
		for _, st := range e.status(e.acme, id) {
			if st.LastError != "" {
				return true
			}
		}
		return false
	})
	// The log moves on before the batch is written again.
	e.shipment(e.acme, "ACME0002", 1)
	refuse.Store(false)
	e.waitCaughtUp(e.acme, id, 60*time.Second)
	e.checkLake(srv, "acme", e.acme)
	e.noErrorLeft(id)
}

// outage takes acme's destination id down (down), waits until the sync
// records its failure, keeps the writes (stopWrites) going for the
// outage, brings it back (up), and ends the writes a second later, after
// at least 50.
func (e *env) outage(id string, stopWrites func() int, down, up func()) {
	e.t.Helper()
	down()
	since := time.Now()
	testkit.WaitFor(e.t, 60*time.Second, "the sync to record the destination's failure", func() bool {
		for _, st := range e.status(e.acme, id) {
			if st.LastError != "" {
				return true
			}
		}
		return false
	})
	// Writes go on while the destination is down.
	for time.Since(since) < outage {
		time.Sleep(100 * time.Millisecond)
	}
	up()
	time.Sleep(time.Second)
	if writes := stopWrites(); writes < 50 {
		e.t.Fatalf("only %d writes", writes)
	}
}

// noErrorLeft checks that no table of acme's destination id shows an
// error once it caught up.
func (e *env) noErrorLeft(id string) {
	e.t.Helper()
	for _, st := range e.status(e.acme, id) {
		if st.LastError != "" {
			e.t.Errorf("%s still shows the error %q after catching up", st.Table, st.LastError)
		}
	}
}

func (e *env) rowsAt(dest *sql.DB) int {
	var n int
	if err := dest.QueryRowContext(e.ctx, `SELECT count(*) FROM containers`).Scan(&n); err != nil {
		return -1
	}
	return n
}

// A slow destination delays only itself: a second account's destination
// on the same server follows at its usual pace while the first one's
// statements wait on a lock.
func TestSlowDestinationDelaysOnlyItself(t *testing.T) {
	e := open(t, datasync.Config{})
	e.shipment(e.acme, "ACME0001", 1)
	e.shipment(e.other, "OTHR0001", 1)
	srv, slowURL := destination(t)
	fastURL := databaseURL(t, srv.URL(), "fast")
	slow := dbtest.Open(t, slowURL)
	fast := dbtest.Open(t, fastURL)
	e.addPostgres(e.acme, slowURL)
	e.addPostgres(e.other, fastURL)
	e.waitEqual(slow, e.acme, 60*time.Second)
	e.waitEqual(fast, e.other, 60*time.Second)

	// Hold the slow destination's shipments table.
	tx, err := slow.BeginTx(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`LOCK TABLE shipments IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	e.shipment(e.acme, "ACME0002", 1)
	var lags []time.Duration
	for i := range 5 {
		began := time.Now()
		e.shipment(e.other, fmt.Sprintf("OTHR1%03d", i), 1)
		e.waitEqual(fast, e.other, 30*time.Second)
		lags = append(lags, time.Since(began))
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	t.Logf("the other destination's lag while the first is held: %v", lags)
	if got := e.sourceRows(e.acme, db.LookupSyncTable(db.SyncShipments)); len(got) != 2 {
		t.Fatalf("%d shipments at the source", len(got))
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	e.waitEqual(slow, e.acme, 60*time.Second)
}

// databaseURL makes database name on the server of base and returns its
// URL.
func databaseURL(t *testing.T, base, name string) string {
	t.Helper()
	admin := dbtest.Open(t, base)
	if _, err := admin.Exec(`CREATE DATABASE ` + name); err != nil {
		t.Fatal(err)
	}
	u := mustParse(t, base)
	u.Path = "/" + name
	return u.String()
}

// slowStatement is how long each statement on a slow PostgreSQL
// destination's tables takes (a trigger sleeps), and slowResponse how long
// each answer of a slow object store is held by the proxy in front of it.
const (
	slowStatement = 2 * time.Second
	slowResponse  = 300 * time.Millisecond
)

// A PostgreSQL destination that answers slowly (every statement on its
// tables sleeps 2 s in a trigger) under a steady write load: the sync
// keeps writing it; another destination of the same account, on the same
// server, keeps its pace; once the destination is fast again its lag
// recovers, and both equal the source (nothing lost, nothing doubled).
func TestSlowPostgresDestination(t *testing.T) {
	t.Parallel()
	e := open(t, datasync.Config{})
	for i := range 3 {
		e.shipment(e.acme, fmt.Sprintf("ACME%04d", i), 2)
	}
	srv, slowURL := destination(t)
	fastURL := databaseURL(t, srv.URL(), "fast")
	slow, err := sql.Open("postgres", slowURL)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	fast, err := sql.Open("postgres", fastURL)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	slowID := e.addPostgres(e.acme, slowURL)
	fastID := e.addPostgres(e.acme, fastURL)
	e.waitEqual(slow, e.acme, 60*time.Second)
	e.waitEqual(fast, e.acme, 60*time.Second)

	stop := e.writer(e.acme)
	// Every statement that writes one of the slow destination's tables
	// now takes 2 s more.
	if _, err := slow.ExecContext(e.ctx, fmt.Sprintf(`CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN PERFORM pg_sleep(%g); RETURN NULL; END $$`, slowStatement.Seconds())); err != nil {
		t.Fatal(err)
	}
	for _, tb := range db.SyncTables() {
		if _, err := slow.ExecContext(e.ctx, fmt.Sprintf(`CREATE TRIGGER slow AFTER INSERT OR UPDATE OR DELETE ON %s
FOR EACH STATEMENT EXECUTE FUNCTION slow()`, tb.Name)); err != nil {
			t.Fatal(err)
		}
	}
	before := e.rowsAt(slow)
	lags := e.markerLags("SLOW", 3, slowID, fastID)
	slowLags, fastLags := lags[slowID], lags[fastID]
	t.Logf("while slow: the slow destination's lag %v, the other's %v", slowLags, fastLags)
	if after := e.rowsAt(slow); after <= before {
		t.Fatalf("the slow destination did not move: %d containers, %d before", after, before)
	}
	// Each marker passed at least one slow statement: the set-up is slow.
	if slowLags[0] < slowStatement {
		t.Fatalf("the slow destination's lag %v is under its statements' %v: not slow", slowLags[0], slowStatement)
	}
	// The other destination is not held by the slow one: its median lag
	// is under the slow destination's floor.
	if m := fastLags[len(fastLags)/2]; m >= slowStatement {
		t.Fatalf("the other destination's median lag %v: delayed by the slow one (its floor is %v)", m, slowStatement)
	}

	if _, err := slow.ExecContext(e.ctx, `DROP FUNCTION slow() CASCADE`); err != nil {
		t.Fatal(err)
	}
	e.waitCaughtUp(e.acme, slowID, 60*time.Second)
	recovered := e.markerLags("FAST", 3, slowID)[slowID]
	t.Logf("fast again: the destination's lag %v", recovered)
	if m := recovered[len(recovered)/2]; m >= slowStatement {
		t.Fatalf("the destination's median lag %v once fast again: it did not recover", m)
	}
	if writes := stop(); writes < 50 {
		t.Fatalf("only %d writes", writes)
	}
	e.waitEqual(slow, e.acme, 90*time.Second)
	e.waitEqual(fast, e.acme, 90*time.Second)
	e.noErrorLeft(slowID)
}

// An object store that answers slowly (a loopback proxy holds each of its
// answers 300 ms) under a steady write load: the sync keeps writing it;
// another destination of the same account, on the same server without
// the proxy, keeps its pace; once the store is fast again the lag
// recovers; DuckDB's current tables of both equal the source and no key
// has two rows of one position in any file (nothing doubled).
func TestSlowObjectStoreDestination(t *testing.T) {
	t.Parallel()
	e := open(t, datasync.Config{})
	for i := range 3 {
		e.shipment(e.acme, fmt.Sprintf("ACME%04d", i), 2)
	}
	srv := s3test.Start(t, "lake")
	proxy := slowProxy(t, srv.Endpoint[len("http://"):])
	slowURL := fmt.Sprintf("s3://%s:%s@%s/slow?endpoint=http://%s&region=%s&use_path_style=true", s3test.Access, s3test.Secret,
		srv.Bucket, proxy.addr, s3test.Region)
	slowID := e.addDestination(e.acme, datasync.KindObjectStore, slowURL)
	fastID := e.addDestination(e.acme, datasync.KindObjectStore, objectURL(srv, "fast"))
	e.waitCaughtUp(e.acme, slowID, 60*time.Second)
	e.waitCaughtUp(e.acme, fastID, 60*time.Second)

	stop := e.writer(e.acme)
	proxy.delay.Store(int64(slowResponse))
	written := func() (n int64) {
		for _, st := range e.status(e.acme, slowID) {
			n += st.RowsWritten
		}
		return n
	}
	before := written()
	lags := e.markerLags("SLOW", 3, slowID, fastID)
	slowLags, fastLags := lags[slowID], lags[fastID]
	t.Logf("while slow: the slow store's lag %v, the other's %v; %d answers held", slowLags, fastLags, proxy.held.Load())
	if after := written(); after <= before {
		t.Fatalf("the slow store did not move: %d rows written, %d before", after, before)
	}
	if slowLags[0] < slowResponse {
		t.Fatalf("the slow store's lag %v is under one held answer's %v: not slow", slowLags[0], slowResponse)
	}
	if m, floor := fastLags[len(fastLags)/2], slowLags[0]; m >= floor {
		t.Fatalf("the other store's median lag %v: delayed by the slow one (whose least lag is %v)", m, floor)
	}

	proxy.delay.Store(0)
	e.waitCaughtUp(e.acme, slowID, 60*time.Second)
	recovered := e.markerLags("FAST", 3, slowID)[slowID]
	t.Logf("fast again: the store's lag %v", recovered)
	if m := recovered[len(recovered)/2]; m >= slowLags[0] {
		t.Fatalf("the store's median lag %v once fast again: not under its least lag while slow (%v)", m, slowLags[0])
	}
	if writes := stop(); writes < 50 {
		t.Fatalf("only %d writes", writes)
	}
	for _, p := range []struct{ id, prefix string }{{slowID, "slow"}, {fastID, "fast"}} {
		e.waitCaughtUp(e.acme, p.id, 90*time.Second)
		e.checkLake(srv, p.prefix, e.acme)
		e.noErrorLeft(p.id)
		dir := srv.Download(t, p.prefix)
		var queries []string
		for _, tb := range db.SyncTables() {
			queries = append(queries, fmt.Sprintf(`SELECT count(*) - count(DISTINCT (%[3]s, _position))
FROM read_parquet('%[1]s/%[2]s/*.parquet', union_by_name = true)`, dir, tb.Name, tb.Key()))
		}
		for i, a := range duckdbtest.Query(t, queries...) {
			if fmt.Sprint(a[0][0]) != "0" {
				t.Errorf("%s/%s: %v rows repeat a key at one position", p.prefix, db.SyncTables()[i].Name, a[0][0])
			}
		}
	}
}

// markerLags inserts n marker shipments one after another and returns,
// per destination of acme, the time from each one's commit to the
// destination's shipments table reaching its position (sorted).
func (e *env) markerLags(prefix string, n int, ids ...string) map[string][]time.Duration {
	e.t.Helper()
	lags := map[string][]time.Duration{}
	for i := range n {
		e.shipment(e.acme, fmt.Sprintf("%s%04d", prefix, i), 1)
		committed := time.Now()
		head, err := e.store.SyncLogHead(e.ctx, e.acme)
		if err != nil {
			e.t.Fatal(err)
		}
		arrived := map[string]time.Duration{}
		testkit.WaitFor(e.t, 2*time.Minute, "the marker at every destination", func() bool {
			for _, id := range ids {
				if _, ok := arrived[id]; ok {
					continue
				}
				for _, st := range e.status(e.acme, id) {
					if st.Table == db.SyncShipments && st.Phase == "follow" && st.Pos >= head {
						arrived[id] = time.Since(committed)
					}
				}
			}
			return len(arrived) == len(ids)
		})
		for id, d := range arrived {
			lags[id] = append(lags[id], d)
		}
	}
	for _, l := range lags {
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	}
	return lags
}

// proxy is a loopback TCP proxy that holds each chunk of the server's
// answers for delay (nanoseconds; 0: none).
type proxy struct {
	addr  string
	delay atomic.Int64
	held  atomic.Int64
}

func slowProxy(t *testing.T, upstream string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", upstream)
			if err != nil {
				_ = client.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, client, server)
			mu.Unlock()
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(server, client)
				_ = server.Close()
			}()
			go func() {
				defer wg.Done()
				defer client.Close()
				buf := make([]byte, 32<<10)
				for {
					n, err := server.Read(buf)
					if n > 0 {
						if d := time.Duration(p.delay.Load()); d > 0 {
							p.held.Add(1)
							time.Sleep(d)
						}
						if _, werr := client.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return p
}
