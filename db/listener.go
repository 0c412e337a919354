package db

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/lib/pq"

	"shipgraph/model"
)

// TokenChannel is the NOTIFY channel on which the database announces changed
// API keys (migration 00002): the payload is the token id, or "*" when every
// key may have changed (TRUNCATE).
const TokenChannel = "shipgraph_tokens"

// FeedApplicationName is the application_name of the process' one
// listening connection (Listener), so that it can be told apart in
// pg_stat_activity.
const FeedApplicationName = "shipgraph-live"

// withApplicationName sets application_name in a connection URL or
// key=value connection string.
func withApplicationName(dsn, name string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return dsn
		}
		q := u.Query()
		q.Set("application_name", name)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " application_name=" + name
}

// FeedEventKind says what a FeedEvent reports.
type FeedEventKind uint8

const (
	// FeedListening: the listener is connected and listens on every
	// channel asked for: every change committed from now on is reported.
	// With Resync (after a reconnection, or after the subscription fell a
	// whole buffer behind) changes went unheard meanwhile: whatever was
	// derived from them must be forgotten or re-read.
	FeedListening FeedEventKind = iota
	// FeedDown: the listener lost its connection, could not make one, a
	// ping failed, or (ErrFeedDropped) the subscription fell a whole
	// buffer behind while it was down. Changes go unheard until
	// FeedListening.
	FeedDown
	// FeedAlive: a ping on the connection was answered, so it is still
	// up: what was committed before the ping was reported.
	FeedAlive
	// FeedChange: changes of Change.AccountID were committed to the
	// change log (a wake-up: read the log; AccountID "" on
	// ChangeLogChannel, for every account).
	FeedChange
	// FeedToken: the API key TokenID changed (revoked, deleted, changed
	// what it stands for), or every key may have (TRUNCATE) when TokenID
	// is "*".
	FeedToken
	// FeedTick: every WakeFloor, whatever was heard. Readers look at what
	// they follow then (the change log's heads, the keys they cache):
	// changes written without the server wake nobody (wakeup.go). A tick
	// a full buffer cannot take is dropped (the next one comes), never a
	// lost event.
	FeedTick
)

func (k FeedEventKind) String() string {
	switch k {
	case FeedListening:
		return "listening"
	case FeedDown:
		return "down"
	case FeedAlive:
		return "alive"
	case FeedChange:
		return "change"
	case FeedToken:
		return "token"
	case FeedTick:
		return "tick"
	}
	return "unknown"
}

// FeedEvent is one report of a Listener.
type FeedEvent struct {
	Kind    FeedEventKind
	Resync  bool          // FeedListening after changes went unheard
	Change  *model.Change // FeedChange: the account woken
	TokenID string        // FeedToken
	Err     error         // FeedDown
}

// ErrFeedDropped is the Err of the FeedDown a subscription gets when it fell
// a whole buffer behind while the listener was down.
var ErrFeedDropped = errors.New("listener: events dropped, the subscriber fell behind")

// Listener is the process' one listening connection (lib/pq's Listener,
// which reconnects by itself, named FeedApplicationName). It listens on
// TokenChannel from the start and on the change channels of the accounts
// asked for (Listen), pings its connection so that one that died silently
// is noticed, and fans what it hears out to its subscriptions (Subscribe):
// the key cache and the live hub share it.
//
// Its reader never waits for a subscriber: each subscription has a bounded
// buffer, and one that falls a whole buffer behind loses events; once it
// has room again it is told so, in order, with FeedListening and Resync
// (or FeedDown while the connection is down), as after a reconnection.
type Listener struct {
	l      *pq.Listener
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex // guards what follows; held while fanning out
	up     bool       // the last state reported was FeedListening
	closed bool
	subs   []*Subscription
}

// Subscription is one consumer's share of a Listener.
type Subscription struct {
	l     *Listener
	ch    chan FeedEvent
	kinds uint8 // bit k: FeedEventKind k is wanted
	lost  bool  // events were dropped since the last catch-up (under l.mu)
	gone  bool  // ch is closed (under l.mu)
}

