package sharedlimit

import (
	"context"
	"testing"
	"time"

	"shipgraph/testkit/redistest"
)

// An account's position only rises, is seen by every instance, and is
// kept per account; a dead Redis is an error (the reader then uses the
// primary), never a zero that would let a stale replica answer.
func TestAccountLSN(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	a, b := opened(t, rs.URL, DefaultOptions), opened(t, rs.URL, DefaultOptions)
	for _, step := range []struct {
		lsn, want uint64
	}{{0x2_0000_0100, 0x2_0000_0100}, {0x1_ffff_ffff, 0x2_0000_0100}, {0x10_0000_0000, 0x10_0000_0000}} {
		if err := a.AdvanceAccountLSN(ctx, "acct-1", step.lsn); err != nil {
			t.Fatal(err)
		}
		if got, err := b.AccountLSN(ctx, "acct-1"); err != nil || got != step.want {
			t.Fatalf("after advancing to %#x: %#x %v, want %#x", step.lsn, got, err, step.want)
		}
	}
	if got, err := b.AccountLSN(ctx, "acct-2"); err != nil || got != 0 {
		t.Fatalf("another account: %#x %v", got, err)
	}
	rs.Kill()
	if _, err := b.AccountLSN(ctx, "acct-1"); err == nil {
		t.Fatal("Redis is gone, yet the position is known")
	}
	if _, err := b.AccountLSN(ctx, "acct-1"); err == nil {
		t.Fatal("breaker open, yet the position is known")
	}
}

// A limit decision that Redis did not answer in time opens the breaker of
// the decisions (they fall back per process for Breaker), not the one of
// recording positions: the next write's position is still recorded, or
// another instance would answer from before that write for the whole
// Breaker (the response cache over instances did, under load, after one
// slow rate-limit decision). A recording that fails opens its own.
func TestPositionRecordedPastTheLimitsBreaker(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	o := DefaultOptions
	o.Breaker = time.Hour // whatever opens stays open for the test
	a, b := opened(t, rs.URL, o), opened(t, rs.URL, DefaultOptions)
	t.Cleanup(rs.Resume) // before Close, if the test fails paused
	rs.Pause()
	_, shared := a.Allow(ctx, "key", 60, 6)
	rs.Resume()
	if shared || a.usable() {
		t.Fatalf("a decision while Redis was paused: shared %v, breaker closed %v", shared, a.usable())
	}
	if err := a.AdvanceAccountLogPosition(ctx, "acct-1", 7); err != nil {
		t.Fatalf("a write's position after a decision fell back: %v", err)
	}
	if got, err := b.AccountLogPosition(ctx, "acct-1"); err != nil || got != 7 {
		t.Fatalf("another instance reads position %d (%v), want 7", got, err)
	}
	rs.Pause()
	err := a.AdvanceAccountLogPosition(ctx, "acct-1", 8)
	rs.Resume()
	if err == nil {
		t.Fatal("a position recorded while Redis was paused")
	}
	if err := a.AdvanceAccountLogPosition(ctx, "acct-1", 9); err == nil {
		t.Fatal("recording failed, yet the next one asked Redis within its breaker")
	}
}

// opened is a client of the Redis at url with options o, closed when t ends.
func opened(t *testing.T, url string, o Options) *Limits {
	t.Helper()
	l, err := OpenWith(url, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}
