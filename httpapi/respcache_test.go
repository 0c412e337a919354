package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
	"shipgraph/testkit/redistest"
	"shipgraph/testkit/replicatest"
)

// dashboardQuery is the bench's dashboard (../shared/bench), with the
// fields the randomized test's writes change.
const dashboardQuery = `query Dashboard { shipments(first: 50) { nodes { id billOfLadingNumber createdAt tags refNumbers
  containers { number currentStatus equipmentType pickupAppointmentAt podTerminal { name firmsCode port { name code } } }
  customFields { apiSlug value } } } }`

// cached starts an instance over url with the response cache on, and
// waits until it serves.
func cached(t *testing.T, url string) *instance {
	t.Helper()
	c := testkit.Defaults()
	c.ResponseCacheBytes = serverDefaults().ResponseCacheBytes
	c.PublicBaseURL = "http://shipgraph.test"
	in := start(t, url, &c)
	deadline := time.Now().Add(10 * time.Second)
	for !in.h.ResponseCacheLive() {
		if time.Now().After(deadline) {
			t.Fatal("the response cache did not go live")
		}
		// Waiting for the feed's first read of the log (an event we
		// cannot subscribe to from here): WaitResponseCache below is the
		// event-driven wait.
		if err := in.h.WaitResponseCache(context.Background(), "", 0); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

func uncached(t *testing.T, url string) *instance {
	t.Helper()
	c := testkit.Defaults()
	c.PublicBaseURL = "http://shipgraph.test"
	return start(t, url, &c)
}

// TestResponseCacheConditional: a query's answer carries a strong ETag and
// Cache-Control: private, no-cache; the same request again is served from
// memory (no statement); with If-None-Match it is a 304 with no body and
// no statement at all (shipgraph_db_queries_total unchanged), for GraphQL
// over POST and GET and for /v2 GETs. With the cache off the ETag and the
// 304 are the same (the work is done, the bytes are not sent). Mutations
// and errors get no ETag.
func TestResponseCacheConditional(t *testing.T) {
	url, keys := seeded(t)
	in := cached(t, url)
	off := uncached(t, url)
	k := keys["acme/admin"]
	gqlBody, _ := json.Marshal(map[string]string{"query": dashboardQuery})
	get := "/graphql?query=" + url_(dashboardQuery)
	for _, tc := range []struct{ name, method, path, body string }{
		{"graphql POST", http.MethodPost, "/graphql", string(gqlBody)},
		{"graphql GET", http.MethodGet, get, ""},
		{"v2 list", http.MethodGet, "/v2/shipments?include=containers&page[size]=10", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := in.do(t, tc.method, tc.path, k, tc.body)
			if first.status != http.StatusOK {
				t.Fatalf("first: %d %s", first.status, first.body)
			}
			etag := first.header.Get("ETag")
			if len(etag) < 10 || etag[0] != '"' || first.header.Get("Cache-Control") != "private, no-cache" {
				t.Fatalf("ETag %q, Cache-Control %q", etag, first.header.Get("Cache-Control"))
			}
			if first.statements == 0 {
				t.Fatal("the first answer cost no statement: nothing was read")
			}
			again := in.do(t, tc.method, tc.path, k, tc.body)
			if again.status != http.StatusOK || !bytes.Equal(again.body, first.body) || again.header.Get("ETag") != etag {
				t.Fatalf("again: %d %q (ETag %q)", again.status, again.body, again.header.Get("ETag"))
			}
			if again.statements != 0 {
				t.Errorf("a kept answer cost %d statements", again.statements)
			}
			before := queriesTotal(t)
			nm := in.do(t, tc.method, tc.path, k, tc.body, "If-None-Match", etag)
			if nm.status != http.StatusNotModified || len(nm.body) != 0 || nm.header.Get("ETag") != etag {
				t.Fatalf("If-None-Match: %d %q %q", nm.status, nm.body, nm.header.Get("ETag"))
			}
			if after := queriesTotal(t); after != before {
				t.Errorf("a 304 sent %v statements", after-before)
			}
			// The cache off: the same ETag, a 304 after the work.
			o := off.do(t, tc.method, tc.path, k, tc.body)
			if o.header.Get("ETag") != etag || !bytes.Equal(o.body, first.body) {
				t.Errorf("uncached: ETag %q body equal %v", o.header.Get("ETag"), bytes.Equal(o.body, first.body))
			}
			o = off.do(t, tc.method, tc.path, k, tc.body, "If-None-Match", `"other", `+etag)
			if o.status != http.StatusNotModified || len(o.body) != 0 {
				t.Errorf("uncached If-None-Match: %d %q", o.status, o.body)
			}
			// Another key of another role is another entry.
			v := in.do(t, tc.method, tc.path, keys["acme/viewer"], tc.body)
			if v.status != http.StatusOK || v.statements == 0 {
				t.Errorf("another role: %d, %d statements (served another role's entry?)", v.status, v.statements)
			}
		})
	}
	// A mutation is not kept and gets no ETag; nor does an error.
	var ship string
	if err := in.store.SQL().QueryRow(`SELECT s.id FROM shipments s JOIN accounts a ON a.id = s.account_id WHERE a.slug = 'acme' ORDER BY s.id LIMIT 1`).Scan(&ship); err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(map[string]any{"query": `mutation($s: ID!) { updateShipmentCustomField(shipmentId: $s, apiSlug: "customer_po", value: "PO-1") { value } }`, "variables": map[string]any{"s": ship}})
	for range 2 {
		r := in.do(t, http.MethodPost, "/graphql", k, string(m))
		if r.status != http.StatusOK || r.header.Get("ETag") != "" || r.statements == 0 {
			t.Fatalf("mutation: %d ETag %q, %d statements: %s", r.status, r.header.Get("ETag"), r.statements, r.body)
		}
	}
	bad, _ := json.Marshal(map[string]string{"query": `{ shipment(id: "00000000-0000-0000-0000-000000000000") { id } }`})
	for range 2 {
		r := in.do(t, http.MethodPost, "/graphql", k, string(bad))
		if r.header.Get("ETag") != "" && bytes.Contains(r.body, []byte(`"errors"`)) {
			t.Fatalf("an error answer got an ETag: %s", r.body)
		}
	}
}

func url_(s string) string { return url.QueryEscape(s) }

// TestResponseCacheRandomized interleaves writes (GraphQL mutations and
// /v2 PATCHes through either instance, plain SQL UPDATEs) and reads
// (GraphQL over POST and GET, /v2 lists and records) over one database,
// served by an instance with the response cache and one without. Every
// read made after a write's change was read from the log by the cached
// instance (WaitResponseCache) — at once for a write through the cached
// instance itself (read-your-writes) — must equal the uncached answer.
func TestResponseCacheRandomized(t *testing.T) {
	url, keys := seeded(t)
	in := cached(t, url)
	off := uncached(t, url)
	k := keys["acme/admin"]
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 1))
	sql := in.store.SQL()
	var account string
	if err := sql.QueryRow(`SELECT id FROM accounts WHERE slug = 'acme'`).Scan(&account); err != nil {
		t.Fatal(err)
	}
	ships := pg.Column[string](t, sql, `SELECT id FROM shipments WHERE account_id = $1 ORDER BY id`, account)
	ctrs := pg.Column[string](t, sql, `SELECT id FROM containers WHERE account_id = $1 ORDER BY id`, account)
	if len(ships) == 0 || len(ctrs) == 0 {
		t.Fatal("no seeded shipments or containers")
	}
	pick := func(ids []string) string { return ids[rnd.IntN(len(ids))] }
	type read struct{ method, path, body string }
	reads := func() []read {
		dash, _ := json.Marshal(map[string]string{"query": dashboardQuery})
		one, _ := json.Marshal(map[string]any{"query": `query($id: ID!) { shipment(id: $id) { id tags refNumbers customFields { apiSlug value } containers { id pickupAppointmentAt currentStatus } } }`,
			"variables": map[string]any{"id": ships[0]}})
		return []read{
			{http.MethodPost, "/graphql", string(dash)},
			{http.MethodPost, "/graphql", string(one)},
			{http.MethodGet, "/graphql?query=" + url_(`{ shipments(first: 5) { nodes { id tags customFields { apiSlug value } } } }`), ""},
			{http.MethodGet, "/v2/shipments?page[size]=20&include=containers", ""},
			{http.MethodGet, "/v2/containers?page[size]=20", ""},
			{http.MethodGet, "/v2/shipments/" + ships[0] + "?include=containers", ""},
		}
	}()
	wait := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// The account's head: every change of the writes made so far is at
		// or before it.
		head, err := in.store.AccountChangeLogHead(ctx, account)
		if err != nil {
			t.Fatal(err)
		}
		if err := in.h.WaitResponseCache(ctx, account, head); err != nil {
			t.Fatalf("waiting for the cache to read the log: %v", err)
		}
	}
	compare := func(step int, r read) {
		t.Helper()
		got := in.do(t, r.method, r.path, k, r.body)
		want := off.do(t, r.method, r.path, k, r.body)
		if got.status != want.status || !bytes.Equal(got.body, want.body) {
			t.Fatalf("step %d (seed %d): %s %s: cached %d\n%s\nuncached %d\n%s", step, seed, r.method, r.path, got.status, got.body, want.status, want.body)
		}
	}
	hitsBefore := in.h.ResponseCacheLive()
	_ = hitsBefore
	for step := range 120 {
		switch rnd.IntN(6) {
		case 0: // a GraphQL mutation, through either instance
			via := in
			if rnd.IntN(2) == 0 {
				via = off
			}
			m, _ := json.Marshal(map[string]any{"query": `mutation($s: ID!, $v: JSON) { updateShipmentCustomField(shipmentId: $s, apiSlug: "customer_po", value: $v) { value } }`,
				"variables": map[string]any{"s": pick(ships[:min(3, len(ships))]), "v": fmt.Sprintf("PO-%d", rnd.IntN(1000))}})
			if r := via.do(t, http.MethodPost, "/graphql", k, string(m)); r.status != http.StatusOK || bytes.Contains(r.body, []byte(`"errors"`)) {
				t.Fatalf("mutation: %d %s", r.status, r.body)
			}
			if via == off {
				wait()
			}
		case 1: // a /v2 PATCH, through either instance
			via := in
			if rnd.IntN(2) == 0 {
				via = off
			}
			body := fmt.Sprintf(`{"data":{"type":"shipment","attributes":{"tags":["t%d"]}}}`, rnd.IntN(1000))
			if r := via.do(t, http.MethodPatch, "/v2/shipments/"+pick(ships[:min(3, len(ships))]), k, body, "Content-Type", "application/vnd.api+json"); r.status != http.StatusOK {
				t.Fatalf("PATCH: %d %s", r.status, r.body)
			}
			if via == off {
				wait()
			}
		case 2: // plain SQL (the time a parameter: Citus refuses volatile functions in an UPDATE)
			if rnd.IntN(2) == 0 {
				if _, err := sql.Exec(`UPDATE containers SET pickup_appointment_at = $3 WHERE account_id = $1 AND id = $2`, account, pick(ctrs), time.Now()); err != nil {
					t.Fatal(err)
				}
			} else {
				if _, err := sql.Exec(`UPDATE shipments SET ref_numbers = ARRAY[$3::text] WHERE account_id = $1 AND id = $2`, account, pick(ships[:min(3, len(ships))]), fmt.Sprintf("R%d", rnd.IntN(1000))); err != nil {
					t.Fatal(err)
				}
			}
			wait()
		default:
			compare(step, reads[rnd.IntN(len(reads))])
		}
	}
	// Every read once more, then again (hits) after the last change.
	wait()
	for i, r := range reads {
		compare(1000+i, r)
		compare(2000+i, r)
	}
}

