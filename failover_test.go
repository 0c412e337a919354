//go:build linux

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"shipgraph/db/dbtest"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
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
		res, body := testkit.Get(t, base+"/readyz", "")
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
		if res, body := testkit.Get(t, base+fmt.Sprintf("/v2/shipments?page%%5Bsize%%5D=7&page%%5Bnumber%%5D=%d", tries), key); res.StatusCode != http.StatusOK {
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
	outageEnd time.Time   // when the first write that succeeded after the last failed one began
	killedAt  time.Time   // when kill was called
	acked     []string    // webhook ids whose creation was answered 201
	ackedAt   []time.Time // when each was answered (acked[i] at ackedAt[i])
	bad       []string    // answers neither 2xx nor 503 with Retry-After
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
		acked     []string    // webhook ids whose creation was answered 201
		ackedAt   []time.Time // when each was answered
		bad       []string    // answers neither 2xx nor 503 with Retry-After
		n503      atomic.Int64
		killed    atomic.Int64 // unix nanos of the kill, 0 before
		failed    atomic.Bool  // a write failed after the kill
		promoted  atomic.Int64 // unix nanos: when kill (and promote) returned, 0 before
		firstOK   = make(chan time.Duration, 1)
		okStart   atomic.Int64 // unix nanos: when the first write that succeeded after the kill began
		lastFail  atomic.Int64 // unix nanos: when the last write that failed after the kill was answered
		okStarts  []int64      // unix nanos: when each write that succeeded after the kill began (mu)
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
				lastFail.Store(time.Now().UnixNano())
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
				ackedAt = append(ackedAt, time.Now())
				if k := killed.Load(); k != 0 && started > k {
					okStarts = append(okStarts, started)
				}
				mu.Unlock()
				writes.Add(1)
				// Read-your-writes (from a replica once it replayed
				// the write, across the timeline switch too): never 404.
				status, h, body, err = do(http.MethodGet, "/v2/webhooks/"+doc.Data.ID, "")
				check("GET /v2/webhooks/{id} after its 201 (read-your-writes)", status, h, body, err)
				// Recovered: the first write to succeed after one failed
				// (writes in flight at the kill can still commit on the
				// old primary's orphaned backends, replicated).
				// Or, when no write failed at all (each one in flight
				// was retried by the server until the new primary took
				// it), the first to succeed that began after the kill
				// returned.
				k, p := killed.Load(), promoted.Load()
				if k != 0 && started > k && (failed.Load() || p != 0 && started > p) && okStart.CompareAndSwap(0, started) {
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
	promoted.Store(time.Now().UnixNano())
	took := time.Since(begin)
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
		took.Round(time.Millisecond), recovered.Round(time.Millisecond), writes.Load(), n503.Load(), readyDown.Load())
	// The outage ended when the first write that began after the last
	// failed one succeeded. Not the first success after a failure: in a
	// planned switchover the old primary takes writes again between a
	// first refusal and its drain (a success at +0.3 s, the outage from
	// +2 s to +7 s), and deliveries in flight then are redelivered.
	outageEnd := time.Now()
	mu.Lock()
	for _, s := range okStarts {
		if s > lastFail.Load() && time.Unix(0, s).Before(outageEnd) {
			outageEnd = time.Unix(0, s)
		}
	}
	mu.Unlock()
	return &loadResult{base: base, key: key, probe: probe, outageEnd: outageEnd, killedAt: begin, acked: acked, ackedAt: ackedAt, bad: bad, n503: n503.Load(), recovered: recovered, readyDown: readyDown.Load()}
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
	var first, last time.Time // when the first and the last missing write was acknowledged
	for i, id := range r.acked {
		var n int
		if err := sdb.QueryRow("SELECT count(*) FROM webhooks WHERE id = $1", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			missing = append(missing, id)
			if first.IsZero() {
				first = r.ackedAt[i]
			}
			last = r.ackedAt[i]
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d acknowledged writes missing on the new primary (acknowledged from %s to %s; the kill began %s, the first write after it that succeeded began %s): %v",
			len(missing), len(r.acked), first.Format(time.StampMilli), last.Format(time.StampMilli),
			r.killedAt.Format(time.StampMilli), r.outageEnd.Format(time.StampMilli), missing[:min(len(missing), 20)])
	}
	if res, body := testkit.Get(t, r.base+"/readyz", ""); res.StatusCode != http.StatusOK {
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
	res, body := testkit.Get(t, base+"/readyz", "")
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "replica ") || !strings.Contains(string(body), ": down") || !strings.Contains(string(body), "timeline") {
		t.Errorf("/readyz with the replica on the old timeline: %d %s; want 200 listing it down, saying which timeline", res.StatusCode, body)
	}
	t.Logf("/readyz: %s", body)
}

