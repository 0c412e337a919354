package live

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"shipgraph/db"
	"shipgraph/model"
)

// Hub fans the database's change feed (a subscription to db.Listener, the
// one connection listening per process, which the key cache shares) out to
// this process' subscriptions. It listens
// on an account's channel while the account has subscribers. Each
// subscription has a bounded queue: the feed never waits for a subscriber,
// and one that falls a whole queue behind (a slow consumer) is ended with a
// clear reason rather than allowed to grow memory. After the feed
// reconnects every subscription gets a RESYNC event (changes in between
// went unheard). A changed or revoked API key ends its subscriptions.
type Hub struct {
	store *db.DB
	cfg   Config
	log   *slog.Logger
	feed  *db.Listener
	sub   *db.Subscription
	done  chan struct{}
	up    chan struct{} // closed once the feed first listens

	lmu      sync.Mutex // serializes LISTEN and UNLISTEN
	mu       sync.Mutex
	closed   bool
	accounts map[string]*liveAccount
	byToken  map[string]map[*Sub]struct{}
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
}

// SharedCount counts subscriptions per key beyond this process. Acquire
// says whether one more of key may open under max, and returns the release
// to call when it ends; when it cannot tell it allows.
type SharedCount interface {
	Acquire(key string, max int) (release func(), allowed bool)
}

// DefaultConfig is the server's defaults.
var DefaultConfig = Config{MaxPerKey: 100, Queue: 4096, KeepAlive: 25 * time.Second, Ping: 5 * time.Second}

type liveAccount struct {
	subs      map[*Sub]struct{}
	listening bool
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
}

// Event is one change for a subscription; a nil Change is a re-sync
// (changes may have been missed).
type Event struct {
	Change *db.Change
}

func (s *Sub) stop(r EndReason) {
	s.once.Do(func() {
		s.reason = r
		close(s.end)
	})
}

// offer queues e without waiting; a full queue ends the subscription.
func (s *Sub) offer(e Event) {
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
	h.feed = listener
	h.sub = listener.Subscribe(feedBuffer, db.FeedChange, db.FeedToken)
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
			if a := h.accounts[e.Change.AccountID]; a != nil {
				for s := range a.subs {
					s.offer(Event{Change: e.Change})
				}
			}
			h.mu.Unlock()
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

// resync tells every subscription that changes may have been missed, and
// ends those whose key was revoked meanwhile (that news was missed too).
func (h *Hub) resync() {
	h.mu.Lock()
	tokens := make([]string, 0, len(h.byToken))
	for token, subs := range h.byToken {
		tokens = append(tokens, token)
		for s := range subs {
			s.offer(Event{})
		}
	}
	h.mu.Unlock()
	if len(tokens) == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
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
	}()
}

// Subscribe registers a subscription of p's account and returns once the
// database listens on the account's channel: every change committed after
// it returns reaches the subscription.
func (h *Hub) Subscribe(p *model.Principal) (*Sub, error) {
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
		a = &liveAccount{subs: map[*Sub]struct{}{}}
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
			h.Unsubscribe(s)
			h.log.Error("live updates: LISTEN failed", "err", err)
			return nil, model.Errorf(model.EUNAVAILABLE, "live updates are unavailable; try again shortly")
		}
		h.mu.Lock()
		a.listening = true
		h.mu.Unlock()
	}
	h.mu.Lock()
	s.listening = true
	h.mu.Unlock()
	return s, nil
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
	h.sub.Close()
	<-h.done
}

// Logger is the hub's logger.
func (h *Hub) Logger() *slog.Logger { return h.log }
