package rest_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest"
	"shipgraph/rest/jsonapi"
	"shipgraph/testkit"
)

// Fixed ids of the webhook fixtures (notifications are the delivery's to
// raise; the tests insert them as it does).
const (
	hookAcme       = "0b7e5d0c-1d9a-4f6e-9b43-5b1c3c2a0001"
	hookGlobex     = "0b7e5d0c-1d9a-4f6e-9b43-5b1c3c2a0002"
	noteUpdated    = "6a1f2b3c-4d5e-4f60-8a7b-9c0d1e2f0001"
	noteAvailable  = "6a1f2b3c-4d5e-4f60-8a7b-9c0d1e2f0002"
	noteEstimated  = "6a1f2b3c-4d5e-4f60-8a7b-9c0d1e2f0003"
	noteGlobex     = "6a1f2b3c-4d5e-4f60-8a7b-9c0d1e2f0004"
	noteStopped    = "6a1f2b3c-4d5e-4f60-8a7b-9c0d1e2f0005"
	publicHookURL  = "https://93.184.216.34/hooks/shipgraph"
	unknownWebhook = "00000000-0000-4000-8000-000000000000"
)

// webhookFixtures are the ids the webhook tests use.
type webhookFixtures struct {
	acme, globex          string // account ids
	container, shipment   string // acme's
	globexContainer       string
	hook, note, otherNote string
}

