package datasync_test

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shipgraph/datasync"
	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/testkit"
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