// Listen opens the process' listening connection. ping is how often the
// connection is pinged (FeedAlive, or FeedDown when the ping fails). Close
// it after its subscribers.
func (db *DB) Listen(ping time.Duration) *Listener {
	ctx, cancel := context.WithCancel(context.Background())
	l := &Listener{cancel: cancel, done: make(chan struct{})}
	states := make(chan FeedEvent, 16)
	report := func(e FeedEvent) {
		select {
		case states <- e:
		case <-ctx.Done():
		}
	}
	// The callback runs on pq's own goroutine, the one that also feeds
	// the notification channel: a disconnection is reported on states
	// before the nil notification of the reconnection is sent.
	l.l = pq.NewListener(withApplicationName(db.url, FeedApplicationName), 50*time.Millisecond, 2*time.Second, func(ev pq.ListenerEventType, err error) {
		switch ev {
		case pq.ListenerEventDisconnected, pq.ListenerEventConnectionAttemptFailed:
			report(FeedEvent{Kind: FeedDown, Err: err})
		}
		// Reconnected: the nil notification that follows it on the
		// notification channel reports it, in order with the
		// notifications. Connected: Listen's return below reports it.
	})
	go func() {
		// Blocks until the server acknowledged LISTEN (or the listener
		// closes).
		if err := l.l.Listen(TokenChannel); err == nil {
			report(FeedEvent{Kind: FeedListening})
		} else if ctx.Err() == nil {
			report(FeedEvent{Kind: FeedDown, Err: err})
		}
	}()
	// Ping on a goroutine of its own: a ping on a dead connection can hang
	// until the kernel gives up on it, and the reader must not hang with it.
	pings := make(chan error, 1)
	go func() {
		t := time.NewTicker(ping)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := l.l.Ping()
			select {
			case pings <- err:
			case <-ctx.Done():
				return
			}
		}
	}()
	ticks := make(chan struct{}, 1)
	go func() {
		t := time.NewTicker(WakeFloor)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			select {
			case ticks <- struct{}{}:
			default:
			}
		}
	}()
	go l.read(ctx, states, pings, ticks)
	return l
}

// read is the listener's one reader: it turns what pq reports into events,
// in order, and fans them out until ctx is done.
func (l *Listener) read(ctx context.Context, states <-chan FeedEvent, pings <-chan error, ticks <-chan struct{}) {
	defer close(l.done)
	defer l.closeSubs()
	notify := l.l.NotificationChannel()
	// drainStates fans out the state reports already made: they came
	// before what is handled next.
	drainStates := func() {
		for {
			select {
			case e := <-states:
				l.fanOut(e)
			default:
				return
			}
		}
	}
	forward := func(n *pq.Notification) {
		if n == nil {
			drainStates() // the disconnection came first
		}
		if e, keep := parseNotification(n); keep {
			l.fanOut(e)
		}
	}
	for {
		select {
		case <-ctx.Done():
			shutdown(l.l)
			return
		case e := <-states:
			l.fanOut(e)
		case n, ok := <-notify:
			if !ok {
				return
			}
			forward(n)
		case <-ticks:
			l.fanOut(FeedEvent{Kind: FeedTick})
		case err := <-pings:
			// What the connection delivered before the ping's answer
			// goes out first.
			for drained := false; !drained; {
				select {
				case n, ok := <-notify:
					if ok {
						forward(n)
					}
					drained = !ok
				default:
					drained = true
				}
			}
			drainStates()
			e := FeedEvent{Kind: FeedAlive}
			if err != nil {
				e = FeedEvent{Kind: FeedDown, Err: err}
			}
			l.fanOut(e)
			l.catchUp()
		}
	}
}

func parseNotification(n *pq.Notification) (FeedEvent, bool) {
	if n == nil {
		return FeedEvent{Kind: FeedListening, Resync: true}, true
	}
	if n.Channel == TokenChannel {
		return FeedEvent{Kind: FeedToken, TokenID: n.Extra}, true
	}
	return parseChange(n)
}

// fanOut hands e to every subscription that wants it, without waiting.
func (l *Listener) fanOut(e FeedEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e.Kind {
	case FeedListening:
		l.up = true
	case FeedDown:
		l.up = false
	}
	for _, s := range l.subs {
		if s.kinds&(1<<e.Kind) != 0 {
			s.offer(e, l.up)
		}
	}
}

// catchUp tells the subscriptions that lost events and have room again
// (the reader calls it after every ping, so it happens even when nothing
// else is heard).
func (l *Listener) catchUp() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.subs {
		if s.lost {
			s.sendCatchUp(l.up, FeedEvent{})
		}
	}
}

