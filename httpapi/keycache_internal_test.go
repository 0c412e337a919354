package httpapi

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"testing"
	"time"

	"shipgraph/db/dbtest"
	"shipgraph/db/seed"
	"shipgraph/testkit/pg"
)

// TestCachedKeyKeepsLastUsed: a key answered from the cache still has its
// last_used_at bumped, off the request path, once it is a minute old —
// and only then. (The clock is moved by handing get a later "now".)
func TestCachedKeyKeepsLastUsed(t *testing.T) {
	ctx := context.Background()
	store := pg.At(t, dbtest.NewDB(t)).Store
	tokens, _, err := seed.Run(ctx, store, seed.Options{Shipments: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	key := tokens[0].Key
	listener := store.Listen(50 * time.Millisecond)
	t.Cleanup(listener.Close)
	c := newKeyCache(store, listener, slog.New(slog.DiscardHandler), 10, 50*time.Millisecond)
	t.Cleanup(c.close)
	for deadline := time.Now().Add(10 * time.Second); !c.isLive(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cache never went live")
		}
	}
	// get is handed a "now" up to a minute ahead: the listener's word
	// must hold that long.
	c.mu.Lock()
	c.stale = time.Hour
	c.mu.Unlock()
	p, err := c.authenticate(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	lastUsedAgo := func() time.Duration {
		t.Helper()
		var secs float64
		if err := store.SQL().QueryRowContext(ctx, `SELECT extract(epoch FROM now() - last_used_at) FROM api_tokens WHERE id = $1`, p.TokenID).Scan(&secs); err != nil {
			t.Fatal(err)
		}
		return time.Duration(secs * float64(time.Second))
	}
	if _, err := store.SQL().ExecContext(ctx, `UPDATE api_tokens SET last_used_at = now() - interval '5 minutes' WHERE id = $1`, p.TokenID); err != nil {
		t.Fatal(err)
	}
	hash := sha256.Sum256([]byte(key))
	// Within the minute: a hit, nothing queued.
	if _, _, ok := c.get(hash, time.Now().Add(30*time.Second)); !ok {
		t.Fatal("a known key is not cached")
	}
	time.Sleep(200 * time.Millisecond) // no bump may come: nothing to wait for
	if ago := lastUsedAgo(); ago < 4*time.Minute {
		t.Fatalf("last_used_at bumped %v ago by a hit within the minute", ago)
	}
	// A minute later: the hit queues the bump, which lands shortly.
	if _, _, ok := c.get(hash, time.Now().Add(61*time.Second)); !ok {
		t.Fatal("a known key is not cached")
	}
	for deadline := time.Now().Add(30 * time.Second); lastUsedAgo() > time.Minute; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("last_used_at of a cached key was not bumped")
		}
	}
}
