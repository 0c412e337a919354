package rest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"shipgraph/resolve"
	"shipgraph/testkit"
	"shipgraph/webhook"
)

func TestWebhookTrigger(t *testing.T) {
	e := newEnv(t, envOptions{webhooks: &resolve.WebhookConfig{AllowPrivate: true}})
	rc := testkit.NewReceiver(t, http.StatusAccepted, "got it", "X-Receiver", "yes")

	trigger := func(who string, body any) *response {
		t.Helper()
		return e.do(who, http.MethodPost, "/v2/webhooks/trigger", body)
	}
	type trial struct {
		URL             string            `json:"url"`
		Succeeded       bool              `json:"succeeded"`
		Error           *string           `json:"error"`
		StatusCode      *int              `json:"status_code"`
		RequestHeaders  map[string]string `json:"request_headers"`
		RequestBody     string            `json:"request_body"`
		ResponseHeaders map[string]string `json:"response_headers"`
		ResponseBody    *string           `json:"response_body"`
		Other           map[string]any    `json:"-"`
	}
	read := func(r *response) trial {
		t.Helper()
		wantJSON(t, r, http.StatusOK, "post-webhooks-trigger-200")
		var members map[string]json.RawMessage
		var tr trial
		if json.Unmarshal(r.body, &members) != nil || json.Unmarshal(r.body, &tr) != nil || len(members) != 8 {
			t.Fatalf("trigger answer: %s", r.body)
		}
		return tr
	}

	// A signed delivery of the event's example, and the receiver's answer.
	tr := read(trigger("acme/admin", map[string]any{"url": rc.URL + "/hook", "event": "tracking_request.succeeded", "secret": "s3cret"}))
	all := rc.Got.All()
	if len(all) != 1 {
		t.Fatalf("the receiver got %d requests, want 1", len(all))
	}
	got, body := all[0], all[0].Body
	if !tr.Succeeded || tr.Error != nil || tr.StatusCode == nil || *tr.StatusCode != http.StatusAccepted ||
		tr.ResponseBody == nil || *tr.ResponseBody != "got it" || tr.ResponseHeaders["X-Receiver"] != "yes" || tr.URL != rc.URL+"/hook" {
		t.Errorf("a delivery the receiver took: %+v", tr)
	}
	if tr.RequestBody != string(body) || !webhook.Verify("s3cret", body, got.Header.Get(webhook.SignatureHeader)) ||
		tr.RequestHeaders[webhook.SignatureHeader] != got.Header.Get(webhook.SignatureHeader) || got.Header.Get("Content-Type") != "application/json" {
		t.Errorf("what was sent: headers %v, body %s; reported %+v", got.Header, body, tr)
	}
	var doc struct {
		Data struct {
			Type       string
			Attributes struct{ Event string }
		}
		Included []struct{ Type string }
	}
	if json.Unmarshal(body, &doc) != nil || doc.Data.Type != "webhook_notification" || doc.Data.Attributes.Event != "tracking_request.succeeded" ||
		len(doc.Included) == 0 || doc.Included[0].Type != "tracking_request" {
		t.Errorf("the payload is not the event's example notification: %s", body)
	}

	// A receiver that fails: reported, not retried; no secret, no signature.
	rc.SetStatus(http.StatusInternalServerError)
	tr = read(trigger("acme/admin", map[string]any{"url": rc.URL, "event": "container.transport.vessel_arrived"}))
	if tr.Succeeded || tr.Error == nil || tr.StatusCode == nil || *tr.StatusCode != http.StatusInternalServerError {
		t.Errorf("a receiver's 500: %+v", tr)
	}
	if _, signed := tr.RequestHeaders[webhook.SignatureHeader]; signed {
		t.Errorf("signed without a secret: %v", tr.RequestHeaders)
	}

	// Nobody listening: no status, the error.
	closed := testkit.NewReceiver(t, http.StatusNotFound, "")
	closed.Close()
	tr = read(trigger("acme/admin", map[string]any{"url": closed.URL, "event": "container.updated"}))
	if tr.Succeeded || tr.Error == nil || tr.StatusCode != nil || tr.ResponseBody != nil || tr.ResponseHeaders != nil {
		t.Errorf("nobody listening: %+v", tr)
	}

	// Past the key's limit (3 at once): 429 with Retry-After.
	r := trigger("acme/admin", map[string]any{"url": rc.URL, "event": "container.updated"})
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Errorf("past the limit: %d %s (Retry-After %q)", r.status, r.body, r.header.Get("Retry-After"))
	}
	if n := len(rc.Got.All()); n != 2 {
		t.Errorf("the receiver got %d requests, want 2", n)
	}

	// Refusals, in the resolver's order: the key, the role, the body.
	for _, c := range []struct {
		who    string
		body   any
		status int
		detail string
	}{
		{"", map[string]any{"url": rc.URL, "event": "container.updated"}, http.StatusUnauthorized, ""},
		{"acme/member", map[string]any{"url": rc.URL, "event": "container.updated"}, http.StatusForbidden, "admin"},
		{"acme/viewer", "not json", http.StatusForbidden, "admin"},
		{"globex/admin", "not json", http.StatusBadRequest, "JSON object"},
		{"globex/admin", map[string]any{"event": "container.updated"}, http.StatusUnprocessableEntity, "url is required"},
		{"globex/admin", map[string]any{"url": rc.URL, "event": "container.nonsense"}, http.StatusUnprocessableEntity, "not an event"},
		{"globex/admin", map[string]any{"url": "ftp://example.com/x", "event": "container.updated"}, http.StatusUnprocessableEntity, "url"},
		{"globex/admin", map[string]any{"url": rc.URL, "event": 7}, http.StatusUnprocessableEntity, "event must be a string"},
	} {
		r := trigger(c.who, c.body)
		if r.status != c.status || !strings.Contains(string(r.body), c.detail) {
			t.Errorf("%s %v: %d %s, want %d with %q", c.who, c.body, r.status, r.body, c.status, c.detail)
		}
	}
	if n := len(rc.Got.All()); n != 2 {
		t.Errorf("refused triggers reached the receiver: %d requests", n)
	}
}

// TestWebhookTriggerGuard: without WEBHOOK_ALLOW_PRIVATE_URLS the same SSRF
// guard as webhooks refuses a private address before anything is sent.
func TestWebhookTriggerGuard(t *testing.T) {
	e := newEnv(t, envOptions{})
	rc := testkit.NewReceiver(t, http.StatusAccepted, "got it", "X-Receiver", "yes")
	for _, u := range []string{rc.URL, "https://127.0.0.1:9/x", "https://10.0.0.1/x", "https://[::1]/x"} {
		r := e.do("acme/admin", http.MethodPost, "/v2/webhooks/trigger", map[string]any{"url": u, "event": "container.updated"})
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(string(r.body), "/data/attributes/url") {
			t.Errorf("%s: %d %s, want 422 on url", u, r.status, r.body)
		}
	}
	if n := len(rc.Got.All()); n != 0 {
		t.Errorf("the guard let %d requests through", n)
	}
}
