package sharedlimit

import (
	"testing"
	"time"

	"shipgraph/sharedlimit/redistest"
)

// A live instance keeps its subscriptions counted by its heartbeat; one
// that dies (no release, no heartbeat) stops counting after SubTTL.
func TestSubscriptionsExpireWithTheirInstance(t *testing.T) {
	rs := redistest.Start(t)
	o := DefaultOptions
	o.SubTTL = 600 * time.Millisecond
	open := func() *Limits {
		l, err := OpenWith(rs.URL, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(l.Close)
		return l
	}
	a, b := open(), open()
	if _, ok := a.Acquire("k", 1); !ok {
		t.Fatal("first subscription refused")
	}
	// Three TTLs later a's heartbeat still holds it.
	time.Sleep(3 * o.SubTTL)
	if _, ok := b.Acquire("k", 1); ok {
		t.Fatal("b opened a second subscription while a's is live")
	}
	// a dies: its heartbeat stops, nothing is released.
	a.halt()
	if _, ok := b.Acquire("k", 1); ok {
		t.Fatal("a's subscription forgotten before its TTL")
	}
	time.Sleep(o.SubTTL + 100*time.Millisecond)
	release, ok := b.Acquire("k", 1)
	if !ok {
		t.Fatal("a's subscription still counted after its TTL")
	}
	// A release frees the place at once.
	release()
	if _, ok := b.Acquire("k", 1); !ok {
		t.Fatal("released subscription still counted")
	}
}

// GCRA over Redis: burst, then refusals with a wait, shared by two clients.
func TestAllowShared(t *testing.T) {
	rs := redistest.Start(t)
	a, err := Open(rs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(rs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := range 3 {
		l := a
		if i%2 == 1 {
			l = b
		}
		if wait, shared := l.Allow(t.Context(), "key", 60, 3); !shared || wait != 0 {
			t.Fatalf("request %d: wait %s, shared %v", i, wait, shared)
		}
	}
	wait, shared := b.Allow(t.Context(), "key", 60, 3)
	if !shared || wait <= 0 || wait > time.Second {
		t.Fatalf("beyond the burst: wait %s, shared %v", wait, shared)
	}
}
