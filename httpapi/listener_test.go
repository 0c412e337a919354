package httpapi_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/testkit"
)

// TestOneListeningConnection: the chain (httpapi.New, as app/serve.go builds
// it) holds exactly one listening connection to the database while its
// key cache is live and a subscription is open, and that one connection
// serves both: a key revoked by plain SQL is evicted from the cache (the
// cache stays live, so nothing else forgot it) and ends the key's
// subscription.
func TestOneListeningConnection(t *testing.T) {
	d := newLiveDB(t)
	in := start(t, d.url, nil)
	ctx := context.Background()
	var acme string
	if err := d.sql.QueryRow(`SELECT id FROM accounts WHERE slug = 'acme'`).Scan(&acme); err != nil {
		t.Fatal(err)
	}
	k, err := db.NewAPIKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := in.store.CreateToken(ctx, db.TokenInput{AccountID: acme, Role: "admin", Key: k})
	if err != nil {
		t.Fatal(err)
	}
	// A new key: looked up once, then answered from the cache.
	first := in.do(t, http.MethodGet, "/v2/shipments?page[size]=1", k, "")
	again := in.do(t, http.MethodGet, "/v2/shipments?page[size]=1", k, "")
	if first.status != http.StatusOK || again.status != http.StatusOK || first.statements-again.statements != 1 {
		t.Fatalf("%d then %d, %d then %d statements: want the key cached after its first use", first.status, again.status, first.statements, again.statements)
	}
	c := in.ws(t, k)
	c.Subscribe("1", containerSub, nil)
	testkit.WaitFor(t, 5*time.Second, "a subscription", func() bool { return in.h.Subscriptions() == 1 })
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

	d.exec(t, `UPDATE api_tokens SET revoked_at = now() WHERE id = $1`, tok.ID)
	start := time.Now()
	code, reason := c.Closed(5 * time.Second)
	if code != 4403 || !strings.Contains(reason, "revoked") {
		t.Fatalf("subscription after revocation: closed %d %q, want 4403 revoked", code, reason)
	}
	testkit.WaitFor(t, time.Second, "the revoked key to be refused", func() bool { return !in.authorized(t, k) })
	t.Logf("subscription ended and key refused %v after the commit", time.Since(start).Round(time.Millisecond))
	if !in.h.KeyCacheLive() {
		t.Error("the key cache went off: the key was not evicted by the notification")
	}
	testkit.WaitFor(t, 5*time.Second, "no subscriptions", func() bool { return in.h.Subscriptions() == 0 })
}