// TestResponseCacheReplica: with a read replica whose replay is paused, a
// change the cache already read from the log is not kept stale: the miss
// that follows reads where the change is (the primary, once the replica
// wait ran out), so the answer kept shows it.
func TestResponseCacheReplica(t *testing.T) {
	primary := dbtest.NewServer(t)
	keys := seedAt(t, primary.URL())
	standby := replicatest.Start(t, primary, replicatest.Options{})
	store := pg.OpenWith(t, primary.URL(), db.Options{Replicas: []string{standby.URL()}})
	cfg := testkit.Defaults()
	cfg.ResponseCacheBytes = serverDefaults().ResponseCacheBytes
	in := serveOn(t, store, cfg)
	testkit.WaitFor(t, 20*time.Second, "the replica and the cache to be up", func() bool {
		status, body := in.readyz(t)
		return status == http.StatusOK && strings.Contains(body, ": up,") && in.h.ResponseCacheLive()
	})
	k := keys["acme/admin"]
	var account, ship string
	if err := store.SQL().QueryRow(`SELECT s.account_id, s.id FROM shipments s JOIN accounts a ON a.id = s.account_id
		WHERE a.slug = 'acme' ORDER BY s.id LIMIT 1`).Scan(&account, &ship); err != nil {
		t.Fatal(err)
	}
	path := "/v2/shipments/" + ship
	if r := in.do(t, http.MethodGet, path, k, ""); r.status != http.StatusOK {
		t.Fatalf("GET: %d %s", r.status, r.body)
	}
	head, err := store.AccountChangeLogHead(context.Background(), account)
	if err != nil {
		t.Fatal(err)
	}
	standby.PauseReplay(t)
	t.Cleanup(func() { standby.ResumeReplay(t) })
	if _, err := store.SQL().Exec(`UPDATE shipments SET tags = ARRAY['replica-fresh'] WHERE account_id = $1 AND id = $2`, account, ship); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	last, err := store.AccountChangeLogHead(ctx, account)
	if err != nil || last <= head {
		t.Fatalf("head %d after the change (%v), want past %d", last, err, head)
	}
	if err := in.h.WaitResponseCache(ctx, account, last); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the miss, then the kept answer
		r := in.do(t, http.MethodGet, path, k, "")
		if r.status != http.StatusOK || !strings.Contains(string(r.body), "replica-fresh") {
			t.Fatalf("read %d after the change: %d %s", i, r.status, r.body)
		}
	}
}