// liveProbe is what a failover test watches besides the answers to its
// requests: the account's changes subscription over WebSocket
// (graphql-transport-ws) and over Server-Sent Events, and a webhook
// endpoint on 127.0.0.1 registered for tracking_request.tracking_stopped,
// the event the load's stop_tracking writes raise.
type liveProbe struct {
	base, key string
	ws, sse   *testkit.Feed[change]
	hook      string

	mu  sync.Mutex
	got map[string][]time.Time // notification id → when each delivery arrived
	bad []string               // deliveries that were not webhook notifications
}

const changesQuery = `subscription { changes { operation logId type id parentId changedFields } }`

// startProbe registers the webhook and opens both subscriptions on base,
// with key (an admin's), and returns once a first change (a stop_tracking
// of ship, by writeOnce) reached both: they are live.
func startProbe(t *testing.T, base, key string, writeOnce func()) *liveProbe {
	t.Helper()
	p := &liveProbe{base: base, key: key, got: map[string][]time.Time{}}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var doc struct{ Data struct{ ID, Type string } }
		p.mu.Lock()
		if json.Unmarshal(b, &doc) != nil || doc.Data.Type != "webhook_notification" || doc.Data.ID == "" {
			p.bad = append(p.bad, string(b))
		} else {
			p.got[doc.Data.ID] = append(p.got[doc.Data.ID], time.Now())
		}
		p.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(recv.Close)
	status, body := call(t, http.MethodPost, base+"/v2/webhooks", key,
		`{"data":{"type":"webhook","attributes":{"url":"`+recv.URL+`/hook","events":["tracking_request.tracking_stopped"]}}}`)
	var doc struct{ Data struct{ ID string } }
	if status != http.StatusCreated || json.Unmarshal(body, &doc) != nil || doc.Data.ID == "" {
		t.Fatalf("POST /v2/webhooks: %d %s", status, body)
	}
	p.hook = doc.Data.ID

	p.sse = subscribeSSE(t, base, key, changesQuery)
	p.ws = subscribeWS(t, base, key, changesQuery)
	// A subscription is on once the server has read its subscribe message,
	// which the client does not wait for: a write made before that is not
	// the subscription's to see. So the writes are repeated (each a stop
	// and a resume: the same state after) until a change reached both.
	live := func(c change) bool { return c.LogID != "" }
	deadline := time.Now().Add(60 * time.Second)
	for {
		writeOnce()
		_, ws := p.ws.WaitFor(2*time.Second, live)
		_, sse := p.sse.WaitFor(2*time.Second, live)
		if ws && sse {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("no first change within 60s: on the WebSocket subscription %v, on the SSE one %v", ws, sse)
		}
	}
}

