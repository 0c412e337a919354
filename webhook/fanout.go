package webhook

import (
	"context"
	"encoding/json"
	"time"

	"shipgraph/db"
)

// FanOut turns change_log rows into webhook notifications. Every process
// runs one; the cursor row's lock and check make one at a time do each
// step (db.RaiseWebhookNotifications), so nothing is raised twice and
// nothing lost, whichever process crashes where.
type FanOut struct {
	store   *db.DB
	cfg     Config
	wake    chan struct{}
	onRaise func() // the local dispatcher's Wake
}

// NewFanOut returns a fan-out over store; onRaise (may be nil) is called
// when notifications were queued.
func NewFanOut(store *db.DB, cfg Config, onRaise func()) *FanOut {
	return &FanOut{store: store, cfg: cfg.withDefaults(), wake: make(chan struct{}, 1), onRaise: onRaise}
}

// Wake makes the fan-out read the log now (a change was logged: the
// ChangeLogChannel NOTIFY).
func (f *FanOut) Wake() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Run reads the log until ctx is done: after every wake-up, and every Poll
// in case a wake-up was missed (or rows were held back by a transaction
// still open).
func (f *FanOut) Run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	depth := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		case <-t.C:
		}
		for ctx.Err() == nil {
			more, err := f.Step(ctx)
			if err != nil {
				if ctx.Err() == nil {
					f.cfg.Logger.Warn("webhook fan-out", "err", err)
				}
				break
			}
			if !more {
				break
			}
		}
		if time.Since(depth) > 5*time.Second {
			depth = time.Now()
			if n, err := f.store.WebhookQueueDepth(ctx); err == nil {
				QueueDepth.Set(float64(n))
			}
		}
		t.Reset(f.cfg.Poll)
	}
}

// Step raises the notifications of one page of the log and reports whether
// to step again at once (the page was full, or another process moved the
// cursor meanwhile).
func (f *FanOut) Step(ctx context.Context) (bool, error) {
	from, err := f.store.WebhookCursor(ctx)
	if err != nil {
		return false, err
	}
	page, err := f.store.ReadChangeLogPage(ctx, "", from, f.cfg.Batch)
	if err != nil {
		return false, err
	}
	if len(page.Changes) == 0 {
		return false, nil
	}
	var events []db.WebhookEvent
	var c Change
	for i := range page.Changes {
		lc := &page.Changes[i]
		if !raises(lc) {
			continue
		}
		c = Change{ID: lc.ID, AccountID: lc.AccountID, Type: lc.Type, RecordID: lc.RecordID, Op: lc.Op,
			Parent: lc.Parent, Changed: lc.Changed, LoggedAt: lc.LoggedAt}
		if len(lc.Old) > 0 {
			if err := json.Unmarshal(lc.Old, &c.Old); err != nil {
				return false, err
			}
		}
		if len(lc.New) > 0 {
			if err := json.Unmarshal(lc.New, &c.New); err != nil {
				return false, err
			}
		}
		for _, e := range Derive(&c) {
			events = append(events, db.WebhookEvent{AccountID: lc.AccountID, ChangeID: lc.ID, LoggedAt: lc.LoggedAt,
				Event: e.Name, ReferenceType: e.ReferenceType, ReferenceID: e.ReferenceID, Payload: e.Payload})
		}
	}
	r, err := f.store.RaiseWebhookNotifications(ctx, from, page.Next, events, f.cfg.QueueLimit)
	if err != nil {
		return false, err
	}
	if r.Overflow > 0 {
		queueFull.Add(float64(r.Overflow))
		f.cfg.Logger.Warn("webhook notifications not queued: an account's queue is full", "count", r.Overflow, "limit", f.cfg.QueueLimit)
	}
	if r.Queued > 0 && f.onRaise != nil {
		f.onRaise()
	}
	return page.More && r.Moved, nil
}

// raises: only container and shipment changes can raise an event; the
// others are skipped before their JSON is decoded.
func raises(c *db.LoggedChange) bool {
	switch c.Type {
	case "container":
		return c.Op == "INSERT" || c.Op == "UPDATE"
	case "shipment":
		return c.Op == "INSERT" || c.Op == "UPDATE"
	}
	return false
}
