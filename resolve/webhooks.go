package resolve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/textproto"
	"strings"

	"shipgraph/db"
	"shipgraph/load"
	"shipgraph/model"
	"shipgraph/netguard"
)

// Webhooks: an account's endpoints and the notifications raised
// for them. Everything here is for admin keys only, reads included (a
// webhook's URL and headers may carry credentials of the receiver): a
// member or viewer key is FORBIDDEN, before anything else is looked at.
// The list of events (WebhookEvents) is open to every key.
//
// The secret is made here (32 random bytes, hex) and shown once, in the
// answer to the create; a rotation makes a new one and shows it once.
// Nothing reads it back (docs/webhooks.md).

// WebhookConfig are the webhook settings of the resolver layer.
type WebhookConfig struct {
	// Limit is the most webhooks an account may have (WEBHOOK_LIMIT);
	// 0 is no limit.
	Limit int
	// AllowPrivate lets webhook URLs be http and point at private
	// addresses (WEBHOOK_ALLOW_PRIVATE_URLS): local demos and tests.
	AllowPrivate bool
	// Resolver looks URL hosts up (nil: the system's).
	Resolver netguard.Resolver
}

// DefaultWebhookLimit is WEBHOOK_LIMIT's default.
const DefaultWebhookLimit = 25

// CreateWebhook creates a webhook. Invalid is an input error the
// transport found while decoding, reported after the key's role.
type CreateWebhook struct {
	Input   model.WebhookInput
	Invalid error
}

// UpdateWebhook changes a webhook; Invalid as CreateWebhook, reported
// after the webhook is found.
type UpdateWebhook struct {
	ID      string
	Patch   model.WebhookPatch
	Invalid error
	// RotateSecret gives the webhook a new secret, shown in the answer.
	RotateSecret bool
}

// WebhookQuery is the webhook list's query.
type WebhookQuery = Query[NoFilter]

// WebhookNotificationQuery is the notification list's query.
type WebhookNotificationQuery = Query[model.WebhookNotificationFilter]

var (
	// Webhooks are few and listed in the order they were made.
	webhooks = Kind[*model.Webhook, NoFilter]{
		order: model.Order{Field: "created_at"},
		list: func(s *db.DB, ctx context.Context, account string, _ NoFilter, req model.PageRequest) (*model.Page[*model.Webhook], error) {
			return s.ListWebhooks(ctx, account, req)
		},
		count: func(s *db.DB, ctx context.Context, account string, _ NoFilter) (int, error) {
			return s.CountWebhooks(ctx, account)
		},
		id:    func(w *model.Webhook) string { return w.ID },
		prime: func(l *load.Loaders) *load.Loader[*model.Webhook] { return l.WebhookByID },
	}
	webhookNotifications = Kind[*model.WebhookNotification, model.WebhookNotificationFilter]{
		order: defaultOrder,
		list:  (*db.DB).ListWebhookNotifications, count: (*db.DB).CountWebhookNotifications,
		id:    func(n *model.WebhookNotification) string { return n.ID },
		prime: func(l *load.Loaders) *load.Loader[*model.WebhookNotification] { return l.WebhookNotificationByID },
	}
)