// seedWebhooks stores a webhook of each account and notifications of the
// three reference object types for acme's, one for globex's.
func seedWebhooks(t *testing.T, e *env) webhookFixtures {
	t.Helper()
	ctx := context.Background()
	f := findFixtures(t, e)
	var w webhookFixtures
	w.container, w.shipment = f.container, f.shipment
	w.globexContainer = e.firstIDAs("globex/admin", "/v2/containers?page[size]=1")
	sqldb := e.store.SQL()
	for slug, dst := range map[string]*string{"acme": &w.acme, "globex": &w.globex} {
		if err := sqldb.QueryRowContext(ctx, `SELECT id FROM accounts WHERE slug = $1`, slug).Scan(dst); err != nil {
			t.Fatal(err)
		}
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := sqldb.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	exec(`INSERT INTO webhooks (account_id, id, url, events, secret, headers, created_at, updated_at) VALUES
		($1, $2, $3, '{container.updated,container.transport.available,shipment.estimated.arrival}', 'acme-secret',
		 '[{"name":"X-Secret-Sauce","value":"sriracha"}]', '2026-03-01T10:00:00Z', '2026-03-01T10:00:00Z'),
		($4, $5, 'https://93.184.216.34/globex', '{container.updated}', 'globex-secret', '[]', '2026-03-01T10:00:00Z', '2026-03-01T10:00:00Z')`,
		w.acme, hookAcme, publicHookURL, w.globex, hookGlobex)
	ins := `INSERT INTO webhook_notifications (account_id, id, webhook_id, event, change_id, reference_type, reference_id, payload, delivery_status, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`
	exec(ins, w.acme, noteUpdated, hookAcme, "container.updated", 101, "container", w.container,
		`{"changeset": {"pickup_lfd": [null, "2026-03-05T00:00:00Z"], "available_for_pickup": [false, true]}, "timestamp": "2026-03-01T11:00:00Z", "timezone": "America/Los_Angeles", "data_source": "terminal"}`,
		"pending", "2026-03-01T11:00:01Z")
	exec(ins, w.acme, noteAvailable, hookAcme, "container.transport.available", 101, "container", w.container,
		`{"event": "container.transport.available", "timestamp": "2026-03-01T11:00:00Z", "timezone": "America/Los_Angeles", "location_locode": null, "voyage_number": null, "data_source": "terminal", "created_at": "2026-03-01T11:00:01Z"}`,
		"succeeded", "2026-03-01T11:00:02Z")
	exec(ins, w.acme, noteEstimated, hookAcme, "shipment.estimated.arrival", 102, "shipment", w.shipment,
		`{"event": "shipment.estimated.arrival", "estimated_timestamp": "2026-03-09T06:00:00Z", "timezone": null, "location_locode": null, "voyage_number": null, "data_source": "shipping_line", "created_at": "2026-03-01T12:00:00Z"}`,
		"failed", "2026-03-01T12:00:01Z")
	exec(ins, w.globex, noteGlobex, hookGlobex, "container.updated", 103, "container", w.globexContainer,
		`{"changeset": {"pickup_lfd": [null, "2026-03-06T00:00:00Z"]}, "timestamp": "2026-03-01T13:00:00Z"}`, "pending", "2026-03-01T13:00:01Z")
	w.hook, w.note, w.otherNote = hookAcme, noteUpdated, noteGlobex
	return w
}

func (e *env) firstIDAs(who, path string) string {
	e.t.Helper()
	data := e.getAs(who, path)["data"].([]any)
	if len(data) == 0 {
		e.t.Fatalf("GET %s: empty list", path)
	}
	return data[0].(map[string]any)["id"].(string)
}

// TestWebhookGolden answers the webhook reads with fixed bodies that match
// the OpenAPI document's schemas.
func TestWebhookGolden(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := seedWebhooks(t, e)
	cases := []struct{ name, path, schema string }{
		{"webhooks", "/v2/webhooks", "get-webhooks-200"},
		{"webhook", "/v2/webhooks/" + w.hook, "get-webhook-200"},
		{"webhook_events", "/v2/webhooks/events", "get-webhook-events-200"},
		{"webhook_notifications", "/v2/webhook_notifications", "get-webhook-notifications-200"},
		{"webhook_notifications_include_all", "/v2/webhook_notifications?include=webhook,reference_object&page[size]=2", "get-webhook-notifications-200"},
		{"webhook_notifications_failed", "/v2/webhook_notifications?filter[delivery_status]=failed&filter[webhook_id]=" + w.hook, "get-webhook-notifications-200"},
		{"webhook_notification", "/v2/webhook_notifications/" + noteEstimated + "?include=webhook,reference_object", "get-webhook-notification-200"},
		{"webhook_notification_transport", "/v2/webhook_notifications/" + noteAvailable + "?include=reference_object", "get-webhook-notification-200"},
		{"webhook_notification_examples", "/v2/webhook_notifications/examples", "get-webhook-notification-examples-200"},
		{"webhook_notification_examples_event", "/v2/webhook_notifications/examples?event=shipment.estimated.arrival", "get-webhook-notification-examples-200"},
		{"webhook_ips", "/v2/webhooks/ips", "get-webhook-ips-200"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("acme/admin", "GET", c.path, nil)
			if c.name == "webhook_ips" { // plain JSON, not a JSON:API document
				wantJSON(t, r, http.StatusOK, c.schema)
			} else {
				wantDocument(t, r, http.StatusOK, c.schema)
			}
			golden(t, c.name, r)
		})
	}
	wantError(t, e.do("acme/viewer", "GET", "/v2/webhook_notifications/examples?event=document.split", nil), http.StatusBadRequest, "parameter", "event")
	// Another webhook's filter and an unknown status.
	if d := e.get("/v2/webhook_notifications?filter[webhook_id]=" + unknownWebhook)["data"].([]any); len(d) != 0 {
		t.Errorf("another webhook's notifications: %v", d)
	}
	wantError(t, e.do("acme/admin", "GET", "/v2/webhook_notifications?filter[delivery_status]=lost", nil), http.StatusBadRequest, "parameter", "filter[delivery_status]")
	wantError(t, e.do("acme/admin", "GET", "/v2/webhook_notifications?include=shipment", nil), http.StatusBadRequest, "parameter", "include")
}

