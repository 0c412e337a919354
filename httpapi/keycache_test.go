package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

// TestKeyCacheStatements: a request with a key the chain already knows
// costs one statement less than the first one — the key lookup — as the
// access log and shipgraph_db_queries_total both count it; without the
// cache both cost the same. (Not parallel: it reads the process-wide
// counter.)
func TestKeyCacheStatements(t *testing.T) {
	url, keys := seeded(t)
	k := keys["acme/admin"]
	const query = `{ viewer { role } shipments(first: 5) { totalCount nodes { id containers { number } } } }`
	for _, tc := range []struct {
		name  string
		cache int
		saved int
	}{{"cached", testkit.Defaults().KeyCache, 1}, {"uncached", 0, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			c := testkit.Defaults()
			c.KeyCache = tc.cache
			in := start(t, url, &c)
			var logged, scraped []int
			for range 3 {
				before := queriesTotal(t)
				r := in.gql(t, k, query)
				if r.status != http.StatusOK || !json200(r) {
					t.Fatalf("%d %s", r.status, r.body)
				}
				logged = append(logged, r.statements)
				scraped = append(scraped, int(queriesTotal(t)-before))
			}
			t.Logf("statements per request, access log: %v; /metrics: %v", logged, scraped)
			for i := range logged {
				if logged[i] != scraped[i] {
					t.Errorf("request %d: access log %d statements, /metrics %d", i, logged[i], scraped[i])
				}
			}
			if logged[0]-logged[1] != tc.saved || logged[1] != logged[2] {
				t.Errorf("statements %v: want the first to cost %d more than the next ones", logged, tc.saved)
			}
		})
	}
}

func json200(r *reply) bool {
	return r.header.Get("Content-Type") == "application/json; charset=utf-8" && !bytes.Contains(r.body, []byte(`"errors"`))
}