// admin returns the principal and loaders of a request by an admin key.
func admin(ctx context.Context, p *model.Principal) (*model.Principal, *load.Loaders, error) {
	p, l, err := principal(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	if p.Role != model.RoleAdmin {
		return nil, nil, model.Errorf(model.EFORBIDDEN, "webhooks are managed by admin keys only; this API key has the %s role", p.Role)
	}
	return p, l, nil
}

// Webhooks lists the account's webhooks, oldest first.
func (r *Resolver) Webhooks(ctx context.Context, p *model.Principal, q WebhookQuery) (*Page[*model.Webhook], error) {
	if _, _, err := admin(ctx, p); err != nil {
		return nil, err
	}
	return List(ctx, r, p, &webhooks, q)
}

// CountWebhooks counts the account's webhooks.
func (r *Resolver) CountWebhooks(ctx context.Context, p *model.Principal) (int, error) {
	if _, _, err := admin(ctx, p); err != nil {
		return 0, err
	}
	return Count(ctx, r, p, &webhooks, NoFilter{})
}

// Webhook reads one of the account's webhooks.
func (r *Resolver) Webhook(ctx context.Context, p *model.Principal, id string, plan *load.Plan) (*model.Webhook, error) {
	if _, _, err := admin(ctx, p); err != nil {
		return nil, err
	}
	return get(ctx, p, func(l *load.Loaders) *load.Loader[*model.Webhook] { return l.WebhookByID }, "webhook", id, plan)
}

// WebhookNotifications lists the account's notifications, newest first.
func (r *Resolver) WebhookNotifications(ctx context.Context, p *model.Principal, q WebhookNotificationQuery) (*Page[*model.WebhookNotification], error) {
	if _, _, err := admin(ctx, p); err != nil {
		return nil, err
	}
	return List(ctx, r, p, &webhookNotifications, q)
}

// CountWebhookNotifications counts the account's notifications f keeps.
func (r *Resolver) CountWebhookNotifications(ctx context.Context, p *model.Principal, f model.WebhookNotificationFilter) (int, error) {
	if _, _, err := admin(ctx, p); err != nil {
		return 0, err
	}
	return Count(ctx, r, p, &webhookNotifications, f)
}

// WebhookNotification reads one of the account's notifications.
func (r *Resolver) WebhookNotification(ctx context.Context, p *model.Principal, id string, plan *load.Plan) (*model.WebhookNotification, error) {
	if _, _, err := admin(ctx, p); err != nil {
		return nil, err
	}
	return get(ctx, p, func(l *load.Loaders) *load.Loader[*model.WebhookNotification] { return l.WebhookNotificationByID }, "webhook notification", id, plan)
}

// WebhookEvents are the events a webhook may subscribe to, by category:
// open to every key.
func (r *Resolver) WebhookEvents(ctx context.Context, p *model.Principal) ([]model.WebhookEventCategory, error) {
	if _, err := authenticated(p); err != nil {
		return nil, err
	}
	return model.WebhookEventCategories, nil
}

// CreateWebhook runs c and returns the webhook created, with its secret.
func (r *Resolver) CreateWebhook(ctx context.Context, p *model.Principal, c CreateWebhook) (*model.Webhook, error) {
	if err := checkRequest(p, c.Invalid); err != nil {
		return nil, err
	}
	p, l, err := admin(ctx, p)
	if err != nil {
		return nil, err
	}
	if c.Invalid != nil {
		return nil, c.Invalid
	}
	in := c.Input
	w := &model.Webhook{Active: true}
	if in.Active != nil {
		w.Active = *in.Active
	}
	url, err := r.checkWebhookURL(ctx, in.URL)
	if err != nil {
		return nil, err
	}
	w.URL = url
	if w.EventList, err = checkWebhookEvents(in.Events); err != nil {
		return nil, err
	}
	if w.HeaderList, err = checkWebhookHeaders(in.Headers); err != nil {
		return nil, err
	}
	secret := newWebhookSecret()
	if err := r.DB.CreateWebhook(ctx, p.AccountID, w, secret, r.WebhookConfig.Limit); err != nil {
		if model.ErrorCode(err) == model.ECONFLICT {
			// The whole input is refused: a 422 at /data in /v2.
			return nil, model.Errorf(model.EINVALID, "%s", model.ErrorMessage(err)).AtPointer("/data")
		}
		return nil, err
	}
	w.Secret = &secret
	l.WebhookByID.Prime(w.ID, w)
	return w, nil
}

// UpdateWebhook runs c and returns the webhook written (with its new secret
// when c rotates it).
func (r *Resolver) UpdateWebhook(ctx context.Context, p *model.Principal, c UpdateWebhook) (*model.Webhook, error) {
	if err := checkRequest(p, c.Invalid); err != nil {
		return nil, err
	}
	p, l, err := admin(ctx, p)
	if err != nil {
		return nil, err
	}
	old, err := loadByID(ctx, l.WebhookByID, c.ID)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return nil, model.NotFound("webhook")
	}
	if c.Invalid != nil {
		return nil, c.Invalid
	}
	in := c.Patch
	patch := db.WebhookPatch{Active: in.Active}
	if in.URL != nil {
		url, err := r.checkWebhookURL(ctx, *in.URL)
		if err != nil {
			return nil, err
		}
		patch.URL = &url
	}
	if in.Events != nil {
		if patch.Events, err = checkWebhookEvents(in.Events); err != nil {
			return nil, err
		}
	}
	if in.Headers != nil {
		if patch.Headers, err = checkWebhookHeaders(in.Headers); err != nil {
			return nil, err
		}
	}
	var secret string
	if c.RotateSecret {
		secret = newWebhookSecret()
		patch.Secret = &secret
	}
	w, err := r.DB.UpdateWebhook(ctx, p.AccountID, old.ID, patch)
	if err != nil {
		return nil, err
	}
	if c.RotateSecret {
		w.Secret = &secret
	}
	l.WebhookByID.Clear(old.ID)
	l.WebhookByID.Prime(w.ID, w)
	return w, nil
}

