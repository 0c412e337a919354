package db

import (
	"context"
	"time"

	"github.com/lib/pq"
)

// TokenChannel is the NOTIFY channel on which the database announces changed
// API keys (migration 00002): the payload is the token id, or "*" when every
// key may have changed (TRUNCATE).
const TokenChannel = "shipgraph_tokens"

// TokenEventKind says what a TokenEvent reports.
type TokenEventKind int

const (
	// TokensListening: the listener is connected and listening. Every
	// change committed from now on will be reported. It comes on the first
	// connection and after every reconnection: changes made while the
	// connection was down were not heard, so whatever was cached before
	// must be forgotten.
	TokensListening TokenEventKind = iota
	// TokensDown: the listener lost its connection (or could not make
	// one; Err says why). Changes go unheard until TokensListening.
	TokensDown
	// TokensAlive: a ping on the listener's connection was answered, so it
	// is still up: the changes committed before the ping were reported.
	TokensAlive
	// TokenChanged: token TokenID was revoked, deleted, or changed what it
	// stands for.
	TokenChanged
	// TokensReset: every key may have changed (the table was truncated).
	TokensReset
)

func (k TokenEventKind) String() string {
	switch k {
	case TokensListening:
		return "listening"
	case TokensDown:
		return "down"
	case TokensAlive:
		return "alive"
	case TokenChanged:
		return "changed"
	case TokensReset:
		return "reset"
	}
	return "unknown"
}

// TokenEvent is one report of WatchTokens.
type TokenEvent struct {
	Kind    TokenEventKind
	TokenID string // TokenChanged
	Err     error  // TokensDown
}

// WatchTokens listens on TokenChannel with a connection of its own (lib/pq's
// Listener, which reconnects by itself) and reports what it hears, in
// order, on the returned channel. Every ping interval it pings that
// connection and reports TokensAlive, or TokensDown when the ping fails:
// a connection that died silently (no reset, no error) is noticed only so.
// The channel is closed once ctx is done and the listener has shut down.
// The reader must keep reading until then.
func (db *DB) WatchTokens(ctx context.Context, ping time.Duration) <-chan TokenEvent {
	out := make(chan TokenEvent, 16)
	states := make(chan TokenEvent, 16)
	report := func(e TokenEvent) {
		select {
		case states <- e:
		case <-ctx.Done():
		}
	}
	// The callback runs on the listener's own goroutine, which also feeds
	// l.Notify; both end up in the loop below.
	l := pq.NewListener(db.url, 100*time.Millisecond, 5*time.Second, func(ev pq.ListenerEventType, err error) {
		switch ev {
		case pq.ListenerEventReconnected:
			// pq listens on the channels again before this fires.
			report(TokenEvent{Kind: TokensListening})
		case pq.ListenerEventConnected:
			// The first connection may come before LISTEN: Listen's
			// return reports that one below.
		case pq.ListenerEventDisconnected, pq.ListenerEventConnectionAttemptFailed:
			report(TokenEvent{Kind: TokensDown, Err: err})
		}
	})
	go func() {
		// Blocks until the server acknowledged LISTEN (or the listener
		// closes).
		if err := l.Listen(TokenChannel); err == nil {
			report(TokenEvent{Kind: TokensListening})
		} else if ctx.Err() == nil {
			report(TokenEvent{Kind: TokensDown, Err: err})
		}
	}()
	// Ping on a goroutine of its own: a ping on a dead connection can hang
	// until the kernel gives up on it, and the loop must not hang with it.
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
			err := l.Ping()
			select {
			case pings <- err:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		defer close(out)
		send := func(e TokenEvent) bool {
			select {
			case out <- e:
				return true
			case <-ctx.Done():
				return false
			}
		}
		notify := l.NotificationChannel()
		forward := func(n *pq.Notification) bool {
			switch {
			case n == nil: // after a reconnection; TokensListening covers it
				return true
			case n.Extra == "*":
				return send(TokenEvent{Kind: TokensReset})
			default:
				return send(TokenEvent{Kind: TokenChanged, TokenID: n.Extra})
			}
		}
		for {
			select {
			case <-ctx.Done():
				shutdown(l)
				return
			case n, ok := <-notify:
				if !ok {
					return
				}
				if !forward(n) {
					shutdown(l)
					return
				}
			case e := <-states:
				if !send(e) {
					shutdown(l)
					return
				}
			case err := <-pings:
				// What the connection delivered before the ping's answer
				// goes out first.
				for drained := false; !drained; {
					select {
					case n, ok := <-notify:
						if ok && !forward(n) {
							shutdown(l)
							return
						}
						drained = !ok
					default:
						drained = true
					}
				}
				e := TokenEvent{Kind: TokensAlive}
				if err != nil {
					e = TokenEvent{Kind: TokensDown, Err: err}
				}
				if !send(e) {
					shutdown(l)
					return
				}
			}
		}
	}()
	return out
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
