//go:build linux

package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shipgraph/testkit"

	"shipgraph/db/dbtest"
	"shipgraph/testkit/replicatest"
)

// multiHostURL is the URL form libpq documents for several hosts, each a
// Unix socket directory (percent-encoded), with target_session_attrs.
func multiHostURL(socketDirs ...string) string {
	hosts := make([]string, len(socketDirs))
	for i, d := range socketDirs {
		hosts[i] = url.PathEscape(d) + ":5432"
	}
	return "postgres://postgres@" + strings.Join(hosts, ",") + "/shipgraph?target_session_attrs=read-write&sslmode=disable"
}

// TestServeBadDatabaseURL: a bad value is a clear error naming the
// setting, at once, not a wait for a database that will never answer.
func TestServeBadDatabaseURL(t *testing.T) {
	for _, c := range []struct{ flag, value, want string }{
		{"--database-url", "postgres://u@h1:5432,h2:port/db", "DATABASE_URL: port \"port\" of host h2"},
		{"--database-url", "postgres://u@h1/db?target_session_attrs=writable", `DATABASE_URL: wrong value for "target_session_attrs"`},
		{"--database-replica-urls", "mysql://r/db", "DATABASE_REPLICA_URLS: scheme \"mysql\""},
	} {
		args := []string{"serve", "--addr", "127.0.0.1:0", "--shutdown-delay", "0"}
		if c.flag != "--database-url" {
			args = append(args, "--database-url", "postgres://127.0.0.1:1/db")
		}
		begin := time.Now()
		code, _, stderr := runCmd(t, t.Context(), append(args, c.flag, c.value)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s %s: exit %d, stderr %q; want an error saying %q", c.flag, c.value, code, stderr, c.want)
		}
		if d := time.Since(begin); d > 5*time.Second {
			t.Errorf("%s %s: took %v to fail: retried?", c.flag, c.value, d)
		}
	}
}

