package db_test

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"shipgraph/db"
)

// TestWatchTokens: what changes a key is announced to a subscription of
// the listener with its id, in order, whoever changes it (the store or
// plain SQL); last_used_at bumps are not; TRUNCATE announces "*". Pings
// report the connection alive.
func TestWatchTokens(t *testing.T) {
	f := newFixture(t)
	listener := f.DB.Listen(50 * time.Millisecond)
	events := listener.Subscribe(64, db.FeedToken, db.FeedAlive).Events()
	next := func(skipAlive bool) db.FeedEvent {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case e, ok := <-events:
				if !ok {
					t.Fatal("events closed")
				}
				if skipAlive && e.Kind == db.FeedAlive {
					continue
				}
				return e
			case <-timeout:
				t.Fatal("no event within 30s")
			}
		}
	}
	if e := next(true); e.Kind != db.FeedListening {
		t.Fatalf("first event %v, want listening", e.Kind)
	}
	if e := next(false); e.Kind != db.FeedAlive {
		t.Fatalf("then %v, want alive (a ping)", e.Kind)
	}
	create := func() string {
		k, _ := db.NewAPIKey(rand.Reader)
		tok, err := f.DB.CreateToken(context.Background(), db.TokenInput{AccountID: f.A.Account, Role: "member", Key: k})
		if err != nil {
			t.Fatal(err)
		}
		return tok.ID
	}
	a, b := create(), create()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := f.SQL.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Not announced: creation (above), last_used_at, name.
	exec(`UPDATE api_tokens SET last_used_at = now(), name = 'x' WHERE id = $1`, a)
	if err := f.DB.RevokeToken(context.Background(), f.A.Account, a); err != nil {
		t.Fatal(err)
	}
	// Plain SQL announces nothing (a trigger's NOTIFY would fire on every
	// node of a distributed database and fail its two-phase commit): the
	// key caches' floor check finds it. The server's revocation does.
	exec(`UPDATE api_tokens SET role = 'viewer' WHERE id = $1`, b)
	if err := f.DB.RevokeToken(context.Background(), f.A.Account, b); err != nil {
		t.Fatal(err)
	}
	for i, want := range []db.FeedEvent{{Kind: db.FeedToken, TokenID: a}, {Kind: db.FeedToken, TokenID: b}} {
		if e := next(true); e.Kind != want.Kind || e.TokenID != want.TokenID {
			t.Fatalf("event %d: %v %q, want %v %q", i, e.Kind, e.TokenID, want.Kind, want.TokenID)
		}
	}
	listener.Close()
	for range events { // closed once the listener is down
	}
}

// TestListenerFanOut: one listener, several subscriptions. A subscriber
// that does not read never holds up the others: it loses what did not fit
// its buffer and is then told so (FeedListening with Resync) before
// anything newer; one that subscribes to a listener already listening
// hears so at once; a closed subscription's channel is closed, and the
// listener goes on.
func TestListenerFanOut(t *testing.T) {
	f := newFixture(t)
	listener := f.DB.Listen(50 * time.Millisecond)
	defer listener.Close()
	fast := listener.Subscribe(64, db.FeedToken)
	next := func(s *db.Subscription) db.FeedEvent {
		t.Helper()
		select {
		case e, ok := <-s.Events():
			if !ok {
				t.Fatal("events closed")
			}
			return e
		case <-time.After(30 * time.Second):
			t.Fatal("no event within 30s")
		}
		panic("unreachable")
	}
	if e := next(fast); e.Kind != db.FeedListening || e.Resync {
		t.Fatalf("first event %v (resync %v), want listening", e.Kind, e.Resync)
	}
	// Subscribed while listening: the buffer of one holds FeedListening
	// already, so it is full.
	slow := listener.Subscribe(1, db.FeedToken)
	late := listener.Subscribe(4)
	select {
	case e := <-late.Events():
		if e.Kind != db.FeedListening {
			t.Fatalf("late subscriber's first event %v", e.Kind)
		}
	default:
		t.Fatal("a subscriber of a listening listener is not told so at once")
	}
	late.Close()
	if _, ok := <-late.Events(); ok {
		t.Fatal("a closed subscription's channel is open")
	}
	// The listener hands each event to its subscriptions in the order they
	// subscribed, under one lock: when barrier (subscribed after slow) has
	// an event, slow was offered it. Reading fast alone raced that: slow
	// drained before the last event was offered to it had room for it.
	barrier := listener.Subscribe(64, db.FeedToken)
	if e := next(barrier); e.Kind != db.FeedListening {
		t.Fatalf("barrier's first event %v", e.Kind)
	}
	revoke := func() string {
		t.Helper()
		k, _ := db.NewAPIKey(rand.Reader)
		tok, err := f.DB.CreateToken(context.Background(), db.TokenInput{AccountID: f.A.Account, Role: "member", Key: k})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.DB.RevokeToken(context.Background(), f.A.Account, tok.ID); err != nil {
			t.Fatal(err)
		}
		return tok.ID
	}
	var ids []string
	for range 3 {
		ids = append(ids, revoke())
	}
	for i, id := range ids {
		if e := next(fast); e.Kind != db.FeedToken || e.TokenID != id {
			t.Fatalf("fast subscriber, event %d: %v %q, want token %q", i, e.Kind, e.TokenID, id)
		}
		if e := next(barrier); e.Kind != db.FeedToken || e.TokenID != id {
			t.Fatalf("barrier, event %d: %v %q, want token %q", i, e.Kind, e.TokenID, id)
		}
	}
	if e := next(slow); e.Kind != db.FeedListening || e.Resync {
		t.Fatalf("slow subscriber's first event %v (resync %v)", e.Kind, e.Resync)
	}
	// What did not fit is gone; the next ping tells it so.
	if e := next(slow); e.Kind != db.FeedListening || !e.Resync {
		t.Fatalf("slow subscriber after falling behind: %v (resync %v), want listening with resync", e.Kind, e.Resync)
	}
	id := revoke()
	if e := next(slow); e.Kind != db.FeedToken || e.TokenID != id {
		t.Fatalf("slow subscriber, caught up: %v %q, want token %q", e.Kind, e.TokenID, id)
	}
	if e := next(fast); e.Kind != db.FeedToken || e.TokenID != id {
		t.Fatalf("fast subscriber: %v %q, want token %q", e.Kind, e.TokenID, id)
	}
	listener.Close()
	for _, s := range []*db.Subscription{fast, slow, barrier} {
		for range s.Events() { // closed with the listener
		}
	}
}
