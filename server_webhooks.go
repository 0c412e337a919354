package main

import (
	"context"
	"flag"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"shipgraph/db"
	"shipgraph/resolve"
	"shipgraph/rest"
	"shipgraph/webhook"
)

// WebhooksConfig is the configuration of webhooks (issue 17,
// docs/webhooks.md): the API's per-account limit and address rule, and the
// delivery (package webhook).
type WebhooksConfig struct {
	Limit        int  // most webhooks per account; 0 = no limit
	AllowPrivate bool // http and private addresses allowed (demos, tests), at save and at delivery
	Workers      int
	Timeout      time.Duration
	RetryBase    time.Duration
	QueueLimit   int
	LogCeiling   time.Duration // unread change-log rows kept at most this long; 0 = 4 × CHANGE_LOG_RETENTION
}

func bindWebhooksConfig(fs *flag.FlagSet, c *WebhooksConfig) {
	fs.IntVar(&c.Limit, "webhook-limit", envInt("WEBHOOK_LIMIT", resolve.DefaultWebhookLimit), "most webhooks one account may have; 0 = no limit (WEBHOOK_LIMIT)")
	fs.BoolVar(&c.AllowPrivate, "webhook-allow-private-urls", env("WEBHOOK_ALLOW_PRIVATE_URLS", "false") == "true", "let webhook URLs be http and point at loopback, private, link-local or metadata addresses; for local demos and tests only (WEBHOOK_ALLOW_PRIVATE_URLS)")
	d := webhook.Defaults
	fs.IntVar(&c.Workers, "webhook-workers", envInt("WEBHOOK_WORKERS", d.Workers), "webhook deliveries in flight per process; 0 = no delivery by this process (WEBHOOK_WORKERS)")
	fs.DurationVar(&c.Timeout, "webhook-timeout", envDuration("WEBHOOK_TIMEOUT", d.Timeout), "how long one webhook delivery attempt may take (WEBHOOK_TIMEOUT)")
	fs.DurationVar(&c.RetryBase, "webhook-retry-base", envDuration("WEBHOOK_RETRY_BASE", d.RetryBase), "first webhook retry's longest wait, doubling per attempt, with full jitter, up to 12 attempts (WEBHOOK_RETRY_BASE)")
	fs.IntVar(&c.QueueLimit, "webhook-queue-limit", envInt("WEBHOOK_QUEUE_LIMIT", d.QueueLimit), "pending webhook notifications per account; beyond, new ones are recorded failed (WEBHOOK_QUEUE_LIMIT)")
	fs.DurationVar(&c.LogCeiling, "change-log-webhook-ceiling", envDuration("CHANGE_LOG_WEBHOOK_CEILING", 0), "how long the change log keeps changes the webhook fan-out has not read yet (pruning waits for it past CHANGE_LOG_RETENTION up to this age, then prunes them anyway: logged at ERROR, counted); 0 = 4 × CHANGE_LOG_RETENTION (CHANGE_LOG_WEBHOOK_CEILING)")
}

// apiConfig is the resolver layer's webhook configuration.
func (c WebhooksConfig) apiConfig() resolve.WebhookConfig {
	return resolve.WebhookConfig{Limit: c.Limit, AllowPrivate: c.AllowPrivate}
}

// startWebhooks runs the webhook fan-out and dispatcher until ctx ends;
// the returned wait blocks until they stopped: the deliveries in flight
// finished (each bounded by the timeout) or, if the process dies first,
// their claims expire and another process delivers them. listen wakes the
// fan-out when changes are logged; a poll covers missed wake-ups. tracer
// (nil: tracing is off) traces every delivery attempt.
func startWebhooks(ctx context.Context, c *Config, store *db.DB, listen *db.Listener, log *slog.Logger, tracer trace.TracerProvider) (wait func()) {
	res := resolve.New(store)
	rc := rest.Config{PublicBaseURL: c.PublicBaseURL}
	wc := webhook.Config{
		Workers: c.Webhooks.Workers, Timeout: c.Webhooks.Timeout, RetryBase: c.Webhooks.RetryBase,
		QueueLimit: c.Webhooks.QueueLimit, AllowPrivate: c.Webhooks.AllowPrivate, Logger: log, Tracer: tracer,
		ChangeLogRetention: c.ChangeLogRetention,
		Payload: func(ctx context.Context, accountID, notificationID string) ([]byte, error) {
			return rest.NotificationPayload(ctx, res, rc, accountID, notificationID)
		},
	}
	var wg sync.WaitGroup
	var wake func()
	if c.Webhooks.Workers > 0 {
		d := webhook.NewDispatcher(store, wc)
		wake = d.Wake
		wg.Add(1)
		go func() { defer wg.Done(); d.Run(ctx) }()
	}
	f := webhook.NewFanOut(store, wc, wake)
	wg.Add(1)
	go func() { defer wg.Done(); f.Run(ctx) }()
	wakeOnChanges(ctx, listen, f.Wake, &wg, log)
	return wg.Wait
}

// wakeOnChanges wakes the fan-out on every change-log wake-up the
// listener hears (db.ChangeLogChannel, every account), and when it
// (re)connects, until ctx ends.
func wakeOnChanges(ctx context.Context, listen *db.Listener, wake func(), wg *sync.WaitGroup, log *slog.Logger) {
	sub := listen.Subscribe(64, db.FeedChange, db.FeedListening)
	// ListenAll blocks until the server acknowledged the LISTEN, which a
	// database that is down delays: not waited for at shutdown (the
	// listener closes after the engine stopped).
	go func() {
		if err := listen.ListenAll(); err != nil && ctx.Err() == nil {
			log.Warn("webhooks: no change-log wake-ups, polling only", "err", err)
		}
		wake()
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer sub.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-sub.Events():
				if !ok {
					return
				}
				if e.Kind == db.FeedListening || e.Change != nil && e.Change.AccountID == "" {
					wake()
				}
			}
		}
	}()
}
