package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
	onRaise func()    // the local dispatcher's Wake
	warned  time.Time // the last lag warning (CheckLag)
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
// in case a wake-up was missed or never sent (a change written without
// the server wakes nobody: db/wakeup.go).
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
			_, _ = f.CheckLag(ctx)
		}
		t.Reset(f.cfg.Poll)
	}
}

// lagWarnEvery is how often a fan-out lagging by more than half the
// retention warns again.
const lagWarnEvery = 5 * time.Minute

// CheckLag measures how far the fan-out is behind (db.ChangeLogLag: the
// age of the oldest change it has not read, over every account; 0 when
// caught up), sets FanOutLag, and warns when it is more than half of
// ChangeLogRetention: past the retention, pruning holds the unread rows
// back only up to its ceiling (docs/webhooks.md). Run calls it every few
// seconds; it is not to be called concurrently with Run (it keeps when it
// last warned).
func (f *FanOut) CheckLag(ctx context.Context) (time.Duration, error) {
	lag, err := f.store.ChangeLogLag(ctx)
	if err != nil {
		return 0, err
	}
	FanOutLag.Set(lag.Seconds())
	if r := f.cfg.ChangeLogRetention; r > 0 && lag > r/2 {
		if now := time.Now(); now.Sub(f.warned) >= lagWarnEvery {
			f.warned = now
			f.cfg.Logger.Warn("webhook fan-out: behind the change log by more than half its retention; "+
				"changes it has not read are pruned once older than the ceiling (CHANGE_LOG_WEBHOOK_CEILING)",
				"lag", lag.Round(time.Second), "retention", r)
		}
	} else {
		f.warned = time.Time{}
	}
	return lag, nil
}

// backlogAccounts is how many accounts behind one Step reads.
const backlogAccounts = 100

// Step raises the notifications of the accounts whose log moved past the
// fan-out's position in it (up to backlogAccounts of them, most behind
// first; a page of each) and reports whether to step again at once (more
// accounts or changes are waiting). The fan-out keeps a position per account (the log has an
// order per account only): notifications of one record stay in order.
//
// A change whose events cannot be derived (its JSON does not decode, or
// deriving panics), or whose notifications the database refuses (a value
// it rejects: db.ErrWebhookRefused), is skipped: logged at ERROR with its
// log id, account and reason, counted in ChangesLost{reason="poison_row"},
// and the position moves past it with the rest of the page raised. Any
// other error (the database unavailable: 503-class; or internal) skips
// nothing: the page is read again at the next step.
func (f *FanOut) Step(ctx context.Context) (bool, error) {
	backlogs, err := f.store.WebhookBacklogs(ctx, backlogAccounts)
	if err != nil {
		return false, err
	}
	more := len(backlogs) == backlogAccounts
	for _, b := range backlogs {
		again, err := f.stepAccount(ctx, b)
		if err != nil {
			return false, err
		}
		more = more || again
	}
	return more, nil
}

// stepAccount raises the notifications of one page of b's account.
func (f *FanOut) stepAccount(ctx context.Context, b db.WebhookBacklog) (bool, error) {
	page, err := f.store.ReadAccountChangeLogPage(ctx, b.AccountID, b.From, f.cfg.Batch)
	if err != nil {
		return false, err
	}
	if len(page.Changes) == 0 {
		// Every change up to the head (committed: the head was read
		// before) was pruned unread, past the ceiling: pruning reported
		// them lost. Nothing to raise; move past them.
		_, err := f.store.RaiseWebhookNotifications(ctx, b.AccountID, b.From, b.Head, nil, f.cfg.QueueLimit)
		return false, err
	}
	var events []db.WebhookEvent
	var skips []skipped
	for i := range page.Changes {
		lc := &page.Changes[i]
		if events, err = derive(lc, events); err != nil {
			skips = append(skips, skipped{lc, err})
		}
	}
	r, err := f.store.RaiseWebhookNotifications(ctx, b.AccountID, b.From, page.Next, events, f.cfg.QueueLimit)
	if err != nil {
		if !refused(err) {
			return false, err
		}
		return f.stepEach(ctx, b.AccountID, b.From, &page)
	}
	f.raised(r, skips)
	return page.More && r.Moved, nil
}

// skipped is a change the fan-out passes without raising its events, and
// why.
type skipped struct {
	lc  *db.LoggedChange
	why error
}

