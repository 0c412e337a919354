package datasync_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"shipgraph/datasync"
	"shipgraph/db"
	"shipgraph/testkit"
	"shipgraph/testkit/duckdbtest"
	"shipgraph/testkit/s3test"
	"shipgraph/testkit/synctest"
)

// objectURL is the object-store destination URL of a prefix of the
// server's bucket.
func objectURL(srv *s3test.Server, prefix string) string {
	return fmt.Sprintf("s3://%s:%s@%s/%s?endpoint=%s&region=%s&use_path_style=true", s3test.Access, s3test.Secret,
		srv.Bucket, prefix, srv.Endpoint, s3test.Region)
}

// addDestination stores a destination of the kind and the tables
// (default: every table) and enqueues its job. The stored URL is a label
// (the sealed one is used).
func (e *env) addDestination(account, kind, dest string, tables ...string) string {
	e.t.Helper()
	if len(tables) == 0 {
		for _, tb := range db.SyncTables() {
			tables = append(tables, tb.Name)
		}
	}
	sealed, err := e.syncer.Sealer().Seal(dest)
	if err != nil {
		e.t.Fatal(err)
	}
	label := "s3://lake"
	if kind == datasync.KindPostgres {
		label = "postgres://warehouse"
	}
	d, err := e.store.CreateSyncDestination(e.ctx, db.SyncDestination{AccountID: account, Kind: kind, URL: label, Tables: tables}, sealed)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.syncer.Enqueue(e.ctx, account, d.ID); err != nil {
		e.t.Fatal(err)
	}
	return d.ID
}

// waitCaughtUp waits until every table of the destination follows the log
// at its head (what was committed before the call is written).
func (e *env) waitCaughtUp(account, id string, within time.Duration) {
	e.t.Helper()
	head, err := e.store.SyncLogHead(e.ctx, account)
	if err != nil {
		e.t.Fatal(err)
	}
	var behind string
	testkit.WaitFor(e.t, within, "the destination to reach the log's head", func() bool {
		behind = ""
		sts := e.status(account, id)
		if len(sts) != len(db.SyncTables()) {
			behind = fmt.Sprintf("%d tables of %d have a status", len(sts), len(db.SyncTables()))
		}
		for _, st := range sts {
			if st.Phase != "follow" || st.Pos < head {
				behind = fmt.Sprintf("%s: %s at %d of %d (%s)", st.Table, st.Phase, st.Pos, head, st.LastError)
			}
		}
		return behind == ""
	})
}

// currentQuery is the documented query of a table's current rows: per
// key, the row of the largest _position, unless it is a deletion.
func currentQuery(dir string, tb *db.SyncTable, cols string) string {
	return fmt.Sprintf(`SELECT %s FROM read_parquet('%s/%s/*.parquet', union_by_name = true)
QUALIFY row_number() OVER (PARTITION BY %s ORDER BY _position DESC) = 1 AND NOT _deleted
ORDER BY %s`, cols, dir, tb.Name, tb.Key(), tb.Key())
}

// lakeQuery is the query of the table's current rows in the Parquet files
// under dir (timestamps as microseconds since the epoch).
func lakeQuery(dir string, tb *db.SyncTable) string {
	var cols []string
	for _, c := range tb.Columns {
		if c.Type == "timestamp" {
			cols = append(cols, "epoch_us("+c.Name+")")
		} else {
			cols = append(cols, c.Name)
		}
	}
	return currentQuery(dir, tb, strings.Join(cols, ", "))
}

// lakeRows turns lakeQuery's answer into one line per row as sourceRows
// has them.
func lakeRows(t *testing.T, tb *db.SyncTable, rows [][]any) []string {
	t.Helper()
	var out []string
	for _, r := range rows {
		vals := make([]any, len(r))
		for i, v := range r {
			s, isString := v.(string)
			switch {
			case v == nil:
			case tb.Columns[i].Type == "timestamp" && isString:
				us, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					t.Fatalf("%s: %v", tb.Columns[i].Name, err)
				}
				vals[i] = time.UnixMicro(us).UTC()
			case tb.Columns[i].Type == "integer" && isString:
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					t.Fatalf("%s: %v", tb.Columns[i].Name, err)
				}
				vals[i] = n
			default:
				vals[i] = v
			}
		}
		out = append(out, synctest.Line(vals))
	}
	return out
}

