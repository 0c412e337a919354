package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"shipgraph/catalog"
	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// Webhooks (docs/webhooks.md):
//
//	GET, POST           /v2/webhooks
//	GET, PATCH, DELETE  /v2/webhooks/{id}
//	GET                 /v2/webhooks/events
//	GET                 /v2/webhooks/ips                      (webhooks_examples.go)
//	GET                 /v2/webhook_notifications
//	GET                 /v2/webhook_notifications/{id}
//	GET                 /v2/webhook_notifications/examples    (webhooks_examples.go)
//
// Admin keys only (403 for members and viewers), but the events, the
// examples and the ips, which any key may read. A webhook's secret is shown in the answer to the
// POST, and to a PATCH that rotates it ("secret": null or "rotate"); null
// in every other answer. DELETE answers 200 with the deleted webhook.
// Notifications take include=webhook,reference_object and, beyond the
// OpenAPI document, filter[webhook_id] and filter[delivery_status].

var (
	webhookList          = endpoint{Serializer: "V2::WebhookSerializer", Paged: true}
	webhookItem          = endpoint{Serializer: "V2::WebhookSerializer"}
	webhookEventList     = endpoint{Serializer: "V2::WebhookEventCategorySerializer"}
	notificationIncludes = includes(catalog.WebhookNotification)
	notificationList     = endpoint{Serializer: "V2::WebhookNotificationSerializer", Includes: notificationIncludes, Paged: true,
		Filters: []string{"filter[webhook_id]", "filter[delivery_status]"}}
	notificationItem = endpoint{Serializer: "V2::WebhookNotificationSerializer", Includes: notificationIncludes}
)

// ---------------------------------------------------------------- webhooks

func (s *server) listWebhooks(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, webhookList, func(ctx context.Context, p *params) (listPage[*model.Webhook], error) {
		pg, err := s.res.Webhooks(ctx, who(r), resolve.WebhookQuery{Page: p.pageArgs(), Plan: p.plan})
		if err != nil {
			return listPage[*model.Webhook]{}, err
		}
		return fromPage(pg, func(ctx context.Context) (int, error) { return s.res.CountWebhooks(ctx, who(r)) }), nil
	}, plain(webhookResource))
}

func (s *server) getWebhook(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, webhookItem, (s.res.Webhook), plain(webhookResource))
}

func (s *server) createWebhook(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, webhookItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, bad := writeBody(r, "webhook")
	in, invalid := webhookInput(attrs)
	wh, err := s.res.CreateWebhook(r.Context(), who(r), resolve.CreateWebhook{Input: in, Invalid: firstErr(bad, invalid)})
	serveCreated(s, w, r, p, wh, err, plain(webhookResource))
}

func (s *server) updateWebhook(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, webhookItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, bad := writeBody(r, "webhook")
	c := resolve.UpdateWebhook{ID: r.PathValue("id")}
	c.Patch, c.RotateSecret, c.Invalid = webhookPatch(attrs)
	c.Invalid = firstErr(bad, c.Invalid)
	wh, err := s.res.UpdateWebhook(r.Context(), who(r), c)
	serveWritten(s, w, r, p, wh, err, plain(webhookResource))
}

func (s *server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	if _, err := parseParams(r, webhookItem); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	wh, err := s.res.DeleteWebhook(r.Context(), who(r), r.PathValue("id"))
	serveDeleted(s, w, r, wh, err, webhookResource)
}

// webhookInput reads the attributes of a POST; the error is the first
// attribute of the wrong type (reported after the key's role).
func webhookInput(attrs jsonapi.Attributes) (in model.WebhookInput, err error) {
	err = attrs.Read(jsonapi.Str("url", true, &in.URL), jsonapi.BoolP("active", &in.Active), jsonapi.Strings("events", &in.Events),
		func(a jsonapi.Attributes) (err error) { in.Headers, _, err = headersOf(a, "headers"); return err })
	if in.Events == nil {
		in.Events = []string{}
	}
	return in, err
}

// webhookPatch reads the attributes of a PATCH. "secret" given as null or
// "rotate" asks for a new secret; any other value is refused.
func webhookPatch(attrs jsonapi.Attributes) (p model.WebhookPatch, rotate bool, err error) {
	if _, ok := attrs["url"]; ok {
		if p.URL, err = attrs.Text("url", true); err != nil {
			return p, false, err
		}
	}
	if p.Active, err = attrs.Boolean("active"); err != nil {
		return p, false, err
	}
	var set bool
	if p.Events, set, err = attrs.StringList("events"); err != nil {
		return p, false, err
	}
	if set && p.Events == nil {
		p.Events = []string{} // null: refused as no events
	}
	if p.Headers, set, err = headersOf(attrs, "headers"); err != nil {
		return p, false, err
	}
	if set && p.Headers == nil {
		p.Headers = []*model.WebhookHeaderInput{} // null: no headers
	}
	if raw, ok := attrs["secret"]; ok {
		var v *string
		if json.Unmarshal(raw, &v) != nil || (v != nil && *v != "rotate") {
			return p, false, jsonapi.AttrError("secret", `secret is made by Shipgraph: send "secret": null (or "rotate") to get a new one`)
		}
		rotate = true
	}
	return p, rotate, nil
}

// ---------------------------------------------------------------- events