// subscribeWS opens a subscription over WebSocket (graphql-transport-ws)
// and returns the feed of its changes (BROKEN … for an error or a message
// that is not an event).
func subscribeWS(t *testing.T, base, key, query string) *testkit.Feed[change] {
	t.Helper()
	w, err := testkit.DialWS(t, base, map[string]any{"Authorization": "Token " + key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Subscribe("1", query, nil)
	f := testkit.NewFeed[change]()
	go func() {
		for m := range w.Msgs() {
			c, ok := changeOf(m.Payload)
			if m.Type != "next" || !ok {
				c = change{Operation: "BROKEN " + m.Type + " " + string(m.Payload)}
			}
			f.Add(c)
		}
	}()
	return f
}

// call makes one request with key and returns its status and body.
func call(t *testing.T, method, url, key, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Token "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// liveCounts is what probe.check counted, for the log line the bench
// script collects.
type liveCounts struct {
	wsEvents, sseEvents, skipped, doubled, foreign int
	notifications, deliveries, inFlight, lost      int
}

// check compares what the subscriptions and the endpoint received with what
// the new primary (newPrimary) says happened:
//
//   - subscriptions: every change_log row of the account from the first
//     change each subscription saw to the last one logged arrived exactly
//     once, and nothing else did (an event of a change the new primary
//     does not have would be a change lost in the promotion);
//   - webhooks: every notification of the hook was delivered (none left
//     pending or failed) and received; a notification received more often
//     than the new primary recorded successful attempts for it is a
//     redelivery, allowed only when "in flight at the kill": its first
//     delivery arrived before the outage ended (outageEnd: the first write
//     that began after the last failed one and succeeded), so that
//     attempt's record was made,
//     if at all, on a primary that was lost or never acknowledged it (the
//     dispatcher redelivers an attempt it could not record, at least
//     once). Any other surplus is a doubled delivery; a received id the
//     new primary does not know is a lost notification.
func (p *liveProbe) check(t *testing.T, newPrimary string, outageEnd time.Time) liveCounts {
	t.Helper()
	var n liveCounts
	db := dbtest.Open(t, newPrimary)
	var account string
	if err := db.QueryRow(`SELECT account_id FROM api_tokens WHERE token_sha256 = sha256(convert_to($1, 'UTF8'))`, p.key).Scan(&account); err != nil {
		t.Fatal(err)
	}
	var last int64
	if err := db.QueryRow(`SELECT max(id) FROM change_log WHERE account_id = $1`, account).Scan(&last); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]*testkit.Feed[change]{"WebSocket": p.ws, "SSE": p.sse} {
		f.Wait(t, 30*time.Second, fmt.Sprintf("the last change (log id %d) on the %s subscription", last, name), func(c change) bool {
			id, _ := strconv.ParseInt(c.LogID, 10, 64)
			return id >= last
		})
		seen := map[int64]int{}
		first := int64(-1)
		for _, c := range f.All() {
			if c.LogID == "" || c.Operation == "RESYNC" {
				t.Errorf("%s subscription across the failover: %s", name, c.Operation)
				continue
			}
			id, err := strconv.ParseInt(c.LogID, 10, 64)
			if err != nil {
				t.Errorf("%s: log id %q", name, c.LogID)
				continue
			}
			if first < 0 {
				first = id
			}
			seen[id]++
		}
		logged := pg.Column[int64](t, db, `SELECT id FROM change_log WHERE account_id = $1 AND id >= $2 AND id <= $3 ORDER BY id`, account, first, last)
		var skipped, doubled, foreign []int64
		for _, id := range logged {
			switch seen[id] {
			case 0:
				skipped = append(skipped, id)
			case 1:
			default:
				doubled = append(doubled, id)
			}
		}
		for id := range seen {
			if id <= last && !slices.Contains(logged, id) {
				foreign = append(foreign, id)
			}
		}
		if len(skipped)+len(doubled)+len(foreign) > 0 {
			t.Errorf("%s subscription: of the %d changes logged on the new primary from log id %d to %d, %d skipped %v, %d doubled %v; %d received that the new primary does not have %v",
				name, len(logged), first, last, len(skipped), skipped, len(doubled), doubled, len(foreign), foreign)
		}
		n.skipped += len(skipped)
		n.doubled += len(doubled)
		n.foreign += len(foreign)
		if name == "SSE" {
			n.sseEvents = len(logged)
		} else {
			n.wsEvents = len(logged)
		}
	}

	// Webhooks: wait until the fan-out has read the account's log to its
	// head (it raises notifications after the change, asynchronously: a
	// hook with nothing pending before that may get more), then until the
	// hook has nothing pending (rows, polled).
	deadline := time.Now().Add(40 * time.Second)
	for {
		var behind bool
		if err := db.QueryRow(`SELECT coalesce((SELECT pos FROM change_log_heads WHERE account_id = $1), 0)
			> coalesce((SELECT pos FROM webhook_log_cursors WHERE account_id = $1), 0)`, account).Scan(&behind); err != nil {
			t.Fatal(err)
		}
		if !behind {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook fan-out has not read the account's change log to its head 40 s after the load")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		var pending int
		if err := db.QueryRow(`SELECT count(*) FROM webhook_notifications WHERE account_id = $1 AND webhook_id = $2 AND delivery_status = 'pending'`, account, p.hook).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			var state string
			_ = db.QueryRow(`SELECT string_agg(id || ' attempts ' || attempts || ' next ' || next_attempt_at || ' claimed_until ' || coalesce(claimed_until::text, '-') || ' created ' || created_at || ' error ' || coalesce(last_error, ''), E'\n')
				FROM webhook_notifications WHERE account_id = $1 AND webhook_id = $2 AND delivery_status = 'pending'`, account, p.hook).Scan(&state)
			t.Fatalf("webhook notifications still pending 40 s after the load (now %v):\n%s", time.Now().Format(time.StampMilli), state)
		}
		time.Sleep(50 * time.Millisecond)
	}
	rows, err := db.Query(`SELECT n.id, n.delivery_status,
		(SELECT count(*) FROM webhook_delivery_attempts a WHERE a.account_id = n.account_id AND a.notification_id = n.id AND a.status_code IN (200, 201, 202, 204))
		FROM webhook_notifications n WHERE n.account_id = $1 AND n.webhook_id = $2`, account, p.hook)
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]int{}
	for rows.Next() {
		var id, status string
		var ok int
		if err := rows.Scan(&id, &status, &ok); err != nil {
			t.Fatal(err)
		}
		if status != "succeeded" {
			t.Errorf("webhook notification %s: %s, want succeeded (the endpoint answers 204)", id, status)
		}
		recorded[id] = ok
	}
	rows.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.bad {
		t.Errorf("the endpoint received something that is not a webhook notification: %.300s", b)
	}
	n.notifications = len(recorded)
	for id, ok := range recorded {
		got := p.got[id]
		n.deliveries += len(got)
		switch {
		case len(got) == 0:
			n.lost++
			t.Errorf("webhook notification %s: recorded delivered %d times, never received", id, ok)
		case len(got) > max(ok, 1):
			if len(got)-max(ok, 1) == 1 && got[0].Before(outageEnd) {
				n.inFlight++
				continue
			}
			n.doubled++
			t.Errorf("webhook notification %s: received %d times (first %v, the outage ended %v), %d successful attempts recorded",
				id, len(got), got[0].Format(time.StampMilli), outageEnd.Format(time.StampMilli), ok)
		}
	}
	for id, got := range p.got {
		if _, ok := recorded[id]; !ok {
			n.lost++
			n.deliveries += len(got)
			t.Errorf("webhook notification %s received (%d times) but not on the new primary: lost in the promotion", id, len(got))
		}
	}
	t.Logf("failover live: WebSocket %d events, SSE %d events, %d skipped, %d doubled, %d not on the new primary; webhooks: %d notifications, %d deliveries, %d redelivered (in flight at the kill), %d lost",
		n.wsEvents, n.sseEvents, n.skipped, n.doubled, n.foreign, n.notifications, n.deliveries, n.inFlight, n.lost)
	return n
}

// secondInstance is another serve over the same DATABASE_URL, logging at
// INFO (its listener's reconnection is the line waited for), with a
// WebSocket subscription opened with key, the key the test revokes.
type secondInstance struct {
	base  string
	log   *testkit.Log
	ws    *testkit.WS
	key   string
	dbURL string
}

func startSecond(t *testing.T, dbURL, key string) *secondInstance {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	base, done, stderr := startServe(t, ctx, "--shutdown-delay", "0", "--data-dir", t.TempDir(), "--database-url", dbURL,
		"--db-connect-timeout", "2s", "--log-level", "info", "--rate-limit", "0", "--webhook-allow-private-urls")
	t.Cleanup(func() {
		cancel()
		waitServe(t, done, 30*time.Second, "the second serve")
		logEnd(t, "the second serve", stderr)
	})
	s := &secondInstance{base: base, log: stderr, key: key, dbURL: dbURL}
	// The key is used (and cached) on this instance, and holds a
	// subscription there: the revocation must end it.
	if res, body := testkit.Get(t, base+"/v2/shipments", key); res.StatusCode != http.StatusOK {
		t.Fatalf("second instance: GET /v2/shipments: %d %s", res.StatusCode, body)
	}
	w, err := testkit.DialWS(t, base, map[string]any{"Authorization": "Token " + key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Subscribe("1", changesQuery, nil)
	// Its events are read and dropped: the client holds only
	// testkit.WSQueue unread messages, and its reader, once blocked on a
	// full queue, no longer answers the server's pings, so the server
	// drops the connection (no close frame) two ping intervals (50 s)
	// later, which a slow run reaches before the revocation: the test then
	// saw EOF instead of 4403 (loaded runs, 4 of 5).
	drained := make(chan struct{})
	t.Cleanup(func() { close(drained) })
	go func() {
		for {
			select {
			case <-w.Msgs():
			case <-drained:
				return
			}
		}
	}()
	s.ws = w
	return s
}

// revokeAfter: once this instance's listener is listening again after
// the failover (its log line, waited for), the key is revoked through the
// database URL (`shipgraph token revoke`, the one way to revoke a key);
// the subscription held here with it ends with 4403 (only the NOTIFY
// heard on the listening connection ends it: the listener's reconnection
// re-checked the keys before the revocation), as does one opened with it
// on the first instance (NOTIFY reaches each instance on its own: each is
// waited for), and then both instances refuse the key (401).
func (s *secondInstance) revokeAfter(t *testing.T, first, newPrimary string) {
	t.Helper()
	s.log.WaitLine(t, 30*time.Second, "the second instance's live updates listening again after the failover", func(line string) bool {
		return strings.Contains(line, "live updates: listening to the database again")
	})
	// The key works on both (and is cached again on this one).
	for _, base := range []string{first, s.base} {
		if res, body := testkit.Get(t, base+"/v2/shipments", s.key); res.StatusCode != http.StatusOK {
			t.Fatalf("%s: the key before its revocation: %d %s", base, res.StatusCode, body)
		}
	}
	// A subscription with the key on the first instance too: NOTIFY
	// reaches each instance on its own, so each must be waited for.
	firstWS, err := testkit.DialWS(t, first, map[string]any{"Authorization": "Token " + s.key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	firstWS.Subscribe("1", changesQuery, nil)
	db, err := sql.Open("postgres", newPrimary)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	err = db.QueryRow(`SELECT id FROM api_tokens WHERE token_sha256 = sha256(convert_to($1, 'UTF8'))`, s.key).Scan(&id)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if code, out, errOut := runCmd(t, context.Background(), "token", "revoke", "--database-url", s.dbURL, "--account", "acme", "--id", id); code != 0 {
		t.Fatalf("token revoke: exit %d: %s %s", code, out, errOut)
	}
	code, reason := s.ws.Closed(10 * time.Second)
	if code != websocket.StatusCode(4403) {
		t.Errorf("the second instance's subscription with the revoked key ended %d %q, want 4403", code, reason)
	}
	heard := time.Since(begin)
	if code, reason := firstWS.Closed(10 * time.Second); code != websocket.StatusCode(4403) {
		t.Errorf("the first instance's subscription with the revoked key ended %d %q, want 4403", code, reason)
	}
	for _, base := range []string{first, s.base} {
		if res, body := testkit.Get(t, base+"/v2/shipments", s.key); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: the revoked key: %d %s, want 401", base, res.StatusCode, body)
		}
	}
	t.Logf("failover revocation: the second instance's subscription ended %v after `token revoke` began", heard.Round(time.Millisecond))
}

// serveLogged is serve, logging at INFO, whose log ends up in the test's
// output when the test failed.
func serveLogged(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	base, done, stderr := startServe(t, ctx, append([]string{"--shutdown-delay", "0", "--data-dir", t.TempDir(), "--log-level", "info"}, args...)...)
	t.Cleanup(func() {
		cancel()
		waitServe(t, done, 30*time.Second, "serve")
		logEnd(t, "serve", stderr)
	})
	return base
}

// logEnd logs the end of a serve's log when the test failed.
func logEnd(t *testing.T, name string, l *testkit.Log) {
	if t.Failed() {
		s := l.String()
		t.Logf("%s's log (the end):\n%s", name, s[max(0, len(s)-6000):])
	}
}