// TestFailoverPromote: serve given a primary and its synchronous hot
// standby in libpq's URL form (the standby listed first, so
// target_session_attrs=read-write must skip it) starts and writes to the
// primary; under reads and writes the primary's postmaster is killed (-9)
// and the standby promoted with pg_ctl promote. Every request is answered
// 2xx or 503 with Retry-After (never 500), writes succeed again on the new
// primary, every write acknowledged before, during and after is there
// afterwards (and read back at once, through a read replica cascading from
// the standby), /readyz says 503 only while there is no primary and lists
// the replica up again once it followed the promotion, the subscriptions
// and the webhook endpoint lose and double nothing (underLoad's probe), and
// a key revoked after the switch ends a second instance's subscription.
func TestFailoverPromote(t *testing.T) {
	pg := dbtest.NewServer(t)
	keys := seedKeys(t, pg.URL(), "3")
	standby := replicatest.Start(t, pg, replicatest.Options{})
	admin, err := sql.Open("postgres", pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	// Synchronous: a commit is acknowledged once the standby has flushed
	// it. dbtest's servers run with synchronous_commit=off on their
	// command line; the database's own setting wins over it.
	for _, q := range []string{"ALTER SYSTEM SET synchronous_standby_names = '*'", "SELECT pg_reload_conf()",
		"ALTER DATABASE shipgraph SET synchronous_commit = on"} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for {
		var state sql.NullString
		if err := admin.QueryRow("SELECT max(sync_state) FROM pg_stat_replication").Scan(&state); err != nil {
			t.Fatal(err)
		}
		if state.String == "sync" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	admin.Close()

	// A read replica streaming from the standby (cascading): it follows
	// the standby onto its new timeline when it is promoted.
	replica := replicatest.Cascade(t, pg, standby, replicatest.Options{})
	base := serveLogged(t, "--database-url", multiHostURL(standby.SocketDir(), pg.SocketDir()), "--database-replica-urls", replica.URL(),
		"--db-connect-timeout", "2s", "--webhook-allow-private-urls", "--webhook-limit", "100000", "--rate-limit", "0")
	key := keys["acme admin"]
	second := startSecond(t, multiHostURL(standby.SocketDir(), pg.SocketDir()), keys["acme member"])
	r := underLoad(t, base, key, func() {
		pg.Kill(t)
		standby.Promote(t)
	})
	r.check(t, standby.URL())
	second.revokeAfter(t, base, standby.URL())

	// The replica followed: /readyz lists it up (on the new primary's
	// timeline), and reads go to it again.
	testkit.WaitFor(t, 30*time.Second, "/readyz listing the replica up after the promotion", func() bool {
		res, body := get(t, base+"/readyz", "")
		return res.StatusCode == http.StatusOK && strings.Contains(string(body), ": up,")
	})
	// Reads reach the replica again once it has replayed the key's last
	// write (read-your-writes sends them to the primary until then). Each
	// try asks a page no earlier request asked for (page size 7, page
	// number the try's): the response cache holds no answer for it, so
	// the read reaches a database.
	tries := 0
	took := testkit.WaitFor(t, 30*time.Second, "a read after the promotion answered by the replica that followed it", func() bool {
		tries++
		before := testkit.QueriesOn(t, "replica")
		if res, body := get(t, base+fmt.Sprintf("/v2/shipments?page%%5Bsize%%5D=7&page%%5Bnumber%%5D=%d", tries), key); res.StatusCode != http.StatusOK {
			t.Fatalf("GET /v2/shipments: %d %s", res.StatusCode, body)
		}
		return testkit.QueriesOn(t, "replica") > before
	})
	t.Logf("the replica answered a read after %d tries (%v) once /readyz listed it up", tries, took)
}

// loadResult is what underLoad saw.
type loadResult struct {
	base, key string
	probe     *liveProbe
	outageEnd time.Time // when the first write that succeeded after the kill began
	acked     []string  // webhook ids whose creation was answered 201
	bad       []string  // answers neither 2xx nor 503 with Retry-After
	n503      int64
	recovered time.Duration // from the kill to the first write that succeeded after one failed
	readyDown bool
}

// underLoad runs writes (POST /v2/webhooks; stop_tracking and
// resume_tracking of the account's shipments in turn, which log changes
// and raise webhook notifications), reads (GET /v2/shipments) and /readyz
// polls against base, with a liveProbe watching (both subscriptions and a
// webhook endpoint), calls kill once 20 writes succeeded, and returns once
// 20 writes begun after the kill succeeded.
func underLoad(t *testing.T, base, key string, kill func()) *loadResult {
	t.Helper()
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(recv.Close)
	do := func(method, path, body string) (int, http.Header, []byte, error) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Token "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil, nil, err
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, b, nil
	}
	if status, _, body, err := do(http.MethodGet, "/readyz", ""); err != nil || status != http.StatusOK {
		t.Fatalf("/readyz before the failover: %d %s %v", status, body, err)
	}
	status, _, body, err := do(http.MethodGet, "/v2/shipments", "")
	var list struct{ Data []struct{ ID string } }
	if err != nil || status != http.StatusOK || json.Unmarshal(body, &list) != nil || len(list.Data) == 0 {
		t.Fatalf("GET /v2/shipments: %d %s %v", status, body, err)
	}
	ships := make([]string, len(list.Data))
	for i, d := range list.Data {
		ships[i] = d.ID
	}
	// toggle is the i-th tracking write: stop, then resume, each shipment
	// in turn (a stop of a stopped shipment changes nothing).
	toggle := func(i int) (int, http.Header, []byte, error) {
		verb := "stop_tracking"
		if (i/len(ships))%2 == 1 {
			verb = "resume_tracking"
		}
		return do(http.MethodPatch, "/v2/shipments/"+ships[i%len(ships)]+"/"+verb, "")
	}
	probe := startProbe(t, base, key, func() {
		for i := range 2 * len(ships) {
			if status, _, body, err := toggle(i); err != nil || status != http.StatusOK {
				t.Fatalf("tracking write before the load: %d %s %v", status, body, err)
			}
		}
	})

	var (
		mu        sync.Mutex
		acked     []string // webhook ids whose creation was answered 201
		bad       []string // answers neither 2xx nor 503 with Retry-After
		n503      atomic.Int64
		killed    atomic.Int64 // unix nanos of the kill, 0 before
		failed    atomic.Bool  // a write failed after the kill
		firstOK   = make(chan time.Duration, 1)
		okStart   atomic.Int64 // unix nanos: when the first write that succeeded after the kill began
		stop      = make(chan struct{})
		wg        sync.WaitGroup
		writes    atomic.Int64
		readyDown atomic.Bool
	)
	check := func(what string, status int, h http.Header, body []byte, err error) bool {
		switch {
		case err != nil:
			mu.Lock()
			bad = append(bad, fmt.Sprintf("%s: %v", what, err))
			mu.Unlock()
		case status == http.StatusServiceUnavailable && h.Get("Retry-After") != "":
			n503.Add(1)
			if killed.Load() != 0 && strings.HasPrefix(what, "POST") {
				failed.Store(true)
			}
		case status >= 200 && status < 300:
			return true
		default:
			mu.Lock()
			bad = append(bad, fmt.Sprintf("%s: %d %s", what, status, body))
			mu.Unlock()
		}
		return false
	}
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pace := time.NewTicker(2 * time.Millisecond) // load, not a wait
			defer pace.Stop()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-pace.C:
				}
				started := time.Now().UnixNano()
				// Subscribed to an event the load never raises (a
				// resume_tracking raises tracking_request.succeeded).
				status, h, body, err := do(http.MethodPost, "/v2/webhooks", fmt.Sprintf(
					`{"data":{"type":"webhook","attributes":{"url":"%s/%d/%d","events":["document.extraction_failed"]}}}`, recv.URL, w, i))
				if !check("POST /v2/webhooks", status, h, body, err) {
					continue
				}
				var doc struct{ Data struct{ ID string } }
				if json.Unmarshal(body, &doc) != nil || doc.Data.ID == "" {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("POST /v2/webhooks: %d %s", status, body))
					mu.Unlock()
					continue
				}
				mu.Lock()
				acked = append(acked, doc.Data.ID)
				mu.Unlock()
				writes.Add(1)
				// Read-your-writes (from a replica once it replayed
				// the write, across the timeline switch too): never 404.
				status, h, body, err = do(http.MethodGet, "/v2/webhooks/"+doc.Data.ID, "")
				check("GET /v2/webhooks/{id} after its 201 (read-your-writes)", status, h, body, err)
				// Recovered: the first write to succeed after one failed
				// (writes in flight at the kill can still commit on the
				// old primary's orphaned backends, replicated).
				if k := killed.Load(); k != 0 && started > k && failed.Load() && okStart.CompareAndSwap(0, started) {
					firstOK <- time.Since(time.Unix(0, k))
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		pace := time.NewTicker(5 * time.Millisecond) // load, not a wait
		defer pace.Stop()
		for i := 2 * len(ships); ; i++ {
			select {
			case <-stop:
				return
			case <-pace.C:
			}
			status, h, body, err := toggle(i)
			check("PATCH /v2/shipments/{id}/"+map[bool]string{true: "stop", false: "resume"}[(i/len(ships))%2 == 0]+"_tracking", status, h, body, err)
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		pace := time.NewTicker(5 * time.Millisecond) // load, not a wait
		defer pace.Stop()
		for {
			select {
			case <-stop:
				return
			case <-pace.C:
			}
			status, h, body, err := do(http.MethodGet, "/v2/shipments", "")
			check("GET /v2/shipments", status, h, body, err)
			status, h, body, err = do(http.MethodGet, "/readyz", "")
			if err == nil && status == http.StatusServiceUnavailable {
				readyDown.Store(true)
			}
			check("GET /readyz", status, h, body, err)
		}
	}()

	waitWrites := func(n int64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for writes.Load() < n {
			if time.Now().After(deadline) {
				mu.Lock()
				t.Fatalf("only %d writes acknowledged, want %d; %d answers 503; failures (%d): %q", writes.Load(), n, n503.Load(), len(bad), bad[:min(len(bad), 3)])
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitWrites(20)
	begin := time.Now()
	killed.Store(begin.UnixNano())
	kill()
	promoted := time.Since(begin)
	var recovered time.Duration
	select {
	case recovered = <-firstOK:
	case <-time.After(30 * time.Second):
		t.Fatal("no write succeeded within 30 s of the kill")
	}
	waitWrites(writes.Load() + 20)
	close(stop)
	wg.Wait()
	t.Logf("kill (and promote) returned after %v, kill to first write %v, %d writes acknowledged, %d answers 503, /readyz down meanwhile: %v",
		promoted.Round(time.Millisecond), recovered.Round(time.Millisecond), writes.Load(), n503.Load(), readyDown.Load())
	return &loadResult{base: base, key: key, probe: probe, outageEnd: time.Unix(0, okStart.Load()), acked: acked, bad: bad, n503: n503.Load(), recovered: recovered, readyDown: readyDown.Load()}
}

// check: no answer but 2xx or 503 with Retry-After, every acknowledged
// write on the new primary (newPrimary), /readyz 200 at the end.
func (r *loadResult) check(t *testing.T, newPrimary string) {
	t.Helper()
	for _, b := range r.bad {
		t.Errorf("answer neither 2xx nor 503 with Retry-After: %s", b)
	}

	// Every acknowledged write is on the new primary.
	sdb := dbtest.Open(t, newPrimary)
	var missing []string
	for _, id := range r.acked {
		var n int
		if err := sdb.QueryRow("SELECT count(*) FROM webhooks WHERE id = $1", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d acknowledged writes missing on the new primary: %v", len(missing), len(r.acked), missing)
	}
	if res, body := get(t, r.base+"/readyz", ""); res.StatusCode != http.StatusOK {
		t.Errorf("/readyz after the failover: %d %s", res.StatusCode, body)
	}
	r.probe.check(t, newPrimary, r.outageEnd)
}

// TestReplicaOldTimeline: a read replica left on the old timeline by a
// failover (it streamed from the lost primary, which it cannot follow)
// must not serve reads, however far it replayed. Here it replayed further
// than the promoted standby ever received (the standby was stopped while
// the primary wrote on), so the new primary's positions — its timeline
// continues from the switch point — are below the replica's: a
// read-your-writes mark of a write on the new primary looks replayed by
// it, and its lag looks nil. The write must still be read back (from the
// primary), and /readyz must list the replica as down, saying why.
func TestReplicaOldTimeline(t *testing.T) {
	pg := dbtest.NewServer(t)
	keys := seedKeys(t, pg.URL(), "3")
	standby := replicatest.Start(t, pg, replicatest.Options{})
	old := replicatest.Start(t, pg, replicatest.Options{})
	standby.Stop(t)
	admin := dbtest.Open(t, pg.URL())
	var end string
	if err := admin.QueryRow(`CREATE TABLE failover_filler AS SELECT g, repeat('x', 200) AS pad FROM generate_series(1, 20000) g`).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.QueryRow(`SELECT pg_current_wal_insert_lsn()::text`).Scan(&end); err != nil {
		t.Fatal(err)
	}
	oldDB := dbtest.Open(t, old.URL())
	testkit.WaitFor(t, 30*time.Second, "the replica replaying the primary's last write", func() bool {
		var ok bool
		return oldDB.QueryRow(`SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, end).Scan(&ok) == nil && ok
	})
	pg.Kill(t)
	standby.Start(t)
	standby.Promote(t)

	base := serveLogged(t, "--database-url", standby.URL(), "--database-replica-urls", old.URL(), "--rate-limit", "0", "--webhook-allow-private-urls")
	key := keys["acme admin"]
	for i := range 5 {
		status, body := call(t, http.MethodPost, base+"/v2/webhooks", key,
			fmt.Sprintf(`{"data":{"type":"webhook","attributes":{"url":"http://127.0.0.1:1/%d","events":["document.extraction_failed"]}}}`, i))
		var doc struct{ Data struct{ ID string } }
		if status != http.StatusCreated || json.Unmarshal(body, &doc) != nil {
			t.Fatalf("POST /v2/webhooks: %d %s", status, body)
		}
		if status, body := call(t, http.MethodGet, base+"/v2/webhooks/"+doc.Data.ID, key, ""); status != http.StatusOK {
			t.Errorf("GET of the webhook just created (read-your-writes): %d %s", status, body)
		}
	}
	res, body := get(t, base+"/readyz", "")
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "replica ") || !strings.Contains(string(body), ": down") || !strings.Contains(string(body), "timeline") {
		t.Errorf("/readyz with the replica on the old timeline: %d %s; want 200 listing it down, saying which timeline", res.StatusCode, body)
	}
	t.Logf("/readyz: %s", body)
}
