package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"shipgraph/testkit"
)

// sseEvent is one "next" event of an SSE stream with its id line.
type sseEvent struct {
	ID   string
	Data json.RawMessage
}

// sseStream subscribes over Server-Sent Events, resuming after lastID when
// it is not empty (the Last-Event-ID header a reconnecting EventSource
// sends), and delivers every "next" event with its SSE id.
func sseStream(t testing.TB, base, key, query, lastID string) (<-chan sseEvent, func()) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Token "+key)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("SSE answer %d %s", res.StatusCode, ct)
	}
	out := make(chan sseEvent, 100000)
	go func() {
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		var ev, id string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				ev, id = "", ""
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && ev == "next":
				out <- sseEvent{ID: id, Data: json.RawMessage(strings.TrimPrefix(line, "data: "))}
			}
		}
	}()
	return out, cancel
}

type changeData struct {
	Data struct {
		Changes struct {
			Operation string  `json:"operation"`
			LogID     *string `json:"logId"`
			ID        *string `json:"id"`
		} `json:"changes"`
	} `json:"data"`
}

func nextSSE(t *testing.T, events <-chan sseEvent, timeout time.Duration) (sseEvent, changeData) {
	t.Helper()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatal("the stream ended")
		}
		var d changeData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatalf("%s: %v", e.Data, err)
		}
		return e, d
	case <-time.After(timeout):
		t.Fatalf("no SSE event within %s", timeout)
	}
	return sseEvent{}, changeData{}
}

// An SSE client that reconnects with Last-Event-ID gets every change it
// missed — 100 plain SQL writes — in order, then the live ones; another
// account's changes never.
func TestLiveSSEResume(t *testing.T) {
	d := newLiveDB(t)
	in := start(t, d.url, nil)
	key := d.keys["acme/viewer"]
	const q = `subscription { changes { operation logId id } }`
	id, _ := d.container(t, "acme", 0)
	other, _ := d.container(t, "globex", 0)

	events, stop := sseStream(t, in.url, key, q, "")
	testkit.WaitFor(t, 30*time.Second, "a subscription", func() bool { return in.h.Subscriptions() == 1 })
	d.exec(t, `UPDATE containers SET seal_number = 'first' WHERE id = $1`, id)
	first, fd := nextSSE(t, events, 30*time.Second)
	if first.ID == "" || fd.Data.Changes.LogID == nil || *fd.Data.Changes.LogID != first.ID || *fd.Data.Changes.ID != id {
		t.Fatalf("first event: id %q, %s", first.ID, first.Data)
	}
	stop()
	testkit.WaitFor(t, 30*time.Second, "the stream to end", func() bool { return in.h.Subscriptions() == 0 })

	for i := range 100 {
		d.exec(t, `UPDATE containers SET seal_number = $2 WHERE id = $1`, id, fmt.Sprint("missed ", i))
		if i%10 == 0 {
			d.exec(t, `UPDATE containers SET seal_number = $2 WHERE id = $1`, other, fmt.Sprint("other ", i))
		}
	}
	began := time.Now()
	events, stop = sseStream(t, in.url, key, q, first.ID)
	defer stop()
	last := first.ID
	for i := range 100 {
		e, cd := nextSSE(t, events, 30*time.Second)
		c := cd.Data.Changes
		if c.Operation != "UPDATE" || c.ID == nil || *c.ID != id || c.LogID == nil || *c.LogID != e.ID {
			t.Fatalf("missed change %d: id %q %s", i, e.ID, e.Data)
		}
		prev, _ := strconv.ParseInt(last, 10, 64)
		if n, _ := strconv.ParseInt(e.ID, 10, 64); n <= prev {
			t.Fatalf("missed change %d: log id %s after %s", i, e.ID, last)
		}
		last = e.ID
	}
	t.Logf("100 missed changes resumed in %v", time.Since(began).Round(time.Millisecond))
	d.exec(t, `UPDATE containers SET seal_number = 'live' WHERE id = $1`, id)
	e, cd := nextSSE(t, events, 30*time.Second)
	if cd.Data.Changes.Operation != "UPDATE" || e.ID <= last && len(e.ID) == len(last) {
		t.Fatalf("live after the catch-up: id %q (last %s) %s", e.ID, last, e.Data)
	}
	select {
	case e := <-events:
		t.Fatalf("an extra event %q %s", e.ID, e.Data)
	case <-time.After(300 * time.Millisecond):
	}
}