// metric scrapes one unlabelled counter from /metrics.
func metric(t *testing.T, name string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestResponseCacheCoalesces: identical requests that miss at once are
// computed once; the others get the kept answer.
func TestResponseCacheCoalesces(t *testing.T) {
	url, keys := seeded(t)
	in := cached(t, url)
	k := keys["acme/admin"]
	body, _ := json.Marshal(map[string]string{"query": dashboardQuery})
	before := metric(t, "shipgraph_response_cache_misses_total")
	var wg sync.WaitGroup
	bodies := make([][]byte, 8)
	errs := make([]error, 8)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, in.url+"/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Token "+k)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK {
				errs[i] = fmt.Errorf("status %d", res.StatusCode)
				return
			}
			bodies[i], errs[i] = io.ReadAll(res.Body)
		}()
	}
	wg.Wait()
	for i := range bodies {
		if errs[i] != nil || !bytes.Equal(bodies[i], bodies[0]) || !bytes.Contains(bodies[i], []byte(`"shipments"`)) {
			t.Fatalf("reply %d: %v %s", i, errs[i], bodies[i])
		}
	}
	if got := metric(t, "shipgraph_response_cache_misses_total") - before; got != 1 {
		t.Errorf("%v misses for 8 identical requests at once, want 1", got)
	}
}

