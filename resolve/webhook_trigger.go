package resolve

import (
	"context"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"shipgraph/model"
	"shipgraph/webhook"
)

// TriggerWebhook is a one-time test delivery (POST /v2/webhooks/trigger):
// the example payload of Event, sent to URL and signed with Secret when
// one is given. Payload is that example as the transport renders it (nil
// when Event is not one Shipgraph raises); Invalid is an input error the
// transport found decoding the body, reported after the key's role.
type TriggerWebhook struct {
	URL, Event, Secret string
	Payload            []byte
	Invalid            error
}

// Test deliveries a key may send: one every TriggerEvery, TriggerBurst at
// once; over every instance with Resolver.Shared (REDIS_URL: the shared
// GCRA bucket), per process without it or while Redis does not answer.
const (
	TriggerEvery = 10 * time.Second
	TriggerBurst = 3
)

// TriggerWebhook checks c and sends its payload once, with the guard, the
// headers and the signature of a delivery, and answers what the receiver
// did. The rules in order: an admin key (as every webhook call), the body,
// the URL (the webhook URL rules and SSRF guard), the event, then the key's
// limit (429, with the wait). Nothing is stored.
func (r *Resolver) TriggerWebhook(ctx context.Context, p *model.Principal, c TriggerWebhook) (*model.WebhookTrial, time.Duration, error) {
	p, _, err := admin(ctx, p)
	if err != nil {
		return nil, 0, err
	}
	if c.Invalid != nil {
		return nil, 0, c.Invalid
	}
	u, err := r.checkWebhookURL(ctx, c.URL)
	if err != nil {
		return nil, 0, err
	}
	event := strings.TrimSpace(c.Event)
	if event == "" {
		return nil, 0, invalidField("event", "event must not be blank")
	}
	if !model.ValidWebhookEvent(event) || c.Payload == nil {
		return nil, 0, invalidField("event", "event: %q is not an event Shipgraph raises (GET /v2/webhooks/events lists them)", event)
	}
	if len(c.Secret) > 256 {
		return nil, 0, invalidField("secret", "secret must be at most 256 characters")
	}
	key := p.TokenID
	if key == "" {
		key = p.AccountID
	}
	if wait := r.triggerWait(ctx, key); wait > 0 {
		return nil, wait, model.Errorf(model.ERATELIMITED, "this API key may send %d test deliveries at once and one every %s; try again in %s",
			TriggerBurst, TriggerEvery, wait.Round(time.Second))
	}
	var resolveHost func(ctx context.Context, host string) ([]netip.Addr, error)
	if nr := r.WebhookConfig.Resolver; nr != nil {
		resolveHost = func(ctx context.Context, host string) ([]netip.Addr, error) { return nr.LookupNetIP(ctx, "ip", host) }
	}
	return webhook.Trial(ctx, webhook.TrialOptions{AllowPrivate: r.WebhookConfig.AllowPrivate, Resolve: resolveHost}, u, c.Secret, c.Payload), 0, nil
}

// triggerWait takes one test delivery of key's limit: 0 when taken, else
// how long until one is.
func (r *Resolver) triggerWait(ctx context.Context, key string) time.Duration {
	if r.Shared != nil {
		if wait, shared := r.Shared.Allow(ctx, "trigger:"+key, int(time.Minute/TriggerEvery), TriggerBurst); shared {
			return wait
		}
	}
	l, _ := r.trials.LoadOrStore(key, rate.NewLimiter(rate.Every(TriggerEvery), TriggerBurst))
	res := l.(*rate.Limiter).Reserve()
	if wait := res.Delay(); wait > 0 {
		res.Cancel()
		return wait
	}
	return 0
}