// A graphql-ws client passes the last log id it saw as the after argument
// and gets what it missed (that its filter matches), in order, then live
// changes.
func TestLiveWebSocketResume(t *testing.T) {
	d := newLiveDB(t)
	in := start(t, d.url, nil)
	key := d.keys["acme/admin"]
	id, shipment := d.container(t, "acme", 0)
	const q = `subscription($f: ContainerSubscriptionFilter, $after: ID) { containerUpdated(filter: $f, after: $after) {
  operation logId id container { id } } }`
	type ev struct {
		ContainerUpdated struct {
			Operation string  `json:"operation"`
			LogID     *string `json:"logId"`
			ID        *string `json:"id"`
		} `json:"containerUpdated"`
	}
	filter := map[string]any{"shipmentId": shipment}
	c := in.ws(t, key)
	c.Subscribe("1", q, map[string]any{"f": filter})
	testkit.WaitFor(t, 30*time.Second, "a subscription", func() bool { return in.h.Subscriptions() == 1 })
	d.exec(t, `UPDATE containers SET seal_number = 'seen' WHERE id = $1`, id)
	var e ev
	testkit.Event(t, c.Next(30*time.Second), &e)
	seen := e.ContainerUpdated.LogID
	if seen == nil {
		t.Fatalf("no logId: %+v", e)
	}
	_ = c.CloseNow()
	testkit.WaitFor(t, 30*time.Second, "no subscriptions", func() bool { return in.h.Subscriptions() == 0 })

	// Missed: 10 changes of the container, and one of a container of
	// another shipment, which the filter does not match.
	var elsewhere string
	if err := d.sql.QueryRow(`SELECT id FROM containers WHERE account_id = (SELECT account_id FROM containers WHERE id = $1)
		AND shipment_id <> $2 LIMIT 1`, id, shipment).Scan(&elsewhere); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		d.exec(t, `UPDATE containers SET seal_number = $2 WHERE id = $1`, id, fmt.Sprint("missed ", i))
		if i == 5 {
			d.exec(t, `UPDATE containers SET seal_number = 'elsewhere' WHERE id = $1`, elsewhere)
		}
	}
	c = in.ws(t, key)
	c.Subscribe("2", q, map[string]any{"f": filter, "after": *seen})
	prev, _ := strconv.ParseInt(*seen, 10, 64)
	for i := range 10 {
		testkit.Event(t, c.Next(30*time.Second), &e)
		n, _ := strconv.ParseInt(*e.ContainerUpdated.LogID, 10, 64)
		if e.ContainerUpdated.Operation != "UPDATE" || *e.ContainerUpdated.ID != id || n <= prev {
			t.Fatalf("missed change %d: %+v after %d", i, e.ContainerUpdated, prev)
		}
		prev = n
	}
	d.exec(t, `UPDATE containers SET seal_number = 'live' WHERE id = $1`, id)
	testkit.Event(t, c.Next(30*time.Second), &e)
	if n, _ := strconv.ParseInt(*e.ContainerUpdated.LogID, 10, 64); n <= prev || *e.ContainerUpdated.ID != id {
		t.Fatalf("live: %+v", e.ContainerUpdated)
	}
	c.None(300 * time.Millisecond)

	// A log id no longer in the log (pruned): RESYNC first, then live
	// changes. Not a log id at all: an error.
	d.exec(t, `DELETE FROM change_log WHERE id <= $1`, *seen)
	c.Subscribe("3", q, map[string]any{"f": filter, "after": *seen})
	testkit.Event(t, c.Next(30*time.Second), &e)
	if e.ContainerUpdated.Operation != "RESYNC" || e.ContainerUpdated.LogID != nil || e.ContainerUpdated.ID != nil {
		t.Fatalf("resuming after a pruned id: %+v", e.ContainerUpdated)
	}
	testkit.WaitFor(t, 30*time.Second, "two subscriptions", func() bool { return in.h.Subscriptions() == 2 })
	d.exec(t, `UPDATE containers SET seal_number = 'after resync' WHERE id = $1`, id)
	got := c.NextByID(2, 30*time.Second)
	if !strings.Contains(got["2"], `"operation":"UPDATE"`) || !strings.Contains(got["3"], `"operation":"UPDATE"`) {
		t.Fatalf("after the RESYNC: %v", got)
	}
	c.Subscribe("4", q, map[string]any{"after": "x1"})
	if m := c.Next(30 * time.Second); !strings.Contains(string(m.Payload), "after: \\\"x1\\\" is not a log id") {
		t.Fatalf("after: \"x1\": %s %s", m.Type, m.Payload)
	}
}

