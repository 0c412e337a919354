package db_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"regexp"
	"strings"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/model"
)

func TestNewAPIKey(t *testing.T) {
	k1, err := db.NewAPIKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^sg_[a-z2-7]{40}$`).MatchString(k1) {
		t.Fatalf("key %q", k1)
	}
	seeded := func() string {
		k, err := db.NewAPIKey(bytes.NewReader(bytes.Repeat([]byte{7}, 64)))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if k2, k3 := seeded(), seeded(); k2 != k3 {
		t.Fatal("a seeded reader must give the same key")
	}
	if _, err := db.NewAPIKey(bytes.NewReader([]byte{1, 2})); err == nil {
		t.Fatal("a short reader must fail")
	}
}

func TestTokensAndAuthenticate(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	key, _ := db.NewAPIKey(rand.Reader)
	tok, err := f.DB.CreateToken(ctx, db.TokenInput{AccountID: f.A.Account, UserID: &f.A.Member, Role: "member", Name: "ci", Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Prefix != key[:10] || tok.AccountID != f.A.Account || *tok.UserID != f.A.Member || tok.Role != "member" || tok.Name != "ci" {
		t.Fatalf("token %+v", tok)
	}
	// Only the hash and the prefix are stored.
	var hashed bool
	if err := f.SQL.QueryRow(`SELECT token_sha256 = sha256(convert_to($1, 'UTF8')) AND prefix = left($1, 10)
		FROM api_tokens WHERE id = $2`, key, tok.ID).Scan(&hashed); err != nil || !hashed {
		t.Fatalf("stored token is not sha256(key) and prefix: %v, %v", hashed, err)
	}

	// A good key: one statement, the principal, last_used_at set.
	cctx, n := counting()
	p, err := f.DB.Authenticate(cctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if n.Load() != 1 {
		t.Fatalf("Authenticate cost %d statements", n.Load())
	}
	if p.TokenID != tok.ID || p.AccountID != f.A.Account || p.UserID == nil || *p.UserID != f.A.Member || p.Role != "member" {
		t.Fatalf("principal %+v", p)
	}
	lastUsed := func() *time.Time {
		var at *time.Time
		if err := f.SQL.QueryRow(`SELECT last_used_at FROM api_tokens WHERE id = $1`, tok.ID).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	first := lastUsed()
	if first == nil {
		t.Fatal("last_used_at not set")
	}
	// Within a minute: not bumped again.
	if _, err := f.DB.Authenticate(ctx, key); err != nil {
		t.Fatal(err)
	}
	if again := lastUsed(); !again.Equal(*first) {
		t.Fatalf("last_used_at bumped within a minute: %v → %v", first, again)
	}
	// Over a minute ago: bumped.
	f.exec(t, `UPDATE api_tokens SET last_used_at = now() - interval '2 minutes' WHERE id = $1`, tok.ID)
	old := lastUsed()
	if _, err := f.DB.Authenticate(ctx, key); err != nil {
		t.Fatal(err)
	}
	if now := lastUsed(); !now.After(*old) {
		t.Fatalf("last_used_at not bumped after a minute: %v → %v", old, now)
	}

	// Unknown (well formed): unauthenticated after one statement.
	other, _ := db.NewAPIKey(rand.Reader)
	cctx, n = counting()
	_, err = f.DB.Authenticate(cctx, other)
	wantCode(t, err, model.EUNAUTHENTICATED)
	if n.Load() != 1 {
		t.Fatalf("unknown key: %d statements", n.Load())
	}

	// Malformed: no statement at all.
	for _, bad := range []string{"", "sg_", key[:len(key)-1], key + "a", "xx_" + key[3:], strings.ToUpper(key), key[:20] + "'" + key[21:], "Token " + key} {
		cctx, n := counting()
		_, err := f.DB.Authenticate(cctx, bad)
		wantCode(t, err, model.EUNAUTHENTICATED)
		if n.Load() != 0 {
			t.Fatalf("malformed key %q sent %d statements", bad, n.Load())
		}
	}

	// Revoked: refused; revoking is scoped to the account and idempotent.
	wantCode(t, f.DB.RevokeToken(ctx, f.B.Account, tok.ID), model.ENOTFOUND)
	if _, err := f.DB.Authenticate(ctx, key); err != nil {
		t.Fatal("revoking from another account must not revoke")
	}
	if err := f.DB.RevokeToken(ctx, f.A.Account, tok.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.DB.RevokeToken(ctx, f.A.Account, tok.ID); err != nil {
		t.Fatal("revoking twice:", err)
	}
	_, err = f.DB.Authenticate(ctx, key)
	wantCode(t, err, model.EUNAUTHENTICATED)
	wantCode(t, f.DB.RevokeToken(ctx, f.A.Account, "nope"), model.ENOTFOUND)
}

func TestCreateTokenRefuses(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	key, _ := db.NewAPIKey(rand.Reader)
	for name, c := range map[string]struct {
		in   db.TokenInput
		code string
	}{
		"bad role":                {db.TokenInput{AccountID: f.A.Account, Role: "owner", Key: key}, model.EINVALID},
		"bad key":                 {db.TokenInput{AccountID: f.A.Account, Role: "admin", Key: "secret"}, model.EINVALID},
		"unknown account":         {db.TokenInput{AccountID: "00000000-0000-0000-0000-000000000000", Role: "admin", Key: key}, model.ENOTFOUND},
		"user of another account": {db.TokenInput{AccountID: f.A.Account, UserID: &f.B.Admin, Role: "admin", Key: key}, model.ENOTFOUND},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.DB.CreateToken(ctx, c.in)
			wantCode(t, err, c.code)
		})
	}
	// Without a user; the same key twice is a conflict.
	if _, err := f.DB.CreateToken(ctx, db.TokenInput{AccountID: f.A.Account, Role: "viewer", Key: key}); err != nil {
		t.Fatal(err)
	}
	_, err := f.DB.CreateToken(ctx, db.TokenInput{AccountID: f.B.Account, Role: "viewer", Key: key})
	wantCode(t, err, model.ECONFLICT)
	p, err := f.DB.Authenticate(ctx, key)
	if err != nil || p.UserID != nil || p.Role != "viewer" {
		t.Fatalf("principal %+v, %v", p, err)
	}
}

func TestAccounts(t *testing.T) {
	d := openDB(t)
	ctx := context.Background()
	empty, err := d.IsEmpty(ctx)
	if err != nil || !empty {
		t.Fatalf("IsEmpty on a new database = %v, %v", empty, err)
	}
	f := newFixture(t)
	ctx = context.Background()
	if empty, err := f.DB.IsEmpty(ctx); err != nil || empty {
		t.Fatalf("IsEmpty with accounts = %v, %v", empty, err)
	}
	for _, ref := range []string{f.A.Account, strings.ToUpper(f.A.Account), "acme"} {
		a, err := f.DB.FindAccount(ctx, ref)
		if err != nil || a.ID != f.A.Account || a.Slug != "acme" {
			t.Fatalf("FindAccount(%q) = %+v, %v", ref, a, err)
		}
	}
	_, err = f.DB.FindAccount(ctx, "initech")
	wantCode(t, err, model.ENOTFOUND)

	// A slug shaped like a UUID is still found by slug.
	uuidSlug := "0b6f3e34-7d5c-4b9c-9d1e-2f3a4b5c6d7e"
	f.exec(t, `INSERT INTO accounts (slug, company_name) VALUES ($1, 'odd')`, uuidSlug)
	if a, err := f.DB.FindAccount(ctx, uuidSlug); err != nil || a.Slug != uuidSlug {
		t.Fatalf("uuid-shaped slug: %+v, %v", a, err)
	}

	u, err := f.DB.FirstUserWithRole(ctx, f.A.Account, "admin")
	if err != nil || u.ID != f.A.Admin || u.FirstName != "alice" {
		t.Fatalf("FirstUserWithRole: %+v, %v", u, err)
	}
	f.exec(t, `INSERT INTO users (account_id, email, role, created_at) VALUES ($1, 'late@acme.test', 'admin', $2)`, f.A.Account, hours(50))
	if u, err := f.DB.FirstUserWithRole(ctx, f.A.Account, "admin"); err != nil || u.ID != f.A.Admin {
		t.Fatalf("oldest admin first: %+v, %v", u, err)
	}
	f.exec(t, `DELETE FROM users WHERE account_id = $1 AND role = 'viewer'`, f.B.Account)
	_, err = f.DB.FirstUserWithRole(ctx, f.B.Account, "viewer")
	wantCode(t, err, model.ENOTFOUND)
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
	// One statement per value: Citus refuses now() inside CASE in a write.
	for _, u := range []struct{ set, id string }{
		{`last_used_at = now() - interval '2 minutes'`, ids["stale"]},
		{`last_used_at = now() - interval '10 seconds'`, ids["fresh"]},
		{`last_used_at = now() - interval '2 minutes', revoked_at = now()`, ids["revoked"]},
	} {
		if _, err := f.SQL.Exec(`UPDATE api_tokens SET `+u.set+` WHERE id = $1`, u.id); err != nil {
			t.Fatal(err)
		}
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