// webhookEventCategoryAttributes are a category's: its name and events.
type webhookEventCategoryAttributes struct {
	Name   string                   `json:"name"`
	Events []model.WebhookEventInfo `json:"events"`
}

// eventCategories is the start of the three paths any key may read
// (webhookEvents, notificationExamples, webhookIPs): their parameters
// checked and the caller authenticated, with the events Shipgraph raises;
// false when it answered an error.
func (s *server) eventCategories(w http.ResponseWriter, r *http.Request) ([]model.WebhookEventCategory, bool) {
	if _, err := parseParams(r, webhookEventList); err != nil {
		jsonapi.WriteError(w, r, err)
		return nil, false
	}
	cats, err := s.res.WebhookEvents(r.Context(), who(r))
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return nil, false
	}
	return cats, true
}

// webhookEvents answers the events Shipgraph raises, by category (the
// OpenAPI document's webhook_event_category resources).
func (s *server) webhookEvents(w http.ResponseWriter, r *http.Request) {
	cats, ok := s.eventCategories(w, r)
	if !ok {
		return
	}
	data := make([]*Resource, len(cats))
	for i, c := range cats {
		data[i] = &Resource{ID: c.ID, Type: "webhook_event_category", Attributes: webhookEventCategoryAttributes{Name: c.Name, Events: orEmpty(c.Events)}}
	}
	b := s.newBuilder(s.baseURL(r), nil)
	jsonapi.WriteDocument(w, r, http.StatusOK, b.document(data, nil, nil))
}

// ---------------------------------------------------------------- notifications

func (s *server) listNotifications(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, notificationList, func(ctx context.Context, p *params) (listPage[*model.WebhookNotification], error) {
		var none listPage[*model.WebhookNotification]
		var f model.WebhookNotificationFilter
		if v := p.Filter("filter[webhook_id]"); v != "" {
			id := model.NormalizeID(v)
			f.WebhookID = &id
		}
		status, err := jsonapi.EnumFilter[model.WebhookDeliveryStatus](p.Query, "filter[delivery_status]", model.DeliveryStatuses.Values())
		if err != nil {
			return none, err
		}
		f.DeliveryStatus = status
		pg, err := s.res.WebhookNotifications(ctx, who(r), resolve.WebhookNotificationQuery{Filter: f, Page: p.pageArgs(), Plan: p.plan})
		if err != nil {
			return none, err
		}
		return fromPage(pg, func(ctx context.Context) (int, error) { return s.res.CountWebhookNotifications(ctx, who(r), f) }), nil
	}, withIncludes)
}

func (s *server) getNotification(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, notificationItem, (s.res.WebhookNotification), withIncludes)
}

// eventAttributes are a reference object's frozen attributes, with the
// members its schema requires filled in when the notification did not
// keep them: the event name and creation time, and for a container update
// its timestamp and an empty changeset.
func eventAttributes(e *model.WebhookEvent, typ string) model.JSON {
	var m map[string]json.RawMessage
	if json.Unmarshal(e.Attributes(), &m) != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	created, _ := json.Marshal(ts(e.CreatedAt))
	def := func(name string, v json.RawMessage) {
		if _, ok := m[name]; !ok {
			m[name] = v
		}
	}
	switch typ {
	case model.ContainerUpdatedEventType:
		def("changeset", json.RawMessage("{}"))
		def("timestamp", created)
	default:
		ev, _ := json.Marshal(e.Event)
		def("event", ev)
		def("created_at", created)
		if typ == model.EstimatedEventType {
			def("estimated_timestamp", json.RawMessage("null"))
		}
	}
	out, err := json.Marshal(m) // keys sorted: the same bytes every time
	if err != nil {
		return model.JSON("{}")
	}
	return model.JSON(strings.TrimSpace(string(out)))
}

func containerUpdatedEventResource(b *builder, e *model.ContainerUpdatedEvent) *Resource {
	return &Resource{ID: e.ID, Type: model.ContainerUpdatedEventType, Attributes: eventAttributes(&e.WebhookEvent, model.ContainerUpdatedEventType),
		Relationships: b.linkage(e, containerUpdatedEventShape.members)}
}

func estimatedEventResource(b *builder, e *model.EstimatedEvent) *Resource {
	return &Resource{ID: e.ID, Type: model.EstimatedEventType, Attributes: eventAttributes(&e.WebhookEvent, model.EstimatedEventType),
		Relationships: b.linkage(e, estimatedEventShape.members)}
}

// headersOf reads an optional list of {"name","value"}.
func headersOf(a jsonapi.Attributes, name string) (v []*model.WebhookHeaderInput, set bool, err error) {
	raw, ok := a[name]
	if !ok {
		return nil, false, nil
	}
	if jsonapi.IsNull(raw) {
		return nil, true, nil
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, true, jsonapi.AttrError(name, `%s must be a list of {"name": …, "value": …}`, name)
	}
	v = make([]*model.WebhookHeaderInput, 0, len(list))
	for _, h := range list {
		var n, val string
		if json.Unmarshal(h["name"], &n) != nil || json.Unmarshal(h["value"], &val) != nil {
			return nil, true, jsonapi.AttrError(name, `%s must be a list of {"name": …, "value": …} with string names and values`, name)
		}
		v = append(v, &model.WebhookHeaderInput{Name: n, Value: val})
	}
	return v, true, nil
}