// Writes through GraphQL and /v2 are logged like plain SQL ones.
func TestChangeLogOfAPIWrites(t *testing.T) {
	d := newLiveDB(t)
	in := start(t, d.url, nil)
	_, shipment := d.container(t, "acme", 0)
	slug := d.shortTextSlug(t, "acme")
	logged := func() (n int, last string) {
		t.Helper()
		if err := d.sql.QueryRow(`SELECT count(*), coalesce(max(new::text), '') FROM change_log WHERE record_type = 'custom_field' AND parent_id = $1`, shipment).Scan(&n, &last); err != nil {
			t.Fatal(err)
		}
		return n, last
	}
	n0, _ := logged()
	r := in.gql(t, d.keys["acme/admin"], fmt.Sprintf(`mutation { updateShipmentCustomField(shipmentId: %q, apiSlug: %q, value: "via graphql") { id } }`, shipment, slug))
	if r.status != 200 || strings.Contains(string(r.body), "errors") {
		t.Fatalf("mutation: %d %s", r.status, r.body)
	}
	if n, _ := logged(); n != n0+1 {
		t.Fatalf("after the mutation %d rows, want %d", n, n0+1)
	}
	path := "/v2/shipments/" + shipment + "/custom_fields/" + slug
	w := in.do(t, http.MethodPatch, path, d.keys["acme/member"], `{"data":{"type":"custom_field","attributes":{"value":"via v2"}}}`)
	if w.status != http.StatusOK {
		t.Fatalf("PATCH %s: %d %s", path, w.status, w.body)
	}
	if n, last := logged(); n != n0+2 || !strings.Contains(last, "via v2") {
		t.Fatalf("after the PATCH %d rows (%s), want %d", n, last, n0+2)
	}
}

// Changes the hub had not read were pruned (an outage longer than the
// retention): the positions it reads next have a hole, so subscribers get
// RESYNC, then the changes that follow.
func TestLiveResyncAfterPruning(t *testing.T) {
	d := newLiveDB(t)
	in := start(t, d.url, nil)
	c := in.ws(t, d.keys["acme/admin"])
	c.Subscribe("1", `subscription { changes { operation logId id } }`, nil)
	testkit.WaitFor(t, 30*time.Second, "a subscription", func() bool { return in.h.Subscriptions() == 1 })
	id, _ := d.container(t, "acme", 0)
	// A position whose row is gone before the hub read it: as pruned. The
	// head moved past a position no row holds, then a change (numbered at
	// its commit, after the hole).
	tx, err := d.sql.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var account string
	if err := tx.QueryRow(`SELECT account_id FROM containers WHERE id = $1`, id).Scan(&account); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO change_log_heads AS h (account_id, pos) VALUES ($1, 1)
		ON CONFLICT (account_id) DO UPDATE SET pos = h.pos + 1`, account); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`UPDATE containers SET seal_number = 'after the gap' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	m := c.Next(10 * time.Second)
	if !strings.Contains(string(m.Payload), `"operation":"RESYNC"`) {
		t.Fatalf("after the gap: %s", m.Payload)
	}
	m = c.Next(30 * time.Second)
	if !strings.Contains(string(m.Payload), `"operation":"UPDATE"`) || !strings.Contains(string(m.Payload), id) {
		t.Fatalf("after the RESYNC: %s", m.Payload)
	}
	c.None(300 * time.Millisecond)
}

// An open transaction that wrote another account's data holds nothing
// back (positions are per account: nothing waits for another account's
// transactions), and a change written with plain SQL, which wakes nobody,
// reaches the subscriber through the hub's floor check.
func TestLiveHeldBack(t *testing.T) {
	d := newLiveDB(t)
	in := start(t, d.url, nil)
	c := in.ws(t, d.keys["acme/admin"])
	c.Subscribe("1", `subscription { changes { operation id } }`, nil)
	testkit.WaitFor(t, 30*time.Second, "a subscription", func() bool { return in.h.Subscriptions() == 1 })
	older, err := d.sql.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer older.Rollback()
	// Each write names its row's account as a value (a single-shard write
	// on Citus): a write whose account comes from a subquery, or by id
	// alone, runs on every shard, and Citus makes a second such write wait
	// for the first's transaction (citus_lock_waits shows it), which would
	// hold back the account's change below.
	var globex, acme string
	if err := d.sql.QueryRow(`SELECT (SELECT id FROM accounts WHERE slug = 'globex'), (SELECT id FROM accounts WHERE slug = 'acme')`).Scan(&globex, &acme); err != nil {
		t.Fatal(err)
	}
	if _, err := older.Exec(`UPDATE accounts SET company_name = company_name WHERE id = $1`, globex); err != nil {
		t.Fatal(err)
	}
	other, _ := d.container(t, "globex", 0)
	if _, err := older.Exec(`UPDATE containers SET seal_number = 'open' WHERE account_id = $1 AND id = $2`, globex, other); err != nil {
		t.Fatal(err)
	}
	id, _ := d.container(t, "acme", 0)
	d.exec(t, `UPDATE containers SET seal_number = 'held back' WHERE account_id = $1 AND id = $2`, acme, id)
	m := c.Next(10 * time.Second)
	if !strings.Contains(string(m.Payload), `"operation":"UPDATE"`) || !strings.Contains(string(m.Payload), id) {
		t.Fatalf("with another account's transaction open: %s", m.Payload)
	}
}
