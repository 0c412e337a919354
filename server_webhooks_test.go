package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"shipgraph/db/dbtest"
	"shipgraph/model"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

// TestWebhooksFromEveryWriter is issue 17's end-to-end check, through the
// real server (`shipgraph serve`): a receiver on 127.0.0.1 gets signed,
// verifiable notifications for changes made through GraphQL, /v2 and
// plain SQL, and /v2/webhook_notifications reconciles them. The change is
// the one the APIs can make and a public event names: a shipment's
// tracking stops (tracking_request.tracking_stopped).
func TestWebhooksFromEveryWriter(t *testing.T) {
	url, base, keys := serveSeeded(t, "10", "--webhook-allow-private-urls", "--webhook-retry-base", "20ms")
	sqldb := dbtest.Open(t, url)
	ctx := context.Background()

	recv := testkit.NewReceiver(t, http.StatusNoContent, "")
	other := testkit.NewReceiver(t, http.StatusNoContent, "") // globex's endpoint: acme's changes must not reach it

	do := func(method, path, key, body string) (int, []byte) {
		t.Helper()
		return call(t, method, base+path, key, body)
	}
	create := func(key, url string) (id, secret string) {
		t.Helper()
		status, body := do(http.MethodPost, "/v2/webhooks", key, `{"data":{"type":"webhook","attributes":{"url":"`+url+
			`","events":["tracking_request.tracking_stopped"]}}}`)
		var doc struct {
			Data struct {
				ID         string
				Attributes struct{ Secret string }
			}
		}
		if status != http.StatusCreated || json.Unmarshal(body, &doc) != nil || doc.Data.Attributes.Secret == "" {
			t.Fatalf("POST /v2/webhooks: %d %s", status, body)
		}
		return doc.Data.ID, doc.Data.Attributes.Secret
	}
	hook, secret := create(keys["acme admin"], recv.URL+"/t49")
	create(keys["globex admin"], other.URL)

	ships := pg.Column[string](t, sqldb, `SELECT s.id FROM shipments s JOIN accounts a ON a.id = s.account_id
		WHERE a.slug = 'acme' AND s.line_tracking_stopped_at IS NULL ORDER BY s.id LIMIT 3`)
	if len(ships) != 3 {
		t.Fatalf("acme has %d tracked shipments, want 3", len(ships))
	}

	// GraphQL, /v2 and plain SQL each stop one shipment's tracking.
	status, body := do(http.MethodPost, "/graphql", keys["acme member"],
		`{"query":"mutation($id: ID!) { stopTrackingShipment(id: $id) { id lineTrackingStoppedAt } }","variables":{"id":"`+ships[0]+`"}}`)
	if status != http.StatusOK || strings.Contains(string(body), `"errors"`) {
		t.Fatalf("GraphQL stopTrackingShipment: %d %s", status, body)
	}
	if status, body := do(http.MethodPatch, "/v2/shipments/"+ships[1]+"/stop_tracking", keys["acme member"], ""); status != http.StatusOK {
		t.Fatalf("PATCH /v2/shipments/{id}/stop_tracking: %d %s", status, body)
	}
	if _, err := sqldb.ExecContext(ctx, `UPDATE shipments SET line_tracking_stopped_at = now(),
		line_tracking_stopped_reason = 'past_arrival_window' WHERE id = $1`, ships[2]); err != nil {
		t.Fatal(err)
	}
	// Stopping a stopped shipment again changes nothing the event watches.
	if status, _ := do(http.MethodPatch, "/v2/shipments/"+ships[1]+"/stop_tracking", keys["acme member"], ""); status != http.StatusOK {
		t.Fatalf("second stop_tracking: %d", status)
	}

	seen := map[string]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; len(seen) < 3; i++ {
		got, ok := recv.Got.WaitN(time.Until(deadline), i+1)
		if !ok {
			var state string
			_ = sqldb.QueryRowContext(ctx, `SELECT string_agg(event || ' ' || reference_id || ' ' || delivery_status || ' ' || attempts || ' ' || coalesce(last_error, ''), E'\n') FROM webhook_notifications`).Scan(&state)
			var logged string
			_ = sqldb.QueryRowContext(ctx, `SELECT string_agg(record_type || ' ' || record_id || ' ' || op || ' ' || array_to_string(changed, ','), E'\n') FROM change_log`).Scan(&logged)
			t.Logf("notifications:\n%s\nlog:\n%s", state, logged)
			t.Fatalf("deliveries for %d of 3 shipments within 30s: %v", len(seen), seen)
		}
		d := got[i] // one arrival per delivery, in order
		// The receiver's check: HMAC-SHA256 of the exact body, keyed by
		// the secret shown at creation.
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(d.Body)
		if sig, want := d.Header.Get("X-T49-Webhook-Signature"), hex.EncodeToString(m.Sum(nil)); sig != want {
			t.Errorf("signature %q, want %q over %s", sig, want, d.Body)
		}
		if ct := d.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		var doc struct {
			Data struct {
				ID         string
				Type       string
				Attributes struct{ Event string }
			}
			Included []struct {
				ID            string
				Type          string
				Attributes    map[string]any
				Relationships map[string]struct{ Data json.RawMessage }
			}
		}
		if err := json.Unmarshal(d.Body, &doc); err != nil || doc.Data.Type != "webhook_notification" ||
			doc.Data.Attributes.Event != "tracking_request.tracking_stopped" {
			t.Fatalf("delivery %v: %s", err, d.Body)
		}
		var shipment string
		for _, inc := range doc.Included {
			var tracked struct{ ID, Type string }
			if inc.Type == "tracking_request" && json.Unmarshal(inc.Relationships["tracked_object"].Data, &tracked) == nil &&
				tracked.Type == "shipment" && inc.ID == model.TrackingRequestID(tracked.ID) && inc.Attributes["status"] == "tracking_stopped" {
				shipment = tracked.ID
			}
		}
		if shipment == "" || !strings.Contains(string(d.Body), `"type":"shipment","id":"`+shipment+`"`) {
			t.Fatalf("no stopped tracking request with its shipment included: %s", d.Body)
		}
		if seen[shipment] {
			t.Errorf("shipment %s notified twice", shipment)
		}
		seen[shipment] = true
	}
	for _, s := range ships {
		if !seen[s] {
			t.Errorf("no notification for shipment %s", s)
		}
	}

	// Reconciliation: the list has each, delivered.
	var list struct {
		Data []struct {
			Attributes struct {
				Event          string
				DeliveryStatus string `json:"delivery_status"`
			}
			Relationships map[string]struct{ Data struct{ ID, Type string } }
		}
	}
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		status, body := do(http.MethodGet, "/v2/webhook_notifications?include=reference_object&filter[webhook_id]="+hook, keys["acme admin"], "")
		if status != http.StatusOK || json.Unmarshal(body, &list) != nil {
			t.Fatalf("GET /v2/webhook_notifications: %d %s", status, body)
		}
		done := len(list.Data) == 3
		for _, n := range list.Data {
			done = done && n.Attributes.DeliveryStatus == "succeeded"
		}
		if done {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("notifications not all succeeded: %s", body)
		}
	}
	refs := map[string]bool{}
	for _, n := range list.Data {
		r := n.Relationships["reference_object"].Data
		if r.Type != "tracking_request" {
			t.Errorf("reference object %+v", r)
		}
		refs[model.TrackingRequestID(r.ID)] = true
	}
	for _, s := range ships {
		if !refs[s] {
			t.Errorf("/v2/webhook_notifications has no notification for shipment %s: %v", s, refs)
		}
	}
	if n := len(recv.Got.All()); n != 3 {
		t.Errorf("%d deliveries, want 3 (one per stop)", n)
	}
	if n := len(other.Got.All()); n != 0 {
		t.Errorf("globex's endpoint got %d deliveries of acme's changes", n)
	}
}