// checkLake compares every table's current rows in the Parquet files
// under prefix with the account's rows at the source, and checks the
// manifests, _transfer_status, and that no row of another account is in
// any version of any file.
func (e *env) checkLake(srv *s3test.Server, prefix, account string) {
	t := e.t
	t.Helper()
	dir := srv.Download(t, prefix)
	var queries []string
	for _, tb := range db.SyncTables() {
		queries = append(queries, lakeQuery(dir, tb))
	}
	queries = append(queries, fmt.Sprintf(`SELECT (SELECT count(*) FROM read_parquet('%[1]s/shipments/*.parquet') WHERE customer_id <> '%[2]s')
 + (SELECT count(*) FROM read_parquet('%[1]s/containers/*.parquet') WHERE customer_id <> '%[2]s')`, dir, account),
		fmt.Sprintf(`SELECT string_agg(data_model_name, ',' ORDER BY data_model_name) FROM read_parquet('%s/_transfer_status/*.parquet')`, dir))
	answers := duckdbtest.Query(t, queries...)
	for i, tb := range db.SyncTables() {
		want := e.sourceRows(account, tb)
		got := lakeRows(t, tb, answers[i])
		if d := diff(want, got); d != "" {
			t.Fatalf("%s in the object store: %s", tb.Name, d)
		}
		files, err := filepath.Glob(filepath.Join(dir, tb.Name, "*.parquet"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Parquet files (%v)", tb.Name, err)
		}
		for _, f := range files {
			var m struct {
				File     string
				Position int64
				Rows     int
			}
			body, err := os.ReadFile(strings.TrimSuffix(f, ".parquet") + ".manifest.json")
			if err != nil {
				t.Fatalf("%s has no manifest: %v", f, err)
			}
			if err := json.Unmarshal(body, &m); err != nil || m.File != tb.Name+"/"+filepath.Base(f) {
				t.Fatalf("%s's manifest: %v %s", f, err, body)
			}
		}
	}
	n := len(db.SyncTables())
	foreign, status := answers[n], answers[n+1]
	if fmt.Sprint(foreign[0][0]) != "0" {
		t.Fatalf("%v rows of another account in the object store", foreign[0][0])
	}
	if got := fmt.Sprint(status[0][0]); got != "containers,shipments,tracking_requests,transport_events" {
		t.Fatalf("_transfer_status has %s", got)
	}
}

// An object-store destination on a real S3-compatible server fills in
// Parquet files (backfill files of several row groups), then follows
// inserts, a parent's change its children carry and deletes; DuckDB's
// latest-version query of the files equals the source, and another
// account's rows (its own destination, beside it in the bucket) are not
// there.
func TestObjectStoreDestinationFollows(t *testing.T) {
	e := open(t, datasync.Config{Page: 4, FilePages: 2})
	for i := range 5 {
		e.shipment(e.acme, fmt.Sprintf("ACME%04d", i), 2)
		e.shipment(e.other, fmt.Sprintf("OTHR%04d", i), 1)
	}
	srv := s3test.Start(t, "lake")
	id := e.addDestination(e.acme, datasync.KindObjectStore, objectURL(srv, "acme"))
	otherID := e.addDestination(e.other, datasync.KindObjectStore, objectURL(srv, "other"))
	e.waitCaughtUp(e.acme, id, 60*time.Second)
	e.checkLake(srv, "acme", e.acme)

	s := e.shipment(e.acme, "ACME9999", 3)
	e.exec(`UPDATE shipments SET tags = '{z,y}', bill_of_lading_number = 'CHANGED' WHERE account_id = $1 AND id = $2`, e.acme, s)
	e.exec(`DELETE FROM containers WHERE account_id = $1 AND id = (SELECT id FROM containers WHERE account_id = $1 AND shipment_id = $2 ORDER BY number LIMIT 1)`, e.acme, s)
	// Its tracking requests let go of it first: on Citus the key is NO
	// ACTION, not SET NULL (the distribution column is part of it; the
	// store never deletes a shipment, so a manual delete does this).
	e.exec(`UPDATE tracking_requests SET shipment_id = NULL WHERE account_id = $1 AND shipment_id IN
		(SELECT id FROM shipments WHERE account_id = $1 AND bill_of_lading_number = 'ACME0000')`, e.acme)
	e.exec(`DELETE FROM shipments WHERE account_id = $1 AND bill_of_lading_number = 'ACME0000'`, e.acme)
	e.exec(`UPDATE tracking_requests SET status = 'tracking_stopped' WHERE account_id = $1`, e.acme)
	e.shipment(e.other, "OTHR9999", 2)
	e.waitCaughtUp(e.acme, id, 30*time.Second)
	e.checkLake(srv, "acme", e.acme)
	e.waitCaughtUp(e.other, otherID, 30*time.Second)
	e.checkLake(srv, "other", e.other)

	// A copy from scratch replaces the files: a row tampered with comes
	// back as the source has it.
	if _, err := e.store.ResyncSyncDestination(e.ctx, e.acme, id); err != nil {
		t.Fatal(err)
	}
	if err := e.syncer.Enqueue(e.ctx, e.acme, id); err != nil {
		t.Fatal(err)
	}
	e.waitCaughtUp(e.acme, id, 60*time.Second)
	e.checkLake(srv, "acme", e.acme)
}