// TestRevocationReachesEveryInstance: two servers on one database, each
// with its own key cache and listener. A key works on both (cached), is
// revoked — through one server's store, or by plain SQL, or deleted — and
// both refuse it (the push, waited for; its latency logged). A key created after an unknown one was
// refused works at once (misses are not cached).
func TestRevocationReachesEveryInstance(t *testing.T) {
	url, _ := seeded(t)
	a, b := start(t, url, nil), start(t, url, nil)
	ctx := context.Background()
	var acme string
	if err := a.store.SQL().QueryRowContext(ctx, `SELECT id FROM accounts WHERE slug = 'acme'`).Scan(&acme); err != nil {
		t.Fatal(err)
	}
	// cached checks that k works on both servers and that each answers it
	// from its cache.
	cached := func(t *testing.T, k string) {
		t.Helper()
		for name, in := range map[string]*instance{"a": a, "b": b} {
			if !in.authorized(t, k) {
				t.Fatalf("server %s refuses a valid key", name)
			}
			first := in.do(t, http.MethodGet, "/v2/shipments?page[size]=1", k, "")
			again := in.do(t, http.MethodGet, "/v2/shipments?page[size]=1", k, "")
			if first.status != 200 || again.status != 200 || first.statements != again.statements {
				t.Fatalf("server %s: %d then %d, %d then %d statements; want the key cached", name, first.status, again.status, first.statements, again.statements)
			}
		}
	}
	// The cache keeps a key until told otherwise (it has no expiry, and
	// TestReconnectFlushesKeyCache's control shows a silently revoked key
	// served from it): a refusal at all proves the push. So the test waits
	// for the refusal itself; how long it took is logged, not raced
	// against a second of round trips under load.
	refusedEverywhere := func(t *testing.T, how string, k string) {
		t.Helper()
		start := time.Now()
		for name, in := range map[string]*instance{"a": a, "b": b} {
			testkit.WaitFor(t, 15*time.Second, "server "+name+" to refuse the key", func() bool {
				return !in.authorized(t, k)
			})
		}
		t.Logf("%s: refused by both servers %v after the commit", how, time.Since(start))
		// And it stays refused (nothing cached it back).
		for name, in := range map[string]*instance{"a": a, "b": b} {
			if in.authorized(t, k) {
				t.Errorf("%s: server %s accepts the key again", how, name)
			}
		}
	}

	t.Run("RevokeToken", func(t *testing.T) {
		k, id := pg.NewToken(t, a.store, acme, "member")
		cached(t, k)
		if err := a.store.RevokeToken(ctx, acme, id); err != nil {
			t.Fatal(err)
		}
		refusedEverywhere(t, "RevokeToken through server a", k)
	})
	t.Run("PlainSQL", func(t *testing.T) {
		k, id := pg.NewToken(t, a.store, acme, "member")
		cached(t, k)
		admin := open(t, url) // neither server's
		if _, err := admin.SQL().ExecContext(ctx, `UPDATE api_tokens SET revoked_at = now() WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		refusedEverywhere(t, "UPDATE by plain SQL", k)
	})
	t.Run("Delete", func(t *testing.T) {
		k, id := pg.NewToken(t, a.store, acme, "member")
		cached(t, k)
		if _, err := b.store.SQL().ExecContext(ctx, `DELETE FROM api_tokens WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		refusedEverywhere(t, "DELETE", k)
	})
	t.Run("RoleChange", func(t *testing.T) {
		k, id := pg.NewToken(t, a.store, acme, "member")
		cached(t, k)
		if _, err := b.store.SQL().ExecContext(ctx, `UPDATE api_tokens SET role = 'viewer' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		for name, in := range map[string]*instance{"a": a, "b": b} {
			testkit.WaitFor(t, 30*time.Second, "server "+name+" to see the new role", func() bool {
				r := in.gql(t, k, `{ viewer { role } }`)
				return bytes.Contains(r.body, []byte(`"VIEWER"`))
			})
		}
	})
	t.Run("UnknownThenCreated", func(t *testing.T) {
		k, err := db.NewAPIKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if a.authorized(t, k) || b.authorized(t, k) {
			t.Fatal("an unknown key is accepted")
		}
		if _, err := a.store.CreateToken(ctx, db.TokenInput{AccountID: acme, Role: "member", Key: k}); err != nil {
			t.Fatal(err)
		}
		if !a.authorized(t, k) || !b.authorized(t, k) {
			t.Fatal("a key refused while unknown is still refused once created")
		}
	})
}

// TestReconnectFlushesKeyCache: a revocation made with plain SQL is
// announced by nobody (the server announces its own; a trigger's NOTIFY
// cannot run on a distributed database), so the cache's floor check finds
// it: the key is refused within about db.WakeFloor. Then the listener's
// connection is killed: after its reconnection the revoked key stays
// refused and a valid one is served.
func TestReconnectFlushesKeyCache(t *testing.T) {
	url, keys := seeded(t)
	in := start(t, url, nil)
	k := keys["globex/member"]
	ctx := context.Background()
	for range 2 { // looked up, then cached
		if !in.authorized(t, k) {
			t.Fatal("valid key refused")
		}
	}
	admin := open(t, url)
	if _, err := admin.SQL().ExecContext(ctx, `UPDATE api_tokens SET revoked_at = now() WHERE prefix = left($1, 10)`, k); err != nil {
		t.Fatal(err)
	}
	took := testkit.WaitFor(t, 10*time.Second, "the silently revoked key to be refused", func() bool {
		return !in.authorized(t, k)
	})
	t.Logf("refused %v after a revocation with plain SQL", took)
	// The listener's connection (the process' one, shared with the live
	// hub) is the one that runs nothing but LISTEN and empty pings, under
	// its name.
	var killed int
	if err := admin.SQL().QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND (query LIKE 'LISTEN%' OR query = '')
		AND application_name = '`+db.FeedApplicationName+`'`).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("terminated %d listener connections, want 1", killed)
	}
	testkit.WaitFor(t, 10*time.Second, "the cache to be live again", in.h.KeyCacheLive)
	if in.authorized(t, k) {
		t.Error("the revoked key is accepted again after the reconnection")
	}
	if !in.authorized(t, keys["globex/admin"]) {
		t.Error("a valid key is refused after the reconnection")
	}
}

// TestOneListeningConnection: the chain (httpapi.New, as app/serve.go builds
// it) holds exactly one listening connection to the database while its
// key cache is live and a subscription is open, and that one connection
// serves both: a key revoked by plain SQL is evicted from the cache (the
// cache stays live, so nothing else forgot it) and ends the key's
// subscription.
func TestOneListeningConnection(t *testing.T) {
	d := newLiveDB(t)
	in := start(t, d.url, nil)
	var acme string
	if err := d.sql.QueryRow(`SELECT id FROM accounts WHERE slug = 'acme'`).Scan(&acme); err != nil {
		t.Fatal(err)
	}
	k, tokID := pg.NewToken(t, in.store, acme, "admin")
	// A new key: looked up once, then answered from the cache.
	first := in.do(t, http.MethodGet, "/v2/shipments?page[size]=1", k, "")
	again := in.do(t, http.MethodGet, "/v2/shipments?page[size]=1", k, "")
	if first.status != http.StatusOK || again.status != http.StatusOK || first.statements-again.statements != 1 {
		t.Fatalf("%d then %d, %d then %d statements: want the key cached after its first use", first.status, again.status, first.statements, again.statements)
	}
	c := in.ws(t, k)
	c.Subscribe("1", containerSub, nil)
	testkit.WaitFor(t, 30*time.Second, "a subscription", func() bool { return in.h.Subscriptions() == 1 })
	if !in.h.KeyCacheLive() {
		t.Fatal("the key cache is not live")
	}

	// Every connection that ran nothing but LISTEN and empty pings, and
	// every connection under the listener's name: one and the same.
	var listening, named int
	if err := d.sql.QueryRow(`SELECT count(*) FILTER (WHERE query ILIKE 'LISTEN%' OR query = ''),
		count(*) FILTER (WHERE application_name = $1)
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
		db.FeedApplicationName).Scan(&listening, &named); err != nil {
		t.Fatal(err)
	}
	if listening != 1 || named != 1 {
		t.Fatalf("%d listening connections, %d named %s; want one", listening, named, db.FeedApplicationName)
	}
	var both int
	if err := d.sql.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
		AND application_name = $1 AND (query ILIKE 'LISTEN%' OR query = '')`, db.FeedApplicationName).Scan(&both); err != nil || both != 1 {
		t.Fatalf("the listening connection is not the named one (%d, %v)", both, err)
	}

	d.exec(t, `UPDATE api_tokens SET revoked_at = now() WHERE id = $1`, tokID)
	start := time.Now()
	code, reason := c.Closed(30 * time.Second)
	if code != 4403 || !strings.Contains(reason, "revoked") {
		t.Fatalf("subscription after revocation: closed %d %q, want 4403 revoked", code, reason)
	}
	testkit.WaitFor(t, 30*time.Second, "the revoked key to be refused", func() bool { return !in.authorized(t, k) })
	t.Logf("subscription ended and key refused %v after the commit", time.Since(start).Round(time.Millisecond))
	if !in.h.KeyCacheLive() {
		t.Error("the key cache went off: the key was not evicted by the notification")
	}
	testkit.WaitFor(t, 30*time.Second, "no subscriptions", func() bool { return in.h.Subscriptions() == 0 })
}
