package sharedlimit

import (
	"testing"
	"time"

	"shipgraph/testkit/redistest"
)

// twoClients opens two clients of one Redis with o, closed when the test
// ends, as two processes would share it. Decisions get a generous timeout:
// a fail-open answer under load would allow what a test expects refused,
// or not share what it expects shared.
func twoClients(t *testing.T, url string, o Options) (a, b *Limits) {
	t.Helper()
	o.Timeout = 10 * time.Second
	open := func() *Limits {
		l, err := OpenWith(url, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(l.Close)
		return l
	}
	return open(), open()
}

// A live instance keeps its subscriptions counted by its heartbeat; one
// that dies (no release, no heartbeat) stops counting after SubTTL.
//
// Every wait is on Redis' own clock, the one the scripts count with: the
// test reads a's member's expiry and waits until Redis' TIME passes it, it
// never sleeps a guess. Decisions get a generous timeout: a fail-open
// answer under load would allow what the test expects refused.
func TestSubscriptionsExpireWithTheirInstance(t *testing.T) {
	rs := redistest.Start(t)
	o := DefaultOptions
	o.SubTTL = 900 * time.Millisecond
	a, b := twoClients(t, rs.URL, o)
	if _, ok := a.Acquire("k", 1); !ok {
		t.Fatal("first subscription refused")
	}
	set := o.Prefix + "subs:k"
	a.mu.Lock()
	var member string
	for m := range a.subs {
		member = m
	}
	a.mu.Unlock()
	expiry := func() int64 { // a's member's expiry, Redis milliseconds
		t.Helper()
		f, err := a.rdb.ZScore(t.Context(), set, member).Result()
		if err != nil {
			t.Fatalf("a's member in Redis: %v", err)
		}
		return int64(f)
	}
	redisPast := func(ms int64) { // waits until Redis' clock is past ms
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			now, err := a.rdb.Time(t.Context()).Result()
			if err != nil {
				t.Fatal(err)
			}
			if now.UnixMilli() > ms {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("Redis' clock did not pass %d", ms)
			}
			time.Sleep(time.Duration(ms-now.UnixMilli()+1) * time.Millisecond)
		}
	}
	// Past the expiry it was acquired with (and twice more), a's heartbeat
	// has moved it on: b is refused.
	first := expiry()
	redisPast(first + 2*o.SubTTL.Milliseconds())
	if e := expiry(); e <= first {
		t.Fatalf("a's heartbeat did not refresh its member (expiry %d, first %d)", e, first)
	}
	if _, ok := b.Acquire("k", 1); ok {
		t.Fatal("b opened a second subscription while a's is live")
	}
	// a dies: its heartbeat stops, nothing is released. Its member counts
	// until the expiry its last refresh gave it, not after.
	a.halt()
	last := expiry()
	now, err := a.rdb.Time(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	if now.UnixMilli() < last {
		if _, ok := b.Acquire("k", 1); ok {
			t.Fatal("a's subscription forgotten before its TTL")
		}
	}
	redisPast(last)
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
	a, b := twoClients(t, rs.URL, DefaultOptions)
	for i := range 3 {
		l := a
		if i%2 == 1 {
			l = b
		}
		// One a minute after a burst of 3: no refill comes between the
		// requests however slow they are.
		if wait, shared := l.Allow(t.Context(), "key", 1, 3); !shared || wait != 0 {
			t.Fatalf("request %d: wait %s, shared %v", i, wait, shared)
		}
	}
	wait, shared := b.Allow(t.Context(), "key", 1, 3)
	if !shared || wait <= 0 || wait > time.Minute {
		t.Fatalf("beyond the burst: wait %s, shared %v", wait, shared)
	}
}

// AllowN takes a quantity, all or nothing, from one bucket two clients
// share: what remains is reported after each decision, a quantity larger
// than what remains is refused whole (taking nothing) with the wait for it.
func TestAllowNShared(t *testing.T) {
	rs := redistest.Start(t)
	a, b := twoClients(t, rs.URL, DefaultOptions)
	// 60 a minute, at most 100 held: a unit a second comes back, far
	// less than the quantities below between two calls.
	take := func(l *Limits, n int) Taken {
		t.Helper()
		got, shared := l.AllowN(t.Context(), "cost", n, 60, 100)
		if !shared {
			t.Fatalf("AllowN(%d) not shared", n)
		}
		return got
	}
	if got := take(a, 70); got.RetryAfter != 0 || got.Remaining < 29 || got.Remaining > 31 {
		t.Fatalf("70 of 100: %+v, want taken with 30 remaining", got)
	}
	got := take(b, 50)
	if got.RetryAfter < 15*time.Second || got.RetryAfter > 21*time.Second {
		t.Fatalf("50 with about 30 left: %+v, want refused with a wait of about 20 s", got)
	}
	if got.Remaining < 29 || got.Remaining > 31 {
		t.Fatalf("a refusal took something: %+v", got)
	}
	if got := take(b, 25); got.RetryAfter != 0 || got.Remaining > 6 {
		t.Fatalf("25 with about 30 left: %+v, want taken", got)
	}
}
