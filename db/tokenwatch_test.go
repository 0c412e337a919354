package db_test

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"shipgraph/db"
)

// TestWatchTokens: what changes a key is announced with its id, in order,
// whoever changes it (the store or plain SQL); last_used_at bumps are not;
// TRUNCATE announces a reset. Pings report the connection alive.
func TestWatchTokens(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	events := f.DB.WatchTokens(ctx, 50*time.Millisecond)
	next := func(skipAlive bool) db.TokenEvent {
		t.Helper()
		timeout := time.After(5 * time.Second)
		for {
			select {
			case e, ok := <-events:
				if !ok {
					t.Fatal("events closed")
				}
				if skipAlive && e.Kind == db.TokensAlive {
					continue
				}
				return e
			case <-timeout:
				t.Fatal("no event within 5s")
			}
		}
	}
	if e := next(true); e.Kind != db.TokensListening {
		t.Fatalf("first event %v, want listening", e.Kind)
	}
	if e := next(false); e.Kind != db.TokensAlive {
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
	exec(`UPDATE api_tokens SET role = 'viewer' WHERE id = $1`, b)
	exec(`DELETE FROM api_tokens WHERE id = $1`, b)
	exec(`TRUNCATE api_tokens`)
	for i, want := range []db.TokenEvent{{Kind: db.TokenChanged, TokenID: a}, {Kind: db.TokenChanged, TokenID: b},
		{Kind: db.TokenChanged, TokenID: b}, {Kind: db.TokensReset}} {
		if e := next(true); e.Kind != want.Kind || e.TokenID != want.TokenID {
			t.Fatalf("event %d: %v %q, want %v %q", i, e.Kind, e.TokenID, want.Kind, want.TokenID)
		}
	}
	cancel()
	for range events { // closed once the listener is down
	}
}

// TestTouchTokens: last_used_at is bumped for keys not bumped in the last
// minute and not revoked, in one statement.
func TestTouchTokens(t *testing.T) {
	f := newFixture(t)
	ids := map[string]string{}
	for _, name := range []string{"stale", "fresh", "never", "revoked"} {
		k, _ := db.NewAPIKey(rand.Reader)
		tok, err := f.DB.CreateToken(context.Background(), db.TokenInput{AccountID: f.A.Account, Role: "member", Key: k})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = tok.ID
	}
	if _, err := f.SQL.Exec(`UPDATE api_tokens SET last_used_at = CASE id
		WHEN $1::uuid THEN now() - interval '2 minutes' WHEN $2::uuid THEN now() - interval '10 seconds'
		WHEN $3::uuid THEN now() - interval '2 minutes' END,
		revoked_at = CASE WHEN id = $3::uuid THEN now() END
		WHERE id IN ($1, $2, $3)`, ids["stale"], ids["fresh"], ids["revoked"]); err != nil {
		t.Fatal(err)
	}
	ctx, n := counting()
	if err := f.DB.TouchTokens(ctx, []string{ids["stale"], ids["fresh"], ids["never"], ids["revoked"], "not-a-uuid"}); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 1 {
		t.Errorf("%d statements, want 1", n.Load())
	}
	for name, bumped := range map[string]bool{"stale": true, "fresh": false, "never": true, "revoked": false} {
		var recent bool
		if err := f.SQL.QueryRow(`SELECT coalesce(last_used_at > now() - interval '5 seconds', false) FROM api_tokens WHERE id = $1`, ids[name]).Scan(&recent); err != nil {
			t.Fatal(err)
		}
		if recent != bumped {
			t.Errorf("%s: bumped %v, want %v", name, recent, bumped)
		}
	}
}
