//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/testkit"
	"shipgraph/testkit/duckdbtest"
	"shipgraph/testkit/pg"
	"shipgraph/testkit/s3test"
	"shipgraph/testkit/synctest"
)

// TestHelperServe is the child process of TestSyncSurvivesServeKill: the
// test binary re-run as `shipgraph serve` with the arguments of
// SHIPGRAPH_HELPER_SERVE (one a line).
func TestHelperServe(t *testing.T) {
	args := os.Getenv("SHIPGRAPH_HELPER_SERVE")
	if args == "" {
		t.Skip("only the child process of TestSyncSurvivesServeKill runs it")
	}
	os.Exit(run(context.Background(), strings.Split(args, "\n"), os.Stdout, os.Stderr))
}

// childServe runs serve in a child process (the test binary) and returns
// it and its base URL once it listens.
func childServe(t *testing.T, env []string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperServe$")
	cmd.Env = append(append(os.Environ(), env...),
		"SHIPGRAPH_HELPER_SERVE="+strings.Join(append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn", "--shutdown-delay", "0"}, args...), "\n"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr := &testkit.Log{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "shipgraph listening on "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd, rest
		}
	}
	t.Fatalf("serve exited before listening: %s", stderr.String())
	return nil, ""
}

// A serve process killed with SIGKILL while it syncs a PostgreSQL and an
// object-store destination under writes, then started again: both
// destinations catch up with nothing lost, and in PostgreSQL nothing
// doubled (every table equals the source, key by key).
func TestSyncSurvivesServeKill(t *testing.T) {
	ctx := context.Background()
	src := dbtest.NewDB(t)
	keys := seedKeys(t, src, "30")
	store, err := db.Open(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var acme string
	if err := store.SQL().QueryRow(`SELECT id FROM accounts WHERE slug = 'acme'`).Scan(&acme); err != nil {
		t.Fatal(err)
	}

	destSrv := dbtest.NewServer(t)
	admin := dbtest.Open(t, destSrv.URL())
	if _, err := admin.Exec(`CREATE DATABASE warehouse`); err != nil {
		t.Fatal(err)
	}
	du, _ := url.Parse(destSrv.URL())
	du.Path = "/warehouse"
	dest := dbtest.Open(t, du.String())
	lake := s3test.Start(t, "lake")

	env := []string{
		"SYNC_SECRET_KEY=" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")),
		"WEBHOOK_ALLOW_PRIVATE_URLS=true",
		// The killed process' job is rescued once its timeout passed (River
		// waits for the worker's own, 80 s); the lease (30 s) has expired
		// by then.
		"TRACKING_POLL_TIMEOUT=5s",
		"TRACKING_RESCUE_AFTER=10s",
	}
	args := []string{"--database-url", src, "--data-dir", t.TempDir()}
	child, base := childServe(t, env, args...)

	add := func(kind, u string) string {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"data": map[string]any{"type": "sync_destination", "attributes": map[string]any{
			"name": kind, "kind": kind, "url": u}}})
		req, _ := http.NewRequest(http.MethodPost, base+"/v2/sync_destinations", bytes.NewReader(body))
		req.Header.Set("Authorization", "Token "+keys["acme admin"])
		req.Header.Set("Content-Type", "application/vnd.api+json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var doc struct{ Data struct{ ID string } }
		if err := json.NewDecoder(res.Body).Decode(&doc); err != nil || res.StatusCode != http.StatusCreated {
			t.Fatalf("POST /v2/sync_destinations %s: %d %v", kind, res.StatusCode, err)
		}
		return doc.Data.ID
	}
	pgID := add("postgres", du.String())
	lakeID := add("object_store", fmt.Sprintf("s3://%s:%s@lake/acme?endpoint=%s&region=%s&use_path_style=true",
		s3test.Access, s3test.Secret, lake.Endpoint, s3test.Region))

	caughtUp := func(within time.Duration) {
		t.Helper()
		head, err := store.SyncLogHead(ctx, acme)
		if err != nil {
			t.Fatal(err)
		}
		var behind string
		testkit.WaitFor(t, within, "the destinations to reach the log's head", func() bool {
			behind = ""
			for _, id := range []string{pgID, lakeID} {
				sts, err := store.SyncStatuses(ctx, acme, id, nil)
				if err != nil || len(sts) != len(db.SyncTables()) {
					behind = fmt.Sprintf("%s: %d statuses %v", id, len(sts), err)
				}
				for _, st := range sts {
					if st.Phase != "follow" || st.Pos < head {
						behind = fmt.Sprintf("%s %s: %s at %d of %d (%s)", id, st.Table, st.Phase, st.Pos, head, st.LastError)
					}
				}
			}
			return behind == ""
		})
	}
	caughtUp(2 * time.Minute)

	// Writes: inserts, updates and deletes of acme's shipments.
	wctx, stopWrites := context.WithCancel(ctx)
	var writes atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; wctx.Err() == nil; i++ {
			var err error
			switch i % 3 {
			case 0:
				_, err = store.SQL().ExecContext(wctx, `WITH s AS (INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number,
shipping_line_scac, shipping_line_name, shipping_line_short_name) VALUES ($1, $2, $2, 'MAEU', 'Maersk', 'Maersk') RETURNING id)
INSERT INTO containers (account_id, shipment_id, number) SELECT $1, id, $2 FROM s`, acme, fmt.Sprintf("K%09d", i))
			case 1:
				_, err = store.SQL().ExecContext(wctx, `UPDATE shipments SET pod_vessel_name = $2 WHERE account_id = $1
AND id = (SELECT id FROM shipments WHERE account_id = $1 ORDER BY created_at DESC LIMIT 1)`, acme, fmt.Sprintf("V%d", i))
			case 2:
				_, err = store.SQL().ExecContext(wctx, `DELETE FROM containers WHERE account_id = $1
AND id = (SELECT id FROM containers WHERE account_id = $1 ORDER BY created_at LIMIT 1)`, acme)
			}
			if err == nil {
				writes.Add(1)
			}
			select {
			case <-wctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	written := func() int64 {
		var n int64
		for _, id := range []string{pgID, lakeID} {
			sts, _ := store.SyncStatuses(ctx, acme, id, nil)
			for _, st := range sts {
				n += st.RowsWritten
			}
		}
		return n
	}
	before := written()
	// Killed while it applies the writes (a batch every poll).
	testkit.WaitFor(t, 30*time.Second, "the writes to be followed", func() bool { return written() > before+20 })
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	killed := time.Now()
	for time.Since(killed) < 3*time.Second {
		time.Sleep(100 * time.Millisecond)
	}
	childServe(t, env, args...)
	time.Sleep(2 * time.Second)
	stopWrites()
	wg.Wait()
	if writes.Load() < 50 {
		t.Fatalf("only %d writes", writes.Load())
	}
	caughtUp(3 * time.Minute)

	// PostgreSQL: every table equals the source, row by row.
	for _, tb := range db.SyncTables() {
		want, err := synctest.SourceLines(context.Background(), store, acme, tb)
		if err != nil {
			t.Fatal(err)
		}
		got, err := synctest.DestLines(context.Background(), dest, tb)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != len(got) {
			t.Fatalf("%s: %d rows at the destination, %d at the source", tb.Name, len(got), len(want))
		}
		for i := range want {
			if want[i] != got[i] {
				t.Fatalf("%s row %d:\n got %s\nwant %s", tb.Name, i, got[i], want[i])
			}
		}
	}
	// The object store: DuckDB's current shipments (key, the updated
	// column) and containers (keys) equal the source.
	dir := lake.Download(t, "acme")
	answers := duckdbtest.Query(t,
		fmt.Sprintf(`SELECT shipment_id || '|' || coalesce(pod_vessel_name, '') FROM read_parquet('%s/shipments/*.parquet', union_by_name = true)
QUALIFY row_number() OVER (PARTITION BY shipment_id ORDER BY _position DESC) = 1 AND NOT _deleted ORDER BY shipment_id`, dir),
		fmt.Sprintf(`SELECT container_id FROM read_parquet('%s/containers/*.parquet', union_by_name = true)
QUALIFY row_number() OVER (PARTITION BY container_id ORDER BY _position DESC) = 1 AND NOT _deleted ORDER BY container_id`, dir))
	for i, q := range []string{
		`SELECT id::text || '|' || coalesce(pod_vessel_name, '') FROM shipments WHERE account_id = $1 ORDER BY id`,
		`SELECT id::text FROM containers WHERE account_id = $1 ORDER BY id`,
	} {
		want := pg.Column[string](t, store.SQL(), q, acme)
		var got []string
		for _, r := range answers[i] {
			got = append(got, fmt.Sprint(r[0]))
		}
		if strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Fatalf("object store query %d: %d rows, want %d", i, len(got), len(want))
		}
	}
}