// offer queues e for s, after the catch-up owed to it if it lost events;
// a full buffer drops e and owes a catch-up. Under l.mu.
func (s *Subscription) offer(e FeedEvent, up bool) {
	if s.lost {
		if !s.sendCatchUp(up, e) {
			return
		}
		if e.Kind == FeedListening || e.Kind == FeedDown {
			return // the catch-up was e
		}
	}
	select {
	case s.ch <- e:
	default:
		if e.Kind != FeedTick {
			s.lost = true
		}
	}
}

// sendCatchUp queues what a subscription that lost events must be told:
// the listener's state now, as after a reconnection. e is the state event
// being fanned out, if any. Under l.mu.
func (s *Subscription) sendCatchUp(up bool, e FeedEvent) bool {
	c := FeedEvent{Kind: FeedDown, Err: ErrFeedDropped}
	switch {
	case up:
		c = FeedEvent{Kind: FeedListening, Resync: true}
	case e.Kind == FeedDown:
		c = e
	}
	select {
	case s.ch <- c:
		s.lost = false
		return true
	default:
		return false
	}
}

// Subscribe adds a consumer that gets the kinds of events asked for (and
// always FeedListening and FeedDown) on a channel buffering up to buffer
// of them. When the listener listens already, the first event is
// FeedListening (without Resync). The channel is closed by the
// subscription's Close or the listener's.
func (l *Listener) Subscribe(buffer int, kinds ...FeedEventKind) *Subscription {
	s := &Subscription{l: l, ch: make(chan FeedEvent, max(buffer, 1)), kinds: 1<<FeedListening | 1<<FeedDown}
	for _, k := range kinds {
		s.kinds |= 1 << k
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		s.gone = true
		close(s.ch)
		return s
	}
	if l.up {
		s.ch <- FeedEvent{Kind: FeedListening}
	}
	l.subs = append(l.subs, s)
	return s
}

// Events is the subscription's events, in the order they were heard.
func (s *Subscription) Events() <-chan FeedEvent { return s.ch }

// Close ends the subscription: its channel is closed, at once.
func (s *Subscription) Close() {
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.gone {
		return
	}
	s.gone = true
	close(s.ch)
	for i, o := range l.subs {
		if o == s {
			l.subs = append(l.subs[:i], l.subs[i+1:]...)
			break
		}
	}
}

func (l *Listener) closeSubs() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed, l.up = true, false
	for _, s := range l.subs {
		s.gone = true
		close(s.ch)
	}
	l.subs = nil
}

// Listen starts listening to the changes of account. It returns once
// the server acknowledged (so every change committed after it returns is
// reported), or at once while the connection is down: the reconnection
// listens again and reports FeedListening with Resync.
func (l *Listener) Listen(accountID string) error {
	err := l.l.Listen(ChangeChannel(accountID))
	if errors.Is(err, pq.ErrChannelAlreadyOpen) {
		return nil
	}
	return err
}

// Unlisten stops listening to account's changes.
func (l *Listener) Unlisten(accountID string) error {
	err := l.l.Unlisten(ChangeChannel(accountID))
	if errors.Is(err, pq.ErrChannelNotOpen) {
		return nil
	}
	return err
}

// Close closes the connection and every subscription's channel.
func (l *Listener) Close() {
	l.cancel()
	<-l.done
}

// shutdown closes the listener and waits a little for its goroutine to end
// (its Notify channel closes then); a connection stuck on a dead network
// is left to the process' exit rather than holding up a shutdown.
func shutdown(l *pq.Listener) {
	closed := make(chan struct{})
	go func() {
		_ = l.Close()
		close(closed)
	}()
	deadline := time.After(2 * time.Second)
	for n := l.NotificationChannel(); n != nil; {
		select {
		case _, ok := <-n:
			if !ok {
				n = nil
			}
		case <-deadline:
			return
		}
	}
	<-closed
}

// ListenAll starts listening to the wake-ups of every account's change
// log (ChangeLogChannel), reported as FeedChange with an empty AccountID:
// the wake-up of cross-account readers (the webhook dispatcher).
func (l *Listener) ListenAll() error {
	err := l.l.Listen(ChangeLogChannel)
	if errors.Is(err, pq.ErrChannelAlreadyOpen) {
		return nil
	}
	return err
}
