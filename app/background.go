package app

import (
	"context"
	"sync"
	"time"

	"shipgraph/config"
	"shipgraph/db"
	"shipgraph/rest"
	"shipgraph/webhook"
)

// component is one background part of serve: run works until ctx ends
// and returns once it stopped (its work in flight finished).
type component struct {
	name string
	run  func(ctx context.Context)
}

// background is every component serve runs beside the HTTP server, in one
// place. They start once the chain serves and stop when the shutdown
// begins; the store closes after the last returned.
func (p *process) background() []component {
	cs := []component{
		{"upload sweep", p.sweepUploads},
		{"change-log pruning", p.pruneChangeLog},
		{"webhooks", p.webhooks},
		{"jobs", p.runJobs},
	}
	if p.v.Duration(config.DemoActivity) > 0 {
		cs = append(cs, component{"demo activity", p.demoActivity})
	}
	return cs
}

// sweepUploads removes uploads no document took, now and then hourly.
func (p *process) sweepUploads(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := p.res.SweepUploads(ctx, time.Now())
		if err != nil && ctx.Err() == nil {
			p.log.Warn("upload sweep", "err", err)
		} else if n > 0 {
			p.log.Info("upload sweep: removed uploads no document took", "removed", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pruneChangeLog prunes the change log past CHANGE_LOG_RETENTION; one
// instance prunes at a time (an advisory lock), the others skip.
func (p *process) pruneChangeLog(ctx context.Context) {
	keep := p.v.Duration(config.ChangeLogRetention)
	p.store.PruneChangeLogLoop(ctx, keep, p.v.Duration(config.ChangeLogWebhookCeiling),
		min(time.Minute, max(keep/10, time.Second)), webhook.PruneReport(p.log))
}

// webhooks runs the webhook fan-out and dispatcher until ctx ends, then
// waits for the deliveries in flight (each bounded by WEBHOOK_TIMEOUT; if
// the process dies first, their claims expire and another process delivers
// them). The listener wakes the fan-out when changes are logged; a poll
// covers missed wake-ups.
func (p *process) webhooks(ctx context.Context) {
	rc := rest.Config{PublicBaseURL: p.v.String(config.PublicBaseURL)}
	workers := p.v.Int(config.WebhookWorkers)
	wc := webhook.Config{
		Workers: workers, Timeout: p.v.Duration(config.WebhookTimeout), RetryBase: p.v.Duration(config.WebhookRetryBase),
		QueueLimit: p.v.Int(config.WebhookQueueLimit), AllowPrivate: p.v.Bool(config.WebhookAllowPrivateURLs),
		Logger: p.log, Tracer: p.tracing.Provider(), ChangeLogRetention: p.v.Duration(config.ChangeLogRetention),
		Payload: func(ctx context.Context, accountID, notificationID string) ([]byte, error) {
			return rest.NotificationPayload(ctx, p.res, rc, accountID, notificationID)
		},
	}
	var wg sync.WaitGroup
	var wake func()
	if workers > 0 {
		d := webhook.NewDispatcher(p.store, wc)
		wake = d.Wake
		wg.Add(1)
		go func() { defer wg.Done(); d.Run(ctx) }()
	}
	f := webhook.NewFanOut(p.store, wc, wake)
	wg.Add(1)
	go func() { defer wg.Done(); f.Run(ctx) }()
	p.wakeOnChanges(ctx, f.Wake, &wg)
	wg.Wait()
}

// wakeOnChanges wakes the fan-out on every change-log wake-up the
// listener hears (db.ChangeLogChannel, every account), and when it
// (re)connects, until ctx ends.
func (p *process) wakeOnChanges(ctx context.Context, wake func(), wg *sync.WaitGroup) {
	sub := p.listen.Subscribe(64, db.FeedChange, db.FeedListening)
	// ListenAll blocks until the server acknowledged the LISTEN, which a
	// database that is down delays: not waited for at shutdown (the
	// listener closes after the engine stopped).
	go func() {
		if err := p.listen.ListenAll(); err != nil && ctx.Err() == nil {
			p.log.Warn("webhooks: no change-log wake-ups, polling only", "err", err)
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

// demoActivity moves a few demo containers one step along a realistic
// journey (on ship → discharged with holds → available → picked up →
// empty returned, then round again) every DEMO_ACTIVITY, through the
// store, so subscribers of the demo data see events arrive. Only for
// demos: it changes data (make run sets it).
func (p *process) demoActivity(ctx context.Context) {
	every := p.v.Duration(config.DemoActivity)
	p.log.Info("demo activity: moving demo containers", "every", every)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		moved, err := p.store.DemoActivity(ctx, 3)
		if err != nil {
			if ctx.Err() == nil {
				p.log.Warn("demo activity", "err", err)
			}
			continue
		}
		for _, m := range moved {
			p.log.Info("demo activity", "container", m.Number, "status", m.Status)
		}
	}
}
