package rest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// triggerEndpoint is POST /v2/webhooks/trigger's: no query parameters.
var triggerEndpoint = endpoint{Serializer: "V2::WebhookTriggerSerializer"}

// triggerWebhook answers POST /v2/webhooks/trigger: the example payload of
// an event (as GET /v2/webhook_notifications/examples shows it) sent once
// to a URL, signed when a secret is given, and what the receiver answered
// (the public document's plain JSON object, not a JSON:API document).
// Admin keys only, as every webhook call; the URL passes the webhook URL
// rules and SSRF guard; a key may send a few at once and one every 10 s
// (429 with Retry-After beyond). Nothing is stored.
func (s *server) triggerWebhook(w http.ResponseWriter, r *http.Request) {
	if _, err := parseParams(r, triggerEndpoint); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	// The body's errors are the command's Invalid: the resolver layer
	// answers the role's 403 first.
	var c resolve.TriggerWebhook
	attrs, err := jsonapi.ReadAttributes(r, "webhook_trigger")
	if err != nil {
		c.Invalid = err
	} else {
		u, errURL := attrs.Text("url", true)
		e, errEvent := attrs.Text("event", true)
		sec, errSecret := attrs.Text("secret", false)
		c.URL, c.Event, c.Secret = deref(u), deref(e), deref(sec)
		c.Invalid = firstErr(errURL, errEvent, errSecret)
	}
	if c.Invalid == nil {
		c.Payload = s.examplePayload(r, strings.TrimSpace(c.Event))
	}
	trial, wait, err := s.res.TriggerWebhook(r.Context(), who(r), c)
	if err != nil {
		if wait > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		}
		jsonapi.WriteError(w, r, err)
		return
	}
	b, err := json.Marshal(trial)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

// examplePayload is the body a delivery of event's example notification
// sends (a JSON:API document: the notification, its reference object
// included), or nil when event is not one Shipgraph raises.
func (s *server) examplePayload(r *http.Request, event string) []byte {
	examples, err := s.res.WebhookExamples(r.Context(), who(r), event)
	if err != nil || event == "" || len(examples) != 1 {
		return nil
	}
	b := s.newBuilder(s.baseURL(r), nil)
	b.withIncluded = true
	res, ref := exampleNotification(b, examples[0])
	b.include(ref)
	out, err := b.document(res, nil, nil).AppendJSON(nil)
	if err != nil {
		return nil
	}
	return out
}
