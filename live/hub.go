package live

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"shipgraph/db"
	"shipgraph/model"
)

// Hub fans the database's change log (db/changelog.go) out to this
// process' subscriptions. While an account has subscribers it listens on
// the account's wake-up channel (a subscription to db.Listener, the one
// connection listening per process, which the key cache shares), and one
// reader per account reads the account's log from where it stopped at
// each wake-up, in log order, so nothing committed is missed — not even
// across a reconnection of the listener or a restart of PostgreSQL. Each
// subscription has a bounded queue: the reader never waits for a
// subscriber, and one that falls a whole queue behind (a slow consumer) is
// ended with a clear reason rather than allowed to grow memory. A
// subscription may resume after a log id it saw (CatchUp); one whose id
// was pruned gets a RESYNC event, as does every subscription of an account
// whose reader fell behind the pruning. A changed or revoked API key ends
// its subscriptions.
type Hub struct {
	store *db.DB
	cfg   Config
	log   *slog.Logger
	feed  *db.Listener
	sub   *db.Subscription
	done  chan struct{}
	// ctx ends the account readers (Close).
	ctx    context.Context
	cancel context.CancelFunc
	up     chan struct{} // closed once the feed first listens

	lmu      sync.Mutex // serializes LISTEN and UNLISTEN
	mu       sync.Mutex
	closed   bool
	accounts map[string]*liveAccount
	byToken  map[string]map[*Sub]struct{}
	// checking: a floor check of the heads runs (checkHeads).
	checking atomic.Bool
}

// Config tunes subscriptions.
type Config struct {
	// MaxPerKey is how many subscriptions one API key may have open at
	// once, over every connection to this process; 0 means no limit.
	MaxPerKey int
	// Queue is how many events a subscription may fall behind before it
	// is ended as a slow consumer.
	Queue int
	// KeepAlive is how often idle WebSocket and SSE connections get a
	// keep-alive (a WebSocket peer that does not answer the server's ping
	// within two of these is dropped).
	KeepAlive time.Duration
	// Ping is how often the process' listening connection (db.Listener)
	// is pinged; the wiring that opens it may ping it more often (the key
	// cache asks for that).
	Ping time.Duration
	// Shared, when set, also counts MaxPerKey over every instance
	// (sharedlimit, in Redis); this process' own count is checked first.
	Shared SharedCount
	// Before, when set, is called before an account's changes up to pos
	// are offered to its subscriptions: the response cache drops what
	// they touched first, so a client that refetches on an event never
	// reads the answer from before it. Bounded by beforeTimeout; past it
	// the events go out anyway.
	Before func(ctx context.Context, account string, pos int64) error
}

// beforeTimeout bounds Config.Before for one page of events.
const beforeTimeout = 2 * time.Second

// SharedCount counts subscriptions per key beyond this process. Acquire
// says whether one more of key may open under max, and returns the release
// to call when it ends; when it cannot tell it allows.
type SharedCount interface {
	Acquire(key string, max int) (release func(), allowed bool)
}

// DefaultConfig is the server's defaults.
var DefaultConfig = Config{MaxPerKey: 100, Queue: 4096, KeepAlive: 25 * time.Second, Ping: 5 * time.Second}

type liveAccount struct {
	id        string
	subs      map[*Sub]struct{}
	listening bool
	// cursor is where the reader stopped (under Hub.mu, which the fan-out
	// holds too): every change after it reaches every subscription.
	cursor int64
	wake   chan struct{} // capacity 1
	stop   chan struct{} // closed when the account has no subscribers left
}

// kick wakes the account's reader without waiting.
func (a *liveAccount) kick() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// Why the hub ended a subscription, with the WebSocket close code the
// connection ends with.
type EndReason struct {
	Code int
	Text string
}

var (
	EndSlow     = EndReason{1008, "slow consumer: too many events not yet sent; reconnect and re-read"}
	EndRevoked  = EndReason{4403, "Forbidden: the API key was revoked or changed"}
	EndShutdown = EndReason{1001, "server shutting down"}
)