var hexSecret = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestWebhookLifecycle creates, reads, changes, rotates and deletes a
// webhook: the secret is shown at creation and rotation only.
func TestWebhookLifecycle(t *testing.T) {
	e := newEnv(t, envOptions{})
	body := map[string]any{"data": map[string]any{"type": "webhook", "attributes": map[string]any{
		"url": publicHookURL, "active": true, "events": []string{"container.updated", "shipment.estimated.arrival"},
		"headers": []map[string]string{{"name": "x-secret-sauce", "value": "sriracha"}},
	}}}
	r := e.do("acme/admin", "POST", "/v2/webhooks", body)
	data := obj(wantDocument(t, r, http.StatusCreated, "post-webhooks-201"), "data")
	id := data["id"].(string)
	attrs := obj(data, "attributes")
	secret, _ := attrs["secret"].(string)
	if !hexSecret.MatchString(secret) {
		t.Fatalf("secret %q is not 32 random bytes in hex", attrs["secret"])
	}
	if loc := r.header.Get("Location"); loc != publicBase+"/v2/webhooks/"+id {
		t.Errorf("Location %q", loc)
	}
	if h := attrs["headers"].([]any)[0].(map[string]any); h["name"] != "X-Secret-Sauce" || h["value"] != "sriracha" {
		t.Errorf("headers %v (names are sent canonical)", attrs["headers"])
	}
	golden(t, "webhook_create", r, id, "{id}", secret, "{secret}")

	// Later reads never show it.
	for _, path := range []string{"/v2/webhooks/" + id, "/v2/webhooks"} {
		if strings.Contains(string(e.do("acme/admin", "GET", path, nil).body), secret) {
			t.Errorf("GET %s shows the secret", path)
		}
	}
	if got := obj(e.get("/v2/webhooks/"+id), "data", "attributes")["secret"]; got != nil {
		t.Errorf("GET shows secret %v, want null", got)
	}

	// A change keeps the secret hidden; other attributes as given.
	r = e.do("acme/admin", "PATCH", "/v2/webhooks/"+id, map[string]any{"data": map[string]any{"type": "webhook", "attributes": map[string]any{
		"active": false, "events": []string{"container.transport.available"}, "headers": []any{},
	}}})
	attrs = obj(wantDocument(t, r, http.StatusOK, "patch-webhook-200"), "data", "attributes")
	if attrs["active"] != false || attrs["secret"] != nil || len(attrs["headers"].([]any)) != 0 || attrs["url"] != publicHookURL ||
		len(attrs["events"].([]any)) != 1 || attrs["events"].([]any)[0] != "container.transport.available" {
		t.Errorf("after PATCH: %v", attrs)
	}

	// Rotation: a new secret, shown once.
	for _, rotate := range []any{nil, "rotate"} {
		r = e.do("acme/admin", "PATCH", "/v2/webhooks/"+id, resource("webhook", map[string]any{"secret": rotate}))
		if r.status != http.StatusOK {
			t.Fatalf("rotate: %d\n%s", r.status, r.body)
		}
		next, _ := obj(r.json(t), "data", "attributes")["secret"].(string)
		if !hexSecret.MatchString(next) || next == secret {
			t.Fatalf("rotated secret %q (was %q)", next, secret)
		}
		secret = next
	}
	var stored string
	if err := e.store.SQL().QueryRow(`SELECT secret FROM webhooks WHERE id = $1`, id).Scan(&stored); err != nil || stored != secret {
		t.Errorf("stored secret %q, %v; want the rotated one", stored, err)
	}
	wantError(t, e.do("acme/admin", "PATCH", "/v2/webhooks/"+id, resource("webhook", map[string]any{"secret": "mine"})),
		http.StatusUnprocessableEntity, "pointer", "/data/attributes/secret")

	// Delete: 200 with the webhook, then 404.
	r = e.do("acme/admin", "DELETE", "/v2/webhooks/"+id, nil)
	if r.status != http.StatusOK || obj(r.json(t), "data")["id"] != id {
		t.Fatalf("DELETE: %d\n%s", r.status, r.body)
	}
	wantError(t, e.do("acme/admin", "GET", "/v2/webhooks/"+id, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/admin", "DELETE", "/v2/webhooks/"+id, nil), http.StatusNotFound, "", "")
}

// TestWebhookValidation: every refused input is a 422 pointing at its
// attribute, and nothing is stored.
func TestWebhookValidation(t *testing.T) {
	e := newEnv(t, envOptions{})
	valid := func() map[string]any {
		return map[string]any{"url": publicHookURL, "events": []any{"container.updated"}}
	}
	cases := []struct {
		name   string
		change map[string]any
		member string
		detail string
	}{
		{"http", map[string]any{"url": "http://93.184.216.34/h"}, "url", "https"},
		{"loopback", map[string]any{"url": "https://127.0.0.1/h"}, "url", "loopback"},
		{"localhost", map[string]any{"url": "https://localhost:8443/h"}, "url", "loopback"},
		{"private", map[string]any{"url": "https://10.1.2.3/h"}, "url", "private"},
		{"metadata", map[string]any{"url": "https://169.254.169.254/latest/meta-data/"}, "url", "metadata"},
		{"metadata v6", map[string]any{"url": "https://[fd00:ec2::254]/"}, "url", "metadata"},
		{"mapped", map[string]any{"url": "https://[::ffff:127.0.0.1]/"}, "url", "loopback"},
		{"credentials", map[string]any{"url": "https://u:p@93.184.216.34/"}, "url", "credentials"},
		{"not a url", map[string]any{"url": "hooks"}, "url", "https"},
		{"missing url", map[string]any{"url": nil}, "url", "url"},
		{"no events", map[string]any{"events": []any{}}, "events", "at least one"},
		{"unknown event", map[string]any{"events": []any{"document.split"}}, "events", "document.split"},
		{"repeated event", map[string]any{"events": []any{"container.updated", "container.updated"}}, "events", "twice"},
		{"events not strings", map[string]any{"events": "container.updated"}, "events", "list"},
		{"signature header", map[string]any{"headers": []any{map[string]any{"name": "x-t49-webhook-signature", "value": "x"}}}, "headers", "X-T49-Webhook-Signature"},
		{"content type header", map[string]any{"headers": []any{map[string]any{"name": "Content-Type", "value": "text/plain"}}}, "headers", "Content-Type"},
		{"host header", map[string]any{"headers": []any{map[string]any{"name": "Host", "value": "x"}}}, "headers", "Host"},
		{"hop-by-hop header", map[string]any{"headers": []any{map[string]any{"name": "Transfer-Encoding", "value": "chunked"}}}, "headers", "Transfer-Encoding"},
		{"bad header name", map[string]any{"headers": []any{map[string]any{"name": "X Bad", "value": "x"}}}, "headers", "not a valid header name"},
		{"header line break", map[string]any{"headers": []any{map[string]any{"name": "X-A", "value": "a\r\nB: c"}}}, "headers", "one line"},
		{"active not bool", map[string]any{"active": "yes"}, "active", "true or false"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			attrs := valid()
			for k, v := range c.change {
				if v == nil {
					delete(attrs, k)
				} else {
					attrs[k] = v
				}
			}
			r := e.do("acme/admin", "POST", "/v2/webhooks", map[string]any{"data": map[string]any{"type": "webhook", "attributes": attrs}})
			er := wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/data/attributes/"+c.member)
			if d, _ := er["detail"].(string); !strings.Contains(d, c.detail) {
				t.Errorf("detail %q, want it to mention %q", d, c.detail)
			}
			// The same rules on PATCH, after the webhook is found.
			if c.name != "missing url" {
				r = e.do("acme/admin", "PATCH", "/v2/webhooks/"+unknownWebhook, map[string]any{"data": map[string]any{"type": "webhook", "attributes": attrs}})
				wantError(t, r, http.StatusNotFound, "", "")
			}
		})
	}
	if n := len(e.get("/v2/webhooks")["data"].([]any)); n != 0 {
		t.Errorf("%d webhooks stored by refused creates", n)
	}
	// A PATCH of an existing webhook is checked the same way.
	r := e.do("acme/admin", "POST", "/v2/webhooks", map[string]any{"data": map[string]any{"type": "webhook", "attributes": valid()}})
	if r.status != http.StatusCreated {
		t.Fatalf("POST: %d %s", r.status, r.body)
	}
	id := obj(r.json(t), "data")["id"].(string)
	wantError(t, e.do("acme/admin", "PATCH", "/v2/webhooks/"+id, map[string]any{"url": "https://192.168.0.1/"}), http.StatusUnprocessableEntity, "pointer", "/data/attributes/url")
	wantError(t, e.do("acme/admin", "PATCH", "/v2/webhooks/"+id, map[string]any{"events": nil}), http.StatusUnprocessableEntity, "pointer", "/data/attributes/events")
	wantError(t, e.do("acme/admin", "POST", "/v2/webhooks", map[string]any{"data": map[string]any{"type": "shipment", "attributes": valid()}}), http.StatusBadRequest, "pointer", "/data/type")
}

// TestWebhookLimit: WEBHOOK_LIMIT (25 by default) webhooks per account,
// then a 422 saying so; another account is not affected.
func TestWebhookLimit(t *testing.T) {
	e := newEnv(t, envOptions{})
	body := map[string]any{"url": publicHookURL, "events": []any{"container.updated"}}
	for i := range resolve.DefaultWebhookLimit {
		if r := e.do("acme/admin", "POST", "/v2/webhooks", body); r.status != http.StatusCreated {
			t.Fatalf("webhook %d: %d %s", i+1, r.status, r.body)
		}
	}
	er := wantError(t, e.do("acme/admin", "POST", "/v2/webhooks", body), http.StatusUnprocessableEntity, "pointer", "/data")
	if d, _ := er["detail"].(string); !strings.Contains(d, "WEBHOOK_LIMIT") || !strings.Contains(d, "25") {
		t.Errorf("detail %q", d)
	}
	if r := e.do("globex/admin", "POST", "/v2/webhooks", body); r.status != http.StatusCreated {
		t.Errorf("globex: %d %s", r.status, r.body)
	}
}

// TestWebhookAccess: 401 without a key on every path; 403 for members and
// viewers on every path but the events; 404 for another account's ids, the
// same answer as for an unknown one; lists show only the caller's.
func TestWebhookAccess(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := seedWebhooks(t, e)
	patch := resource("webhook", map[string]any{"active": false})
	create := map[string]any{"url": publicHookURL, "events": []any{"container.updated"}}
	calls := []struct {
		method, path string
		body         any
	}{
		{"GET", "/v2/webhooks", nil},
		{"POST", "/v2/webhooks", create},
		{"GET", "/v2/webhooks/" + w.hook, nil},
		{"PATCH", "/v2/webhooks/" + w.hook, patch},
		{"DELETE", "/v2/webhooks/" + w.hook, nil},
		{"GET", "/v2/webhook_notifications", nil},
		{"GET", "/v2/webhook_notifications/" + w.note, nil},
		{"GET", "/v2/webhooks/events", nil},
		{"GET", "/v2/webhooks/ips", nil},
		{"GET", "/v2/webhook_notifications/examples", nil},
	}
	for _, c := range calls {
		wantError(t, e.do("", c.method, c.path, c.body), http.StatusUnauthorized, "", "")
		for _, who := range []string{"acme/member", "acme/viewer"} {
			r := e.do(who, c.method, c.path, c.body)
			switch c.path {
			case "/v2/webhooks/events", "/v2/webhooks/ips", "/v2/webhook_notifications/examples":
				if r.status != http.StatusOK {
					t.Errorf("%s GET %s: %d", who, c.path, r.status)
				}
				continue
			}
			// Viewers are refused any write first, as elsewhere.
			er := wantError(t, r, http.StatusForbidden, "", "")
			if d, _ := er["detail"].(string); !strings.Contains(d, "admin") && !strings.Contains(d, "may not change data") {
				t.Errorf("%s %s %s: detail %q", who, c.method, c.path, d)
			}
		}
		// globex's admin: acme's ids are unknown.
		if strings.Contains(c.path, w.hook) || strings.Contains(c.path, w.note) {
			r := e.do("globex/admin", c.method, c.path, c.body)
			wantError(t, r, http.StatusNotFound, "", "")
			unknown := strings.NewReplacer(w.hook, unknownWebhook, w.note, unknownWebhook).Replace(c.path)
			if other := e.do("globex/admin", c.method, unknown, c.body); other.status != http.StatusNotFound || string(other.body) != string(r.body) {
				t.Errorf("%s %s: another account's answers\n%s\nan unknown one\n%s", c.method, c.path, r.body, other.body)
			}
		}
	}
	// Nothing changed: acme's webhook is still there and active.
	if a := obj(e.get("/v2/webhooks/"+w.hook), "data", "attributes"); a["active"] != true {
		t.Errorf("acme's webhook changed: %v", a)
	}
	// Lists: each account sees its own.
	for who, want := range map[string][]string{"acme/admin": {w.hook}, "globex/admin": {hookGlobex}} {
		var got []string
		for _, d := range e.getAs(who, "/v2/webhooks")["data"].([]any) {
			got = append(got, d.(map[string]any)["id"].(string))
		}
		if len(got) != len(want) || got[0] != want[0] {
			t.Errorf("%s webhooks %v, want %v", who, got, want)
		}
	}
	notes := e.getAs("globex/admin", "/v2/webhook_notifications?include=webhook,reference_object")
	if d := notes["data"].([]any); len(d) != 1 || d[0].(map[string]any)["id"] != w.otherNote {
		t.Errorf("globex notifications %v", d)
	}
	if strings.Contains(string(testkit.JSON(t, notes)), w.container) {
		t.Error("globex's notifications show an acme container")
	}
}

// TestNotificationPayload renders the body a delivery sends: the
// notification with its reference object and the object's records
// included, valid against the single notification's schema, the same
// bytes every time; another account's or an unknown id is not found.
func TestNotificationPayload(t *testing.T) {
	e := newEnv(t, envOptions{})
	w := seedWebhooks(t, e)
	res := resolve.New(e.store, resolve.Deps{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A tracking request's notification: another shipment stopped tracking.
	var stopped string
	if err := e.store.SQL().QueryRowContext(ctx, `UPDATE shipments SET line_tracking_stopped_at = '2026-03-01T14:00:00Z',
		line_tracking_stopped_reason = 'cancelled_by_user'
		WHERE id = (SELECT id FROM shipments WHERE account_id = $1 AND id <> $2 ORDER BY id LIMIT 1) RETURNING id`, w.acme, w.shipment).Scan(&stopped); err != nil {
		t.Fatal(err)
	}
	// Its request stopped with it, as stop_tracking does (db.StopTracking).
	if _, err := e.store.SQL().ExecContext(ctx, `UPDATE tracking_requests SET status = 'tracking_stopped', updated_at = '2026-03-01T14:00:00Z'
		WHERE account_id = $1 AND shipment_id = $2`, w.acme, stopped); err != nil {
		t.Fatal(err)
	}

	if _, err := e.store.SQL().ExecContext(ctx, `INSERT INTO webhook_notifications (account_id, id, webhook_id, event, change_id, reference_type, reference_id, payload, delivery_status, created_at)
		VALUES ($1, $2, $3, 'tracking_request.tracking_stopped', 104, 'shipment', $4, '{}', 'pending', '2026-03-01T14:00:01Z')`,
		w.acme, noteStopped, hookAcme, stopped); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, id string }{
		{"webhook_payload_container_updated", noteUpdated},
		{"webhook_payload_transport", noteAvailable},
		{"webhook_payload_estimated", noteEstimated},
		{"webhook_payload_tracking_stopped", noteStopped},
	} {
		t.Run(c.name, func(t *testing.T) {
			body, err := rest.NotificationPayload(ctx, res, rest.Config{PublicBaseURL: publicBase}, w.acme, c.id)
			if err != nil {
				t.Fatal(err)
			}
			r := &response{status: 200, header: http.Header{"Content-Type": {jsonapi.MediaType}}, body: body}
			checkDocument(t, r)
			validate(t, "get-webhook-notification-200", body)
			golden(t, c.name, r)
			again, err := rest.NotificationPayload(ctx, res, rest.Config{PublicBaseURL: publicBase}, w.acme, c.id)
			if err != nil || string(again) != string(body) {
				t.Errorf("a second rendering differs (%v)", err)
			}
			doc := r.json(t)
			ref := obj(doc, "data", "relationships", "reference_object", "data")
			types := map[string]bool{}
			for _, inc := range doc["included"].([]any) {
				types[inc.(map[string]any)["type"].(string)] = true
			}
			if ref == nil || !types[ref["type"].(string)] || !types["shipment"] {
				t.Errorf("reference object %v, included types %v", ref, types)
			}
			if c.id != noteStopped {
				return
			}
			// The tracking request: the public schema, its shipment's, and
			// the shipment's containers included.
			if ref["type"] != "tracking_request" || ref["id"] != model.TrackingRequestID(stopped) || !types["container"] {
				t.Errorf("reference object %v, included types %v", ref, types)
			}
			for _, inc := range doc["included"].([]any) {
				m := inc.(map[string]any)
				if m["type"] != "tracking_request" {
					continue
				}
				validate(t, "tracking_request", testkit.JSON(t, m))
				a := m["attributes"].(map[string]any)
				if a["status"] != "tracking_stopped" || a["updated_at"] != "2026-03-01T14:00:00Z" || a["request_type"] != "bill_of_lading" ||
					obj(m, "relationships", "tracked_object", "data")["id"] != stopped {
					t.Errorf("tracking request %v", m)
				}
			}
		})
	}
	// /v2 renders the same reference object.
	r := e.do("acme/admin", "GET", "/v2/webhook_notifications/"+noteStopped+"?include=reference_object", nil)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `"type":"tracking_request","id":"`+model.TrackingRequestID(stopped)+`"`) ||
		!strings.Contains(string(r.body), `"status":"tracking_stopped"`) {
		t.Errorf("GET the notification: %d %s", r.status, r.body)
	}
	// Relative links without a public base URL, as the public service's payloads.
	body, err := rest.NotificationPayload(ctx, res, rest.Config{}, w.acme, noteUpdated)
	if err != nil || !strings.Contains(string(body), `"self":"/v2/webhook_notifications/`+noteUpdated+`"`) {
		t.Errorf("relative links: %v\n%s", err, body)
	}
	for _, c := range []struct{ acct, id string }{{w.globex, noteUpdated}, {w.acme, noteGlobex}, {w.acme, unknownWebhook}, {w.acme, "nonsense"}} {
		if _, err := rest.NotificationPayload(ctx, res, rest.Config{}, c.acct, c.id); model.ErrorCode(err) != model.ENOTFOUND {
			t.Errorf("account %s notification %s: %v, want not found", c.acct, c.id, err)
		}
	}
}