// stepEach raises a page one change at a time, after the database refused
// the page's notifications as a whole: the change it refuses is skipped,
// the others are raised. Another error stops it; the position stays after
// the last change raised.
func (f *FanOut) stepEach(ctx context.Context, account string, from int64, page *db.AccountChangeLogPage) (bool, error) {
	var events []db.WebhookEvent
	var skips []skipped // passed by the next move of the position
	for i := range page.Changes {
		lc := &page.Changes[i]
		var err error
		if events, err = derive(lc, events[:0]); err != nil {
			skips = append(skips, skipped{lc, err})
		}
		if len(events) == 0 {
			continue // passed by the next change's raise, or the last
		}
		r, err := f.store.RaiseWebhookNotifications(ctx, account, from, lc.Pos, events, f.cfg.QueueLimit)
		if err != nil && refused(err) {
			skips = append(skips, skipped{lc, err})
			r, err = f.store.RaiseWebhookNotifications(ctx, account, from, lc.Pos, nil, f.cfg.QueueLimit)
		}
		if err != nil {
			return false, err
		}
		f.raised(r, skips)
		if !r.Moved {
			return true, nil // another process moved the position: read again
		}
		from, skips = lc.Pos, skips[:0]
	}
	if from == page.Next {
		return page.More, nil
	}
	r, err := f.store.RaiseWebhookNotifications(ctx, account, from, page.Next, nil, f.cfg.QueueLimit)
	if err != nil {
		return false, err
	}
	f.raised(r, skips)
	return page.More || !r.Moved, nil
}

// refused: the database rejected a value of the notifications (the
// change's data), not a failure of the database: retrying the same rows
// would fail the same way.
func refused(err error) bool { return errors.Is(err, db.ErrWebhookRefused) }

// raised counts and reports what one raise did: the notifications not
// queued, and, when it moved the cursor past them, the changes skipped
// (recorded once: a raise that failed or found the cursor moved by
// another process passed nothing).
func (f *FanOut) raised(r db.WebhookRaise, skips []skipped) {
	if r.Overflow > 0 {
		queueFull.Add(float64(r.Overflow))
		f.cfg.Logger.Warn("webhook notifications not queued: an account's queue is full", "count", r.Overflow, "limit", f.cfg.QueueLimit)
	}
	if r.Queued > 0 && f.onRaise != nil {
		f.onRaise()
	}
	if !r.Moved {
		return
	}
	for _, s := range skips {
		lostPoison.Inc()
		f.cfg.Logger.Error("webhook fan-out: skipped a change it cannot raise; its notifications are lost",
			"change_id", s.lc.ID, "account", s.lc.AccountID, "type", s.lc.Type, "record", s.lc.RecordID, "op", s.lc.Op, "reason", s.why)
	}
}

// derive appends the events of one logged change to events. On an error
// (its JSON does not decode, or Derive panicked) it returns events as they
// were.
func derive(lc *db.LoggedChange, events []db.WebhookEvent) (out []db.WebhookEvent, err error) {
	if !raises(lc) {
		return events, nil
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = events, fmt.Errorf("deriving its events panicked: %v", p)
		}
	}()
	c := Change{ID: lc.ID, AccountID: lc.AccountID, Type: lc.Type, RecordID: lc.RecordID, Op: lc.Op,
		Parent: lc.Parent, Changed: lc.Changed, LoggedAt: lc.LoggedAt}
	if len(lc.Old) > 0 {
		if err := json.Unmarshal(lc.Old, &c.Old); err != nil {
			return events, fmt.Errorf("old: %w", err)
		}
	}
	if len(lc.New) > 0 {
		if err := json.Unmarshal(lc.New, &c.New); err != nil {
			return events, fmt.Errorf("new: %w", err)
		}
	}
	out = events
	for _, e := range Derive(&c) {
		out = append(out, db.WebhookEvent{AccountID: lc.AccountID, ChangeID: lc.ID, LoggedAt: lc.LoggedAt,
			Event: e.Name, ReferenceType: e.ReferenceType, ReferenceID: e.ReferenceID, Payload: e.Payload})
	}
	return out, nil
}

// raises: only container, shipment and tracking request changes, and
// transport events inserted, can raise an event; the others are skipped
// before their JSON is decoded.
func raises(c *db.LoggedChange) bool {
	switch c.Type {
	case "container":
		return c.Op == "INSERT" || c.Op == "UPDATE"
	case "shipment", "tracking_request":
		return c.Op == "UPDATE"
	case "transport_event":
		return c.Op == "INSERT"
	}
	return false
}

// PruneReport returns the report of the change log's pruning loop
// (db.PruneChangeLogLoop): each round is logged, and rows it deleted before
// the fan-out read them (older than CHANGE_LOG_WEBHOOK_CEILING) are logged
// at ERROR with their accounts and counted in
// ChangesLost{reason="pruned_unread"}: their notifications are never
// raised.
func PruneReport(log *slog.Logger) func(db.ChangeLogPruning) {
	return func(p db.ChangeLogPruning) {
		if p.Unread > 0 {
			lostPruned.Add(float64(p.Unread))
			log.Error("change log pruning: removed changes the webhook fan-out had not read, past the ceiling "+
				"(CHANGE_LOG_WEBHOOK_CEILING); their notifications are lost",
				"unread", p.Unread, "accounts", p.UnreadAccounts)
		}
		switch {
		case p.Err != nil:
			log.Warn("change log pruning", "err", p.Err, "removed", p.Pruned)
		case p.HeldBack:
			log.Info("change log pruning: removed changes older than the retention, held back at the webhook fan-out's cursor",
				"removed", p.Pruned, "took", p.Took)
		default:
			log.Info("change log pruning: removed changes older than the retention", "removed", p.Pruned, "took", p.Took)
		}
	}
}