// Sub is one subscription's registration with the hub. Its queue is
// a slice that grows with the backlog up to its bound (an idle
// subscription holds no buffer); ready signals that it is not empty.
type Sub struct {
	account, token string
	max            int
	qmu            sync.Mutex
	queue          []Event
	ready          chan struct{} // capacity 1
	end            chan struct{} // closed when the hub ends the subscription
	reason         EndReason
	once           sync.Once
	listening      bool   // the database listens for it (under Live.mu)
	release        func() // of its count in Config.Shared (under Live.mu)
	// skip: live changes at or before it are dropped, the catch-up
	// delivers them (under Hub.mu; zero: none).
	skip int64
	// The catch-up (CatchUp's, one goroutine): the changes after from up
	// to until, after a RESYNC when resync is set.
	from, until int64
	catching    bool
	resync      bool
}

// Event is one change for a subscription; a nil Change is a re-sync
// (changes may have been missed).
type Event struct {
	Change *model.Change
	// at is the change's position in the log (the hub's bookkeeping: the
	// catch-up and the live changes meet there).
	at int64
}

func (s *Sub) stop(r EndReason) {
	s.once.Do(func() {
		s.reason = r
		close(s.end)
	})
}

// offer queues e without waiting; a full queue ends the subscription.
func (s *Sub) offer(e Event) {
	if e.Change != nil && s.skip != 0 && e.at <= s.skip {
		return // the catch-up's
	}
	s.qmu.Lock()
	if len(s.queue) >= s.max {
		s.qmu.Unlock()
		s.stop(EndSlow)
		return
	}
	s.queue = append(s.queue, e)
	s.qmu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Ready fires when events are queued; Take then returns them.
func (s *Sub) Ready() <-chan struct{} { return s.ready }

// Done is closed when the hub ends the subscription; Reason says why.
func (s *Sub) Done() <-chan struct{} { return s.end }

// Reason is why the hub ended the subscription (after Done is closed).
func (s *Sub) Reason() EndReason { return s.reason }

// Take returns the queued events (after Ready fired).
func (s *Sub) Take() []Event {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	q := s.queue
	s.queue = nil
	return q
}

// feedBuffer is how many events the hub may fall behind the listener
// (then every subscription gets a RESYNC, as after a reconnection).
const feedBuffer = 4096

// New starts the hub on listener, the process' listening connection to
// store's database; closing the hub leaves listener open.
func New(store *db.DB, listener *db.Listener, cfg Config, log *slog.Logger) *Hub {
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultConfig.Queue
	}
	if cfg.Ping <= 0 {
		cfg.Ping = DefaultConfig.Ping
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Hub{
		store: store, cfg: cfg, log: log, done: make(chan struct{}), up: make(chan struct{}),
		accounts: map[string]*liveAccount{}, byToken: map[string]map[*Sub]struct{}{},
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.feed = listener
	h.sub = listener.Subscribe(feedBuffer, db.FeedChange, db.FeedToken, db.FeedTick)
	go h.run()
	return h
}

// Config is the hub's configuration.
func (h *Hub) Config() Config { return h.cfg }

func (h *Hub) run() {
	defer close(h.done)
	down, up := false, false
	for e := range h.sub.Events() {
		switch e.Kind {
		case db.FeedChange:
			h.mu.Lock()
			if a := h.accounts[e.Change.AccountID]; a != nil && a.listening {
				a.kick()
			}
			h.mu.Unlock()
		case db.FeedTick:
			if h.checking.CompareAndSwap(false, true) {
				go h.checkHeads()
			}
		case db.FeedListening:
			if !up {
				up = true
				close(h.up)
			}
			if down {
				h.log.Info("live updates: listening to the database again")
			}
			down = false
			if e.Resync {
				h.resync()
			}
		case db.FeedDown:
			if !down {
				h.log.Warn("live updates: lost the database connection; reconnecting", "err", e.Err)
			}
			down = true
		case db.FeedToken:
			h.mu.Lock()
			for token, subs := range h.byToken {
				if e.TokenID == "*" || e.TokenID == token {
					for s := range subs {
						s.stop(EndRevoked)
					}
				}
			}
			h.mu.Unlock()
		}
	}
}

// checkHeads is the floor under the wake-ups (db.FeedTick): it kicks the
// reader of every account whose log moved past the reader's cursor, and
// ends the subscriptions whose key is no longer active, so a change or a
// revocation written without the server (which announces nothing) still
// reaches the subscriptions within about db.WakeFloor.
func (h *Hub) checkHeads() {
	defer h.checking.Store(false)
	h.mu.Lock()
	ids := make([]string, 0, len(h.accounts))
	for id, a := range h.accounts {
		if a.listening {
			ids = append(ids, id)
		}
	}
	tokens := make([]string, 0, len(h.byToken))
	for token := range h.byToken {
		tokens = append(tokens, token)
	}
	h.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancel()
	heads, err := h.store.AccountChangeLogHeads(ctx, ids)
	if err != nil {
		return // the next tick tries again
	}
	h.mu.Lock()
	for id, head := range heads {
		if a := h.accounts[id]; a != nil && a.listening && head > a.cursor {
			a.kick()
		}
	}
	h.mu.Unlock()
	h.endRevoked(ctx, tokens)
}

// resync runs after wake-ups went unheard: every account's reader reads
// what was logged meanwhile (RESYNC only if rows it had not read were
// pruned),
// and subscriptions whose key was revoked meanwhile end (that news was
// missed too).
func (h *Hub) resync() {
	h.mu.Lock()
	for _, a := range h.accounts {
		if a.listening {
			a.kick()
		}
	}
	tokens := make([]string, 0, len(h.byToken))
	for token := range h.byToken {
		tokens = append(tokens, token)
	}
	h.mu.Unlock()
	if len(tokens) == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.endRevoked(ctx, tokens)
	}()
}

// endRevoked ends the subscriptions of the tokens that no longer stand
// for an active key.
func (h *Hub) endRevoked(ctx context.Context, tokens []string) {
	if len(tokens) == 0 {
		return
	}
	active, err := h.store.ActiveTokens(ctx, tokens)
	if err != nil {
		h.log.Warn("live updates: checking the keys of subscriptions", "err", err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, token := range tokens {
		if !active[token] {
			for s := range h.byToken[token] {
				s.stop(EndRevoked)
			}
		}
	}
}

// Subscribe registers a subscription of p's account and returns once the
// database listens on the account's channel: every change committed after
// it returns reaches the subscription. With after (a log id the subscriber
// saw), the changes after it come first, from CatchUp; an id no longer in
// the account's log (pruned, or never its) makes CatchUp's first event a
// RESYNC.
func (h *Hub) Subscribe(ctx context.Context, p *model.Principal, after *int64) (*Sub, error) {
	s := &Sub{account: p.AccountID, token: p.TokenID, max: h.cfg.Queue, ready: make(chan struct{}, 1), end: make(chan struct{})}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, model.Errorf(model.EUNAVAILABLE, "the server is shutting down")
	}
	if h.cfg.MaxPerKey > 0 && len(h.byToken[p.TokenID]) >= h.cfg.MaxPerKey {
		h.mu.Unlock()
		return nil, model.Errorf(model.ERATELIMITED, "this API key already has %d subscriptions open, the most it may have", h.cfg.MaxPerKey)
	}
	a := h.accounts[p.AccountID]
	if a == nil {
		a = &liveAccount{id: p.AccountID, subs: map[*Sub]struct{}{}, wake: make(chan struct{}, 1), stop: make(chan struct{})}
		h.accounts[p.AccountID] = a
	}
	a.subs[s] = struct{}{}
	if h.byToken[p.TokenID] == nil {
		h.byToken[p.TokenID] = map[*Sub]struct{}{}
	}
	h.byToken[p.TokenID][s] = struct{}{}
	h.mu.Unlock()
	if h.cfg.MaxPerKey > 0 && h.cfg.Shared != nil {
		release, ok := h.cfg.Shared.Acquire(p.TokenID, h.cfg.MaxPerKey)
		if !ok {
			h.Unsubscribe(s)
			return nil, model.Errorf(model.ERATELIMITED, "this API key already has %d subscriptions open, the most it may have", h.cfg.MaxPerKey)
		}
		h.mu.Lock()
		s.release = release
		h.mu.Unlock()
	}
	unavailable := func(what string, err error) (*Sub, error) {
		h.Unsubscribe(s)
		h.log.Error("live updates: "+what, "err", err)
		return nil, model.Errorf(model.EUNAVAILABLE, "live updates are unavailable; try again shortly")
	}
	var resume int64
	found := false
	if after != nil {
		var err error
		if resume, found, err = h.store.AccountChangeLogPos(ctx, p.AccountID, *after); err != nil {
			return unavailable("finding the position to resume from", err)
		}
	}

	// Until the feed's first connection, LISTEN would only be queued.
	select {
	case <-h.up:
	case <-time.After(10 * time.Second):
		h.Unsubscribe(s)
		return nil, model.Errorf(model.EUNAVAILABLE, "live updates are unavailable; try again shortly")
	}
	h.lmu.Lock()
	defer h.lmu.Unlock()
	h.mu.Lock()
	need := !a.listening
	h.mu.Unlock()
	if need {
		if err := h.feed.Listen(p.AccountID); err != nil {
			return unavailable("LISTEN failed", err)
		}
		// Every change committed from now on is after the head, and
		// wakes the reader.
		head, barrier, err := h.store.AccountChangeLogStart(ctx, p.AccountID)
		if err != nil {
			return unavailable("reading the change log's head", err)
		}
		// The head must not count a change the synchronous standby
		// lacks (db/standby.go): the reader would skip what a promoted
		// standby logs at its position.
		if err := h.store.AwaitStandby(ctx, barrier); err != nil {
			return unavailable("waiting for the synchronous standby", err)
		}
		h.mu.Lock()
		a.cursor, a.listening = head, true
		h.mu.Unlock()
		go h.read(a)
		a.kick()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s.listening = true
	if after != nil {
		// The live changes start after the reader's position; the
		// catch-up reads up to it.
		s.catching, s.until = true, a.cursor
		if !found {
			s.resync, s.from = true, a.cursor
		} else {
			s.from, s.skip = resume, a.cursor
			if a.cursor < resume {
				s.skip = resume
			}
			s.dropQueued()
		}
	}
	return s, nil
}

// dropQueued drops the queued changes at or before s.skip (under Hub.mu).
func (s *Sub) dropQueued() {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	q := s.queue[:0]
	for _, e := range s.queue {
		if e.Change == nil || e.at > s.skip {
			q = append(q, e)
		}
	}
	clear(s.queue[len(q):])
	s.queue = q
}

// catchUpPage is how many changes one CatchUp reads.
const catchUpPage = 500

// CatchUp returns the next changes a resumed subscription missed (after
// the log id it gave Subscribe, up to where its live changes start), a
// RESYNC first when that id is no longer in the account's log, or nothing
// once it caught up (or when it did not resume). Call it from the one
// goroutine that serves s, until it returns nothing, before taking live
// events. A failed read is a RESYNC, and the end of the catch-up.
func (h *Hub) CatchUp(ctx context.Context, s *Sub) []Event {
	if !s.catching {
		return nil
	}
	if s.resync {
		s.resync = false
		return []Event{{}}
	}
	changes, _, err := h.store.ReadAccountChangeLog(ctx, s.account, s.from, catchUpPage)
	if err != nil {
		h.log.Warn("live updates: reading the change log to resume", "err", err)
		s.catching = false
		return []Event{{}}
	}
	if len(changes) < catchUpPage {
		s.catching = false
	}
	out := make([]Event, 0, len(changes))
	for i := range changes {
		if changes[i].Pos > s.until {
			s.catching = false
			break
		}
		if changes[i].Pos != s.from+1 {
			// Changes before this one were pruned (positions are
			// dense): RESYNC, then the rest.
			out = append(out, Event{})
		}
		out = append(out, Event{Change: db.ChangeOf(&changes[i]), at: changes[i].Pos})
		s.from = changes[i].Pos
	}
	if len(out) > 0 {
		h.before(ctx, s.account, s.from)
	}
	return out
}

// before calls Config.Before for account's changes up to pos, bounded by
// beforeTimeout.
func (h *Hub) before(ctx context.Context, account string, pos int64) {
	if h.cfg.Before == nil {
		return
	}
	bctx, cancel := context.WithTimeout(ctx, beforeTimeout)
	defer cancel()
	if err := h.cfg.Before(bctx, account, pos); err != nil {
		h.log.Debug("live: events sent before the response cache read them", "account", account, "pos", pos, "err", err)
	}
}

// readPage is how many changes the reader of an account reads at once.
const readPage = 1000

// read is the reader of account a's log while it has subscribers: at each
// wake-up it reads what was logged after its cursor and fans it out. A
// failing database is retried with a growing delay.
func (h *Hub) read(a *liveAccount) {
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	var delay time.Duration
	failing := false
	for {
		select {
		case <-a.stop:
			return
		case <-h.ctx.Done():
			return
		case <-a.wake:
		case <-retry.C:
		}
		if err := h.drain(a); err != nil {
			if !failing {
				h.log.Warn("live updates: reading the change log", "err", err)
			}
			failing = true
			delay = min(max(2*delay, 50*time.Millisecond), 2*time.Second)
			retry.Reset(delay)
			continue
		}
		failing, delay = false, 0
	}
}

// drain reads a's log after its cursor until nothing is left to read now,
// fanning the changes out.
func (h *Hub) drain(a *liveAccount) error {
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	for {
		h.mu.Lock()
		cur := a.cursor
		h.mu.Unlock()
		page, err := h.store.ReadAccountChangeLogPage(ctx, a.id, cur, readPage)
		if err != nil {
			return err
		}
		if len(page.Changes) > 0 {
			// Held until the synchronous standby has them (0: the
			// server has none): a change whose commit stopped waiting
			// for it is visible here, and a failover would lose it.
			if err := h.store.AwaitStandby(ctx, page.Barrier); err != nil {
				return err
			}
			events := make([]Event, 0, len(page.Changes)+1)
			prev := cur
			for i := range page.Changes {
				c := &page.Changes[i]
				if c.Pos != prev+1 {
					// Changes before this one were pruned unread
					// (positions are dense): RESYNC, then the rest.
					events = append(events, Event{})
				}
				events = append(events, Event{Change: db.ChangeOf(c), at: c.Pos})
				prev = c.Pos
			}
			h.before(ctx, a.id, prev)
			h.mu.Lock()
			for _, e := range events {
				for s := range a.subs {
					s.offer(e)
				}
			}
			a.cursor = page.Next
			h.mu.Unlock()
		}
		if !page.More {
			return nil
		}
	}
}

// Unsubscribe forgets s; the account's channel is left when it was its
// last subscription.
func (h *Hub) Unsubscribe(s *Sub) {
	h.mu.Lock()
	if subs := h.byToken[s.token]; subs != nil {
		delete(subs, s)
		if len(subs) == 0 {
			delete(h.byToken, s.token)
		}
	}
	a := h.accounts[s.account]
	emptied := false
	if a != nil {
		delete(a.subs, s)
		if len(a.subs) == 0 {
			delete(h.accounts, s.account)
			close(a.stop)
			emptied = a.listening
		}
	}
	closed := h.closed
	release := s.release
	s.release = nil
	h.mu.Unlock()
	if release != nil {
		release()
	}
	if !emptied || closed {
		return
	}
	go func() {
		h.lmu.Lock()
		defer h.lmu.Unlock()
		h.mu.Lock()
		again := h.accounts[s.account] != nil
		h.mu.Unlock()
		if !again {
			if err := h.feed.Unlisten(s.account); err != nil {
				h.log.Warn("live updates: UNLISTEN failed", "err", err)
			}
		}
	}()
}

// Count is the number of subscriptions open and listening: each hears
// every change committed from now on.
func (h *Hub) Count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, subs := range h.byToken {
		for s := range subs {
			if s.listening {
				n++
			}
		}
	}
	return n
}

// EndAll ends every subscription (server shutdown): WebSocket connections
// close with 1001, SSE streams complete.
func (h *Hub) EndAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, subs := range h.byToken {
		for s := range subs {
			s.stop(EndShutdown)
		}
	}
}

// Close ends every subscription and leaves the listener.
func (h *Hub) Close() {
	h.EndAll()
	h.cancel()
	h.sub.Close()
	<-h.done
}

// Logger is the hub's logger.
func (h *Hub) Logger() *slog.Logger { return h.log }