// RotateWebhookSecret gives a webhook a new secret and returns it, with
// the secret.
func (r *Resolver) RotateWebhookSecret(ctx context.Context, p *model.Principal, id string) (*model.Webhook, error) {
	return r.UpdateWebhook(ctx, p, UpdateWebhook{ID: id, RotateSecret: true})
}

// DeleteWebhook deletes one of the account's webhooks with its
// notifications, and returns it.
func (r *Resolver) DeleteWebhook(ctx context.Context, p *model.Principal, id string) (*model.Webhook, error) {
	p, l, err := admin(ctx, p)
	if err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, model.NotFound("webhook")
	}
	w, err := r.DB.DeleteWebhook(ctx, p.AccountID, id)
	if err != nil {
		return nil, err
	}
	l.WebhookByID.Clear(w.ID)
	l.WebhookNotificationByID.ClearAll()
	return w, nil
}

func newWebhookSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// checkWebhookURL trims and checks a webhook URL (netguard.CheckURL).
func (r *Resolver) checkWebhookURL(ctx context.Context, raw string) (string, error) {
	u := strings.TrimSpace(raw)
	if u == "" {
		return "", invalidField("url", "url must not be blank")
	}
	if len(u) > 2048 {
		return "", invalidField("url", "url must be at most 2048 characters")
	}
	if err := netguard.CheckURL(ctx, u, r.WebhookConfig.AllowPrivate, r.WebhookConfig.Resolver); err != nil {
		if netguard.IsRefused(err) {
			return "", invalidField("url", "%s", err.Error())
		}
		return "", err
	}
	return u, nil
}

// checkWebhookEvents checks a webhook's events: at least one, each one
// Shipgraph raises, none twice.
func checkWebhookEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, invalidField("events", "events must name at least one event (GET /v2/webhooks/events lists them)")
	}
	seen := make(map[string]bool, len(events))
	out := make([]string, 0, len(events))
	for _, e := range events {
		e = strings.TrimSpace(e)
		if !model.ValidWebhookEvent(e) {
			return nil, invalidField("events", "events: %q is not an event Shipgraph raises (GET /v2/webhooks/events lists them)", e)
		}
		if seen[e] {
			return nil, invalidField("events", "events: %q is given twice", e)
		}
		seen[e] = true
		out = append(out, e)
	}
	return out, nil
}

// reservedHeaders are the headers a webhook cannot set: the signature, the
// body's type and length, and what the connection owns (hop-by-hop).
var reservedHeaders = map[string]bool{
	"X-T49-Webhook-Signature": true, "Content-Type": true, "Content-Length": true, "Content-Encoding": true,
	"Host": true, "Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "Expect": true,
}

// maxWebhookHeaders bounds a webhook's headers.
const maxWebhookHeaders = 20

// checkWebhookHeaders checks a webhook's extra headers: valid names (sent
// in their canonical spelling), values without line breaks, none reserved
// or given twice. An empty list is no headers.
func checkWebhookHeaders(in []*model.WebhookHeaderInput) (model.WebhookHeaders, error) {
	if len(in) > maxWebhookHeaders {
		return nil, invalidField("headers", "headers: at most %d headers", maxWebhookHeaders)
	}
	out := make(model.WebhookHeaders, 0, len(in))
	seen := map[string]bool{}
	for _, h := range in {
		if h == nil {
			return nil, invalidField("headers", "headers: each header must be an object with a name and a value")
		}
		name := strings.TrimSpace(h.Name)
		if name == "" || len(name) > 256 || !validHeaderName(name) {
			return nil, invalidField("headers", "headers: %q is not a valid header name", h.Name)
		}
		name = textproto.CanonicalMIMEHeaderKey(name)
		if reservedHeaders[name] {
			return nil, invalidField("headers", "headers: %s is set by Shipgraph and cannot be overridden", name)
		}
		if seen[name] {
			return nil, invalidField("headers", "headers: %s is given twice", name)
		}
		seen[name] = true
		if len(h.Value) > 4096 || strings.ContainsAny(h.Value, "\r\n\x00") {
			return nil, invalidField("headers", "headers: the value of %s must be at most 4096 characters on one line", name)
		}
		out = append(out, model.WebhookHeader{Name: name, Value: h.Value})
	}
	return out, nil
}

// validHeaderName reports whether s is an HTTP token (RFC 9110).
func validHeaderName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
