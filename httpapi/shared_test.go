package httpapi_test

import (
	"bufio"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"shipgraph/app"
	"shipgraph/resolve"
	"shipgraph/sharedlimit"
	"shipgraph/testkit"
	"shipgraph/testkit/redistest"
)

// twoInstances starts two chains (stores of their own) over one seeded
// database, both counting their limits in the Redis at redisURL, as two
// servers with the same REDIS_URL would.
// Their shared limits log to sharedLog.
// sharedInstances is twoInstances over a Redis of its own, with the
// default chain but its rate limit (a minute's requests) and live
// subscriptions a key (0: the default).
func sharedInstances(t *testing.T, rateLimit, maxPerKey int) (rs *redistest.Server, a, b *instance, keys map[string]string, sharedLog *testkit.Log) {
	t.Helper()
	rs = redistest.Start(t)
	cfg := testkit.Defaults()
	cfg.RateLimit = rateLimit
	if maxPerKey > 0 {
		cfg.Live.MaxPerKey = maxPerKey
	}
	a, b, keys, sharedLog = twoInstances(t, rs.URL, cfg)
	return rs, a, b, keys, sharedLog
}

func twoInstances(t *testing.T, redisURL string, cfg app.ChainConfig) (a, b *instance, keys map[string]string, sharedLog *testkit.Log) {
	t.Helper()
	url, keys := seeded(t)
	sharedLog = &testkit.Log{}
	for _, in := range []**instance{&a, &b} {
		shared, err := sharedlimit.Open(redisURL, slog.New(slog.NewJSONHandler(sharedLog, nil)))
		if err != nil {
			t.Fatal(err)
		}
		c := cfg
		c.Shared = shared
		*in = start(t, url, &c)
		t.Cleanup(shared.Close) // after the chain (cleanups run last first)
	}
	return a, b, keys, sharedLog
}

const cheap = "/v2/shipments?page[size]=1"

