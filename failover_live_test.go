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
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"shipgraph/db/dbtest"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

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
	writeOnce()
	for name, f := range map[string]*testkit.Feed[change]{"WebSocket": p.ws, "SSE": p.sse} {
		f.Wait(t, 30*time.Second, "a first change on the "+name+" subscription", func(c change) bool { return c.LogID != "" })
	}
	return p
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
			var r struct {
				Data struct {
					Changes struct {
						Operation, LogID, Type, ID, ParentID string
						ChangedFields                        []string
					}
				}
				Errors []any
			}
			if m.Type != "next" || json.Unmarshal(m.Payload, &r) != nil || len(r.Errors) > 0 {
				f.Add(change{Operation: "BROKEN " + m.Type + " " + string(m.Payload)})
				continue
			}
			f.Add(change(r.Data.Changes))
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
//     that succeeded after the kill), so that attempt's record was made,
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
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the second serve did not stop within 30s of cancellation")
		}
	})
	s := &secondInstance{base: base, log: stderr, key: key, dbURL: dbURL}
	// The key is used (and cached) on this instance, and holds a
	// subscription there: the revocation must end it.
	if res, body := get(t, base+"/v2/shipments", key); res.StatusCode != http.StatusOK {
		t.Fatalf("second instance: GET /v2/shipments: %d %s", res.StatusCode, body)
	}
	w, err := testkit.DialWS(t, base, map[string]any{"Authorization": "Token " + key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Subscribe("1", changesQuery, nil)
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
		if res, body := get(t, base+"/v2/shipments", s.key); res.StatusCode != http.StatusOK {
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
		if res, body := get(t, base+"/v2/shipments", s.key); res.StatusCode != http.StatusUnauthorized {
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
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop within 30s of cancellation")
		}
		if t.Failed() {
			s := stderr.String()
			t.Logf("serve's log (the end):\n%s", s[max(0, len(s)-6000):])
		}
	})
	return base
}
