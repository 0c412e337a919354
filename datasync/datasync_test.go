package datasync_test

import (
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"net/url"
	"testing"
	"time"

	"shipgraph/datasync"
	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/jobs"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
	"shipgraph/testkit/synctest"
)

func TestMain(m *testing.M) { dbtest.Main(m, db.Migrate) }

var testKey = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

type env struct {
	t      *testing.T
	ctx    context.Context
	store  *db.DB
	src    *sql.DB
	syncer *datasync.Syncer
	acme   string
	other  string
}

func open(t *testing.T, c datasync.Config) *env {
	t.Helper()
	store := pg.New(t, 0).Store
	e := &env{t: t, ctx: context.Background(), store: store, src: store.SQL()}
	e.acme = e.account("acme")
	e.other = e.account("other")
	e.syncer = start(t, store, c)
	return e
}

// start builds a job engine with the syncer on store and starts it (one
// serve process' share).
func start(t *testing.T, store *db.DB, c datasync.Config) *datasync.Syncer {
	t.Helper()
	j := jobs.New(store, jobs.Config{FetchInterval: 50 * time.Millisecond, RescueAfter: time.Hour, MaxAttempts: 5})
	if c.Workers == 0 {
		c.Workers = 2
	}
	c.Key, c.AllowPrivate = testKey, true
	if c.Poll == 0 {
		c.Poll = 50 * time.Millisecond
	}
	s, err := datasync.New(store, j, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Open(); err != nil {
		t.Fatal(err)
	}
	testkit.StartJobs(t, j)
	return s
}

func (e *env) exec(q string, args ...any) {
	e.t.Helper()
	if _, err := e.src.ExecContext(e.ctx, q, args...); err != nil {
		e.t.Fatalf("%v\n%s", err, q)
	}
}

func (e *env) id(q string, args ...any) string {
	e.t.Helper()
	var id string
	if err := e.src.QueryRowContext(e.ctx, q, args...).Scan(&id); err != nil {
		e.t.Fatalf("%v\n%s", err, q)
	}
	return id
}

func (e *env) account(slug string) string {
	return e.id(`INSERT INTO accounts (slug, company_name) VALUES ($1, $1) RETURNING id`, slug)
}

// shipment adds a shipment with n containers, a tracking request and a
// transport event per container; it returns the shipment's id.
func (e *env) shipment(account, number string, n int) string {
	s := e.id(`INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, shipping_line_scac, shipping_line_name,
shipping_line_short_name, tags, ref_numbers, pod_eta_at) VALUES ($1, $2, $2, 'MAEU', 'Maersk', 'Maersk', '{b,a}', '{R1}', now()) RETURNING id`, account, number)
	e.exec(`INSERT INTO tracking_requests (account_id, request_type, request_number, scac, shipment_id, status)
VALUES ($1, 'bill_of_lading', $2, 'MAEU', $3, 'created')`, account, number, s)
	for i := range n {
		c := e.id(`INSERT INTO containers (account_id, shipment_id, number, equipment_length, weight_in_lbs)
VALUES ($1, $2, $3, 40, 1234.6) RETURNING id`, account, s, fmt.Sprintf("%s%02d", number[:4], i))
		e.exec(`INSERT INTO transport_events (account_id, container_id, shipment_id, scac, carrier_event_id, event, event_at, voyage_number)
VALUES ($1, $2, $3, 'MAEU', $4, 'container.transport.vessel_loaded', now(), 'V1')`, account, c, s, fmt.Sprintf("ev-%s-%d", number, i))
	}
	return s
}

// destination starts a second PostgreSQL server with an empty database,
// warehouse, and returns the server and the database's URL.
func destination(t *testing.T) (*dbtest.Server, string) {
	t.Helper()
	srv := dbtest.NewServer(t)
	u := mustParse(t, srv.URL())
	admin := dbtest.Open(t, srv.URL())
	if _, err := admin.Exec(`CREATE DATABASE warehouse`); err != nil {
		t.Fatal(err)
	}
	u.Path = "/warehouse"
	return srv, u.String()
}

// addPostgres stores a PostgreSQL destination of the tables (default:
// every table) and enqueues its job.
func (e *env) addPostgres(account, dest string, tables ...string) string {
	e.t.Helper()
	return e.addDestination(account, datasync.KindPostgres, dest, tables...)
}

// sourceRows is the account's rows of the table as the sync exports them,
// one line per row, in key order.
func (e *env) sourceRows(account string, tb *db.SyncTable) []string {
	e.t.Helper()
	out, err := synctest.SourceLines(e.ctx, e.store, account, tb)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// waitEqual waits until every table of the destination equals the
// account's rows of it at the source.
func (e *env) waitEqual(dest *sql.DB, account string, within time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(within)
	var why string
	for {
		why = ""
		for _, tb := range db.SyncTables() {
			want := e.sourceRows(account, tb)
			got, err := synctest.DestLines(e.ctx, dest, tb)
			if err != nil {
				why = tb.Name + ": " + err.Error()
				break
			}
			if d := diff(want, got); d != "" {
				why = tb.Name + ": " + d
				break
			}
		}
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("the destination did not catch up within %v: %s", within, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func diff(want, got []string) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Sprintf("row %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	return ""
}

func (e *env) status(account, id string) []db.SyncTableStatus {
	e.t.Helper()
	st, err := e.store.SyncStatuses(e.ctx, account, id, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// A PostgreSQL destination fills from the account's rows (backfill in
// pages smaller than the data), then follows inserts, updates of a parent
// whose columns its children carry, and deletes; another account's rows
// never reach it.
func TestPostgresDestinationFollows(t *testing.T) {
	e := open(t, datasync.Config{Page: 4})
	for i := range 5 {
		e.shipment(e.acme, fmt.Sprintf("ACME%04d", i), 2)
		e.shipment(e.other, fmt.Sprintf("OTHR%04d", i), 1)
	}
	_, destURL := destination(t)
	dest := dbtest.Open(t, destURL)
	id := e.addPostgres(e.acme, destURL)
	e.waitEqual(dest, e.acme, 60*time.Second)
	for _, st := range e.status(e.acme, id) {
		if st.Phase != "follow" || st.RowsWritten == 0 || st.LastError != "" {
			t.Errorf("after the backfill, %s: %+v", st.Table, st)
		}
	}

	// Follow: a new shipment, a parent's change its containers carry, a
	// deleted container, and the other account's writes.
	s := e.shipment(e.acme, "ACME9999", 3)
	e.exec(`UPDATE shipments SET tags = '{z,y}', bill_of_lading_number = 'CHANGED' WHERE account_id = $1 AND id = $2`, e.acme, s)
	e.exec(`DELETE FROM containers WHERE account_id = $1 AND id = (SELECT id FROM containers WHERE account_id = $1 AND shipment_id = $2 ORDER BY number LIMIT 1)`, e.acme, s)
	e.exec(`UPDATE tracking_requests SET status = 'tracking_stopped' WHERE account_id = $1`, e.acme)
	e.shipment(e.other, "OTHR9999", 2)
	e.waitEqual(dest, e.acme, 30*time.Second)

	var foreign int
	if err := dest.QueryRow(`SELECT (SELECT count(*) FROM shipments WHERE customer_id <> $1) + (SELECT count(*) FROM containers WHERE customer_id <> $1)`, e.acme).Scan(&foreign); err != nil {
		t.Fatal(err)
	}
	if foreign != 0 {
		t.Fatalf("%d rows of another account at the destination", foreign)
	}
	var status int
	if err := dest.QueryRow(`SELECT count(*) FROM _transfer_status WHERE data_model_name = ANY('{shipments,containers,tracking_requests,transport_events}')`).Scan(&status); err != nil {
		t.Fatal(err)
	}
	if status != 4 {
		t.Fatalf("_transfer_status has %d of the 4 tables", status)
	}
	head, err := e.store.SyncLogHead(e.ctx, e.acme)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		behind := ""
		for _, st := range e.status(e.acme, id) {
			if st.Pos < head {
				behind = fmt.Sprintf("%s at %d, head %d", st.Table, st.Pos, head)
			}
		}
		if behind == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("positions did not reach the head: %s", behind)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
