package sharedlimit

import (
	"context"
	"testing"

	"shipgraph/testkit/redistest"
)

// An account's position only rises, is seen by every instance, and is
// kept per account; a dead Redis is an error (the reader then uses the
// primary), never a zero that would let a stale replica answer.
func TestAccountLSN(t *testing.T) {
	rs := redistest.Start(t)
	ctx := context.Background()
	a, err := Open(rs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	b, err := Open(rs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
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