// TestResponseCacheWebSocketWrite: a mutation sent over graphql-ws drops
// what its account kept before its answer is sent, as an HTTP write does,
// so a read over HTTP made as soon as the answer arrived shows the write
// (without the drop it finds the old answer until the change log's reader
// catches up, milliseconds later). Many rounds make the race visible.
func TestResponseCacheWebSocketWrite(t *testing.T) {
	url, keys := seeded(t)
	in := cached(t, url)
	k := keys["acme/admin"]
	var ship string
	if err := in.store.SQL().QueryRow(`SELECT s.id FROM shipments s JOIN accounts a ON a.id = s.account_id WHERE a.slug = 'acme' ORDER BY s.id LIMIT 1`).Scan(&ship); err != nil {
		t.Fatal(err)
	}
	ws, err := testkit.DialWS(t, in.url, map[string]any{"Authorization": "Token " + k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	read := `query($s: ID!) { shipment(id: $s) { customFields { apiSlug value } } }`
	post, _ := json.Marshal(map[string]any{"query": read, "variables": map[string]any{"s": ship}})
	vars, _ := json.Marshal(map[string]any{"s": ship})
	get := "/graphql?query=" + url_(read) + "&variables=" + url_(string(vars))
	mutation := `mutation($s: ID!, $v: JSON!) { updateShipmentCustomField(shipmentId: $s, apiSlug: "customer_po", value: $v) { value } }`
	for i := range 40 {
		// Both reads kept (the second answer of each costs nothing).
		for _, rd := range []struct{ method, path, body string }{{http.MethodPost, "/graphql", string(post)}, {http.MethodGet, get, ""}} {
			for range 2 {
				if r := in.do(t, rd.method, rd.path, k, rd.body); r.status != http.StatusOK {
					t.Fatalf("read: %d %s", r.status, r.body)
				}
			}
		}
		value := fmt.Sprintf("WS-%d", i)
		id := strconv.Itoa(i)
		ws.Subscribe(id, mutation, map[string]any{"s": ship, "v": value})
		m := ws.Next(10 * time.Second)
		var got struct {
			UpdateShipmentCustomField struct{ Value any } `json:"updateShipmentCustomField"`
		}
		testkit.Event(t, m, &got)
		if m.ID != id || got.UpdateShipmentCustomField.Value != value {
			t.Fatalf("mutation answer %s %s", m.ID, m.Payload)
		}
		for _, rd := range []struct{ method, path, body string }{{http.MethodPost, "/graphql", string(post)}, {http.MethodGet, get, ""}} {
			r := in.do(t, rd.method, rd.path, k, rd.body)
			if r.status != http.StatusOK || !bytes.Contains(r.body, []byte(`"`+value+`"`)) {
				t.Fatalf("round %d: %s read after the WebSocket write answered %d %s (stale)", i, rd.method, r.status, r.body)
			}
		}
		if c := ws.Next(10 * time.Second); c.Type != "complete" {
			t.Fatalf("got %s after the answer", c.Type)
		}
	}
}

// TestResponseCacheReadYourWritesOverInstances: two instances with the
// response cache on, one database and one Redis. A client that PATCHes a
// shipment through A and at once GETs it through B (which had it cached)
// reads its write, every time; once B's feed read the changes, B answers
// from its cache again.
func TestResponseCacheReadYourWritesOverInstances(t *testing.T) {
	rs := redistest.Start(t)
	cfg := testkit.Defaults()
	cfg.ResponseCacheBytes = serverDefaults().ResponseCacheBytes
	a, b, keys, _ := twoInstances(t, rs.URL, cfg)
	for _, in := range []*instance{a, b} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		for !in.h.ResponseCacheLive() {
			if err := in.h.WaitResponseCache(ctx, "", 0); err != nil {
				t.Fatal(err)
			}
		}
		cancel()
	}
	k := keys["acme/admin"]
	var account, ship string
	if err := a.store.SQL().QueryRow(`SELECT s.account_id, s.id FROM shipments s JOIN accounts a ON a.id = s.account_id WHERE a.slug = 'acme' ORDER BY s.id LIMIT 1`).Scan(&account, &ship); err != nil {
		t.Fatal(err)
	}
	path := "/v2/shipments/" + ship
	tagged := func(r *reply) string {
		t.Helper()
		var doc struct {
			Data struct {
				Attributes struct {
					Tags []string `json:"tags"`
				} `json:"attributes"`
			} `json:"data"`
		}
		if r.status != http.StatusOK {
			t.Fatalf("GET: %d %s", r.status, r.body)
		}
		if err := json.Unmarshal(r.body, &doc); err != nil || len(doc.Data.Attributes.Tags) != 1 {
			t.Fatalf("GET: tags of %s (%v)", r.body, err)
		}
		return doc.Data.Attributes.Tags[0]
	}
	const rounds = 150
	stale := 0
	for i := range rounds {
		before := b.do(t, http.MethodGet, path, k, "") // B keeps the state before the write
		tag := fmt.Sprintf("w%d", i)
		body := fmt.Sprintf(`{"data":{"type":"shipment","attributes":{"tags":[%q]}}}`, tag)
		// A write's position not recorded in Redis (slower than its
		// timeout, three times) lets B answer from before it, as
		// documented: the failure says whether that happened.
		fallbacks := testkit.Metric(t, "shipgraph_redis_fallback_total", "op", "lsn")
		if r := a.do(t, http.MethodPatch, path, k, body, "Content-Type", "application/vnd.api+json"); r.status != http.StatusOK {
			t.Fatalf("PATCH: %d %s", r.status, r.body)
		}
		if got := tagged(b.do(t, http.MethodGet, path, k, "")); got != tag {
			stale++
			t.Errorf("round %d: B answered tag %q after the write of %q through A (before it: %q); Redis fallbacks meanwhile: %v", i, got, tag, tagged(before), testkit.Metric(t, "shipgraph_redis_fallback_total", "op", "lsn")-fallbacks)
		}
	}
	if stale > 0 {
		t.Fatalf("%d of %d reads through B answered the state before the client's write", stale, rounds)
	}
	// B serves from its cache again once its feed read the last change.
	head, err := b.store.AccountChangeLogHead(context.Background(), account)
	if err != nil || head == 0 {
		t.Fatalf("the change log's head: %v, %d", err, head)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.h.WaitResponseCache(ctx, account, head); err != nil {
		t.Fatal(err)
	}
	// Within a deadline, not a number of tries: on a loaded machine the
	// cache can be off for a moment (its feed fell behind or a ping
	// failed: it reads the log again before it serves), and 20 tries made
	// back to back all fell in it (1 run of 5 of ./httpapi under load).
	var hit *reply
	testkit.WaitFor(t, 30*time.Second, "B to answer from its cache after its feed read the writes", func() bool {
		if r := b.do(t, http.MethodGet, path, k, ""); r.statements == 0 {
			hit = r
		}
		return hit != nil
	})
	if got := tagged(hit); got != fmt.Sprintf("w%d", rounds-1) {
		t.Fatalf("a hit on B answered %q", got)
	}
}

// TestResponseCacheKeepsItsOwnBytes: answers are held in reused buffers
// (answerBufs), so a kept answer must be its own copy. Answers of other
// sizes, with the cache on and off, pass through the buffers between the
// first answer and the kept one served again: it must equal the first
// byte for byte.
func TestResponseCacheKeepsItsOwnBytes(t *testing.T) {
	url, keys := seeded(t)
	in := cached(t, url)
	off := uncached(t, url)
	k := keys["acme/admin"]
	const kept = "/v2/shipments?include=containers&page[size]=3"
	first := in.do(t, http.MethodGet, kept, k, "")
	if first.status != http.StatusOK || len(first.body) < 1000 {
		t.Fatalf("first: %d, %d bytes", first.status, len(first.body))
	}
	others := []string{"/v2/shipments?page[size]=1", "/v2/containers?page[size]=100", "/v2/documents?page[size]=7"}
	for i := range 30 {
		inst := in
		if i%2 == 1 {
			inst = off
		}
		if r := inst.do(t, http.MethodGet, others[i%len(others)], k, ""); r.status != http.StatusOK {
			t.Fatalf("%d: %s", r.status, r.body)
		}
	}
	again := in.do(t, http.MethodGet, kept, k, "")
	if again.statements != 0 {
		t.Fatalf("the answer was not kept (%d statements): the test saw no reuse", again.statements)
	}
	if !bytes.Equal(again.body, first.body) {
		t.Fatalf("the kept answer changed after other answers used the buffers:\nfirst %.200s\nagain %.200s", first.body, again.body)
	}
}