// One key's rate limit is counted once over both instances: its burst is
// spent by requests alternating between them (per process it would be
// twice that), then both answer 429 with Retry-After.
func TestSharedRateLimit(t *testing.T) {
	_, a, b, keys, _ := sharedInstances(t, 60, 0) // bursts of 6, then one a second
	key := keys["acme/admin"]
	allowed := 0
	start := time.Now()
	for i := range 12 {
		in := a
		if i%2 == 1 {
			in = b
		}
		r := in.do(t, http.MethodGet, cheap, key, "")
		switch r.status {
		case http.StatusOK:
			allowed++
		case http.StatusTooManyRequests:
			if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 1 {
				t.Fatalf("429 with Retry-After %q", r.header.Get("Retry-After"))
			}
		default:
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	// One more token a second may have come.
	if most := 6 + int(time.Since(start)/time.Second); allowed < 6 || allowed > most {
		t.Fatalf("%d of 12 requests allowed over two instances, want 6 (at most %d)", allowed, most)
	}
	for name, in := range map[string]*instance{"a": a, "b": b} {
		if r := in.do(t, http.MethodGet, cheap, key, ""); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
			t.Errorf("instance %s after the burst: %d, Retry-After %q", name, r.status, r.header.Get("Retry-After"))
		}
	}
	// Another key has a bucket of its own.
	if r := b.do(t, http.MethodGet, cheap, keys["acme/member"], ""); r.status != http.StatusOK {
		t.Errorf("another key: %d", r.status)
	}
}

// The subscription limit holds over both instances, and a subscription
// that ends frees its place for either.
func TestSharedSubscriptionLimit(t *testing.T) {
	rs, a, b, keys, _ := sharedInstances(t, 0, 2)
	key := keys["acme/member"]
	ca, err := testkit.DialWS(t, a.url, auth(key), nil)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := testkit.DialWS(t, b.url, auth(key), nil)
	if err != nil {
		t.Fatal(err)
	}
	ca.Subscribe("1", `subscription { changes { operation } }`, nil)
	testkit.WaitFor(t, 30*time.Second, "a's subscription", func() bool { return a.h.Subscriptions() == 1 })
	cb.Subscribe("2", `subscription { changes { operation } }`, nil)
	testkit.WaitFor(t, 30*time.Second, "b's subscription", func() bool { return b.h.Subscriptions() == 1 })
	refused := func(c *testkit.WS, id string) {
		t.Helper()
		c.Subscribe(id, `subscription { changes { operation } }`, nil)
		m := c.Next(30 * time.Second)
		if m.Type != "next" || m.ID != id || !strings.Contains(string(m.Payload), "RATE_LIMITED") {
			t.Fatalf("third subscription (%s): %s %s %s", id, m.Type, m.ID, m.Payload)
		}
		if m := c.Next(30 * time.Second); m.Type != "complete" || m.ID != id {
			t.Fatalf("after the refusal: %s %s", m.Type, m.ID)
		}
	}
	refused(ca, "3")
	refused(cb, "4")
	// Another key is not counted with this one.
	other, err := testkit.DialWS(t, b.url, auth(keys["acme/viewer"]), nil)
	if err != nil {
		t.Fatal(err)
	}
	other.Subscribe("x", `subscription { changes { operation } }`, nil)
	testkit.WaitFor(t, 30*time.Second, "another key's subscription", func() bool { return b.h.Subscriptions() == 2 })

	// The key's count in Redis: the set holding two members.
	var set string
	for k, n := range rs.SetSizes(t, "shipgraph:subs:*") {
		if n == 2 {
			set = k
		}
	}
	if set == "" {
		t.Fatalf("no set of two subscriptions in Redis: %v", rs.SetSizes(t, "shipgraph:subs:*"))
	}
	// a's ends: b may open one more. The hub stops counting a's
	// subscription before it releases its place in Redis, so waiting for
	// a's count alone raced the release: wait for the release itself.
	if err := ca.Close(1000, "done"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "a's subscription to end", func() bool { return a.h.Subscriptions() == 0 })
	testkit.WaitFor(t, 30*time.Second, "a's place released in Redis", func() bool { return rs.SetSizes(t, set)[set] == 1 })
	cb.Subscribe("5", `subscription { changes { operation } }`, nil)
	testkit.WaitFor(t, 30*time.Second, "b's second subscription", func() bool { return b.h.Subscriptions() == 3 })
	cb.None(200 * time.Millisecond)
}

// Redis killed (and before that hung): both instances serve on their own
// per-process limits, never a 5xx nor a stall, and say so on /metrics.
func TestSharedLimitsRedisDown(t *testing.T) {
	rs, a, b, keys, sharedLog := sharedInstances(t, 60, 1)
	key := keys["acme/admin"]
	if r := a.do(t, http.MethodGet, cheap, key, ""); r.status != http.StatusOK {
		t.Fatalf("with Redis: %d %s", r.status, r.body)
	}
	before := fallbacks(t, a, "rate") + fallbacks(t, b, "rate")

	statuses := func(what string, n int) map[int]int {
		t.Helper()
		got := map[int]int{}
		for i := range n {
			in := a
			if i%2 == 1 {
				in = b
			}
			start := time.Now()
			r := in.do(t, http.MethodGet, cheap, key, "")
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("%s: request %d took %s", what, i, d)
			}
			if r.status != http.StatusOK && r.status != http.StatusTooManyRequests {
				t.Fatalf("%s: request %d: %d %s", what, i, r.status, r.body)
			}
			got[r.status]++
		}
		return got
	}
	// A hung Redis: each decision waits at most its timeout, then the
	// breaker skips Redis.
	rs.Pause()
	hungAt := time.Now()
	statuses("hung", 4)
	rs.Kill()
	// Per process: 6 each (the buckets began full; the hung requests took
	// 2 of each), so 16 alternating requests let more than one shared
	// burst (6) through, and no more than both buckets and what refilled
	// meanwhile (one a second each): not the clock racing 16 requests
	// against a 1/s refill, a count bounded by the time they took.
	got := statuses("killed", 16)
	most := 12 + 2*int(time.Since(hungAt)/time.Second+1)
	if got[http.StatusOK] <= 6 || got[http.StatusOK] > most {
		t.Errorf("on the per-process fallback: %v, want over 6 allowed and at most %d", got, most)
	}
	if time.Since(hungAt) < 3*time.Second && got[http.StatusTooManyRequests] == 0 {
		t.Errorf("on the per-process fallback: %v in %v, want some 429", got, time.Since(hungAt))
	}
	if after := fallbacks(t, a, "rate") + fallbacks(t, b, "rate"); after < before+16 {
		t.Errorf("shipgraph_redis_fallback_total{op=rate}: %v → %v, want +20", before, after)
	}
	// Logged once per instance (at most once every 10 s each), not per
	// request.
	if n := strings.Count(sharedLog.String(), "redis unreachable"); n < 1 || n > 2 {
		t.Errorf("the fallback logged %d times, want once per instance:\n%s", n, sharedLog.String())
	}

	// Subscriptions: the per-process limit holds.
	c, err := testkit.DialWS(t, a.url, auth(keys["acme/member"]), nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Subscribe("1", `subscription { changes { operation } }`, nil)
	testkit.WaitFor(t, 30*time.Second, "a subscription on the fallback", func() bool { return a.h.Subscriptions() == 1 })
	c.Subscribe("2", `subscription { changes { operation } }`, nil)
	if m := c.Next(30 * time.Second); m.ID != "2" || !strings.Contains(string(m.Payload), "RATE_LIMITED") {
		t.Fatalf("second subscription on the fallback: %s %s %s", m.Type, m.ID, m.Payload)
	}
	if fallbacks(t, a, "subscription") < 1 {
		t.Error("shipgraph_redis_fallback_total{op=subscription} did not count")
	}
}

// fallbacks scrapes shipgraph_redis_fallback_total{op} from in's /metrics.
func fallbacks(t *testing.T, in *instance, op string) float64 {
	t.Helper()
	res, err := http.Get(in.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	prefix := `shipgraph_redis_fallback_total{op="` + op + `"} `
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	return 0
}

// POST /v2/webhooks/trigger's limit (resolve.TriggerBurst at once, then
// one every resolve.TriggerEvery) is one key's over both instances with
// REDIS_URL: its burst is spent by triggers alternating between them, then
// both answer 429 with Retry-After, and another key has its own. Without
// Redis each process counts its own (twice the burst over two).
func TestSharedWebhookTriggerLimit(t *testing.T) {
	var got atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	body := `{"url": "` + receiver.URL + `/hook", "event": "tracking_request.succeeded"}`
	cfg := testkit.Defaults()
	cfg.RateLimit = 0
	cfg.Resolver.Webhooks.AllowPrivate = true // the receiver is on 127.0.0.1
	trigger := func(in *instance, key string) *reply {
		t.Helper()
		return in.do(t, http.MethodPost, "/v2/webhooks/trigger", key, body, "Content-Type", "application/vnd.api+json")
	}
	// spend triggers alternately on a and b and returns how many were
	// allowed before the first refusal, checking the refusal.
	spend := func(a, b *instance, key string) int {
		t.Helper()
		for i := range 2*resolve.TriggerBurst + 1 {
			in := a
			if i%2 == 1 {
				in = b
			}
			r := trigger(in, key)
			switch r.status {
			case http.StatusOK:
				continue
			case http.StatusTooManyRequests:
				if ra, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || ra < 1 || ra > int(resolve.TriggerEvery/time.Second)+1 {
					t.Errorf("trigger %d refused with Retry-After %q", i, r.header.Get("Retry-After"))
				}
				// The other instance refuses as well.
				if o := a; in == a {
					o = b
					if r := trigger(o, key); r.status != http.StatusTooManyRequests {
						t.Errorf("the other instance after the refusal: %d %s", r.status, r.body)
					}
				} else if r := trigger(o, key); r.status != http.StatusTooManyRequests {
					t.Errorf("the other instance after the refusal: %d %s", r.status, r.body)
				}
				return i
			default:
				t.Fatalf("trigger %d: %d %s", i, r.status, r.body)
			}
		}
		return 2*resolve.TriggerBurst + 1
	}

	t.Run("Redis", func(t *testing.T) {
		rs := redistest.Start(t)
		a, b, keys, _ := twoInstances(t, rs.URL, cfg)
		before := got.Load()
		if n := spend(a, b, keys["acme/admin"]); n != resolve.TriggerBurst {
			t.Errorf("over two instances sharing Redis, %d test deliveries before a refusal, want %d", n, resolve.TriggerBurst)
		}
		if d := got.Load() - before; d != int64(resolve.TriggerBurst) {
			t.Errorf("the receiver got %d deliveries, want %d", d, resolve.TriggerBurst)
		}
		if r := trigger(b, keys["globex/admin"]); r.status != http.StatusOK {
			t.Errorf("another key: %d %s", r.status, r.body)
		}
	})
	t.Run("PerProcess", func(t *testing.T) {
		url, keys := seeded(t)
		c := cfg
		a, b := start(t, url, &c), start(t, url, &c)
		// Both buckets are full: a, b, a, b, a, b are all allowed.
		if n := spend(a, b, keys["acme/admin"]); n != 2*resolve.TriggerBurst {
			t.Errorf("two processes without Redis: %d test deliveries before a refusal, want %d", n, 2*resolve.TriggerBurst)
		}
	})
}
