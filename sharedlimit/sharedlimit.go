// Package sharedlimit counts the per-key limits of every Shipgraph instance
// in one Redis (REDIS_URL): the request rate limit and the GraphQL cost
// budget (GCRA, redis_rate; AllowN takes a quantity) and the number of
// subscriptions a key has open. The chain (httpapi) and the
// live hub ask it first and fall back to their per-process counts when it
// cannot answer.
//
// Redis is never allowed to slow a request down or fail it: every command
// has a short deadline, no retries, and after a failure Redis is left alone
// for a second (a breaker) while the per-process fallback decides;
// recording a write's position (lsn.go) has a breaker of its own. Each
// fallback decision counts in shipgraph_redis_fallback_total{op}; the
// failure itself is logged at most once every LogEvery.
//
// Subscriptions are members of one sorted set per key, scored by the time
// they expire (Redis server time, so instances' clocks do not matter). An
// instance refreshes the scores of its own members every TTL/3; members of
// an instance that died stop being refreshed and are dropped by the next
// acquisition after TTL. A clean end removes the member at once.
package sharedlimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/redis/go-redis/v9"
)

// FallbackTotal counts the decisions taken on the per-process fallback
// because Redis could not answer in time, by op ("rate" or "subscription").
var FallbackTotal = promauto.NewCounterVec(prometheus.CounterOpts{
	Name: "shipgraph_redis_fallback_total",
	Help: "Limit decisions taken per process because Redis (REDIS_URL) did not answer, by op.",
}, []string{"op"})

var (
	fallbackRate = FallbackTotal.WithLabelValues("rate")
	fallbackSubs = FallbackTotal.WithLabelValues("subscription")
)

// Options tunes the Redis client; zero fields take DefaultOptions'.
type Options struct {
	// Timeout bounds one limit decision in Redis (dial, write, read).
	Timeout time.Duration
	// Breaker is how long Redis is left alone after it failed.
	Breaker time.Duration
	// SubTTL is how long a subscription counts after its instance last
	// refreshed it: an instance that dies leaks its count for this long.
	SubTTL time.Duration
	// LogEvery is the least time between two logged failures.
	LogEvery time.Duration
	// Prefix starts every key this package writes.
	Prefix string
}

// DefaultOptions: 100 ms per decision, a 1 s breaker, subscriptions
// counted 30 s after their instance was last heard from.
var DefaultOptions = Options{Timeout: 100 * time.Millisecond, Breaker: time.Second, SubTTL: 30 * time.Second, LogEvery: 10 * time.Second, Prefix: "shipgraph:"}

// Limits is one instance's connection to the shared counts.
type Limits struct {
	rdb      *redis.Client
	rate     *redis_rate.Limiter
	o        Options
	log      *slog.Logger
	instance string

	downUntil atomic.Int64 // unix nanoseconds; Redis is skipped until then
	down      atomic.Bool  // the last attempt failed (for the "back" log line)
	lastLog   atomic.Int64 // unix nanoseconds of the last logged failure

	// recordUntil is the breaker of recording positions (advance), opened
	// only by their own failure: a slow rate-limit decision leaves Redis
	// alone for its fallback, but a write's position skipped lets another
	// instance answer from before it (lsn.go).
	recordUntil atomic.Int64

	mu   sync.Mutex
	subs map[string]string // member → its key's set, this instance's live subscriptions
	seq  uint64

	stop      chan struct{}
	done      chan struct{}
	stopOnce  sync.Once
	closeOnce sync.Once
}

// Open connects to the Redis at url (redis://[:password@]host:port[/db],
// or rediss:// for TLS) with DefaultOptions. It does not wait for Redis:
// an unreachable Redis is a fallback, not a failure to start.
func Open(url string, log *slog.Logger) (*Limits, error) {
	return OpenWith(url, DefaultOptions, log)
}

// OpenWith is Open with options.
func OpenWith(url string, o Options, log *slog.Logger) (*Limits, error) {
	d := DefaultOptions
	if o.Timeout <= 0 {
		o.Timeout = d.Timeout
	}
	if o.Breaker <= 0 {
		o.Breaker = d.Breaker
	}
	if o.SubTTL <= 0 {
		o.SubTTL = d.SubTTL
	}
	if o.LogEvery <= 0 {
		o.LogEvery = d.LogEvery
	}
	if o.Prefix == "" {
		o.Prefix = d.Prefix
	}
	ro, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	ro.DialTimeout = o.Timeout
	ro.ReadTimeout = o.Timeout
	ro.WriteTimeout = o.Timeout
	ro.PoolTimeout = o.Timeout
	ro.ContextTimeoutEnabled = true
	ro.MaxRetries = -1 // one try: the fallback is the retry
	ro.DialerRetries = 1
	ro.DisableIdentity = true
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// go-redis logs every failed dial to stderr: a line per request while
	// Redis is down. This package logs its failures itself, rate-limited.
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	rdb := redis.NewClient(ro)
	l := &Limits{
		rdb: rdb, rate: redis_rate.NewLimiter(rdb), o: o, log: log, instance: hex.EncodeToString(b),
		subs: map[string]string{}, stop: make(chan struct{}), done: make(chan struct{}),
	}
	go l.heartbeat()
	return l, nil
}

var quietOnce sync.Once

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// Close stops refreshing this instance's subscriptions, removes them and
// closes the connection.
func (l *Limits) Close() { l.closeOnce.Do(l.close) }

// halt stops the heartbeat.
func (l *Limits) halt() {
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
}

func (l *Limits) close() {
	l.halt()
	l.mu.Lock()
	byKey := map[string][]any{}
	for m, k := range l.subs {
		byKey[k] = append(byKey[k], m)
	}
	l.subs = map[string]string{}
	l.mu.Unlock()
	if len(byKey) > 0 && l.usable() {
		ctx, cancel := context.WithTimeout(context.Background(), l.o.Timeout)
		pipe := l.rdb.Pipeline()
		for k, ms := range byKey {
			pipe.ZRem(ctx, k, ms...)
		}
		_, _ = pipe.Exec(ctx)
		cancel()
	}
	_ = l.rdb.Close()
}

// usable reports whether Redis is worth asking now (the breaker is closed).
func (l *Limits) usable() bool { return time.Now().UnixNano() >= l.downUntil.Load() }

// failed opens the breaker and logs, at most once every LogEvery.
func (l *Limits) failed(op string, err error) {
	now := time.Now()
	l.downUntil.Store(now.Add(l.o.Breaker).UnixNano())
	l.down.Store(true)
	last := l.lastLog.Load()
	if now.UnixNano()-last >= int64(l.o.LogEvery) && l.lastLog.CompareAndSwap(last, now.UnixNano()) {
		l.log.Warn("redis unreachable: limits are counted per process until it answers", "op", op, "err", err)
	}
}

// ok notes a success (logging the recovery once).
func (l *Limits) ok() {
	if l.down.Load() && l.down.CompareAndSwap(true, false) {
		l.log.Info("redis answers again: limits are shared")
	}
}

// Allow takes one request of key from its shared GCRA bucket (perMinute a
// minute, bursts of burst). It returns how long to wait when refused;
// shared is false when Redis could not answer: the caller decides on its
// own count then.
func (l *Limits) Allow(ctx context.Context, key string, perMinute, burst int) (retryAfter time.Duration, shared bool) {
	t, shared := l.AllowN(ctx, key, 1, perMinute, burst)
	return t.RetryAfter, shared
}

// Taken is the answer of AllowN: RetryAfter is 0 when the quantity was
// taken, else how long until the bucket holds it; Remaining is what the
// bucket holds after the decision.
type Taken struct {
	RetryAfter time.Duration
	Remaining  int
}

// AllowN takes n units of key from its shared GCRA bucket (perMinute
// units a minute, at most burst held), all or nothing: the GraphQL cost
// budget charges an operation's complexity this way. n must not exceed
// burst (no wait would ever be enough: the caller refuses it itself).
// shared is false when Redis could not answer, as for Allow.
func (l *Limits) AllowN(ctx context.Context, key string, n, perMinute, burst int) (t Taken, shared bool) {
	if !l.usable() {
		fallbackRate.Inc()
		return Taken{}, false
	}
	rctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	defer cancel()
	res, err := l.rate.AllowN(rctx, l.o.Prefix+key, redis_rate.Limit{Rate: perMinute, Period: time.Minute, Burst: burst}, n)
	if err != nil {
		if ctx.Err() != nil {
			// The request went away; not Redis' fault.
			return Taken{}, false
		}
		l.failed("rate", err)
		fallbackRate.Inc()
		return Taken{}, false
	}
	l.ok()
	t.Remaining = max(res.Remaining, 0)
	if res.Allowed < n {
		t.RetryAfter = max(res.RetryAfter, time.Millisecond)
		// A refusal reports 0 remaining; what the bucket holds is
		// burst less what it still owes (ResetAfter, in emission
		// intervals).
		every := float64(time.Minute) / float64(perMinute)
		t.Remaining = max(int(float64(burst)-float64(res.ResetAfter)/every), 0)
	}
	return t, true
}

// acquire adds a member to the key's set unless it holds max live ones.
var acquire = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[3])
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
`)

// refresh sets the expiry of members (re-adding them if Redis lost them).
var refresh = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
`)

// Acquire counts one more subscription of key against max over every
// instance. It returns whether it may open and, when it counted it in
// Redis, the release to call when it ends. When Redis cannot answer it
// allows (the hub's per-process count has decided already) and release
// is a no-op.
func (l *Limits) Acquire(key string, max int) (release func(), allowed bool) {
	if !l.usable() {
		fallbackSubs.Inc()
		return func() {}, true
	}
	set := l.o.Prefix + "subs:" + key
	l.mu.Lock()
	l.seq++
	member := l.instance + ":" + strconv.FormatUint(l.seq, 36)
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), l.o.Timeout)
	defer cancel()
	n, err := acquire.Run(ctx, l.rdb, []string{set}, max, l.o.SubTTL.Milliseconds(), member).Int()
	if err != nil {
		l.failed("subscription", err)
		fallbackSubs.Inc()
		return func() {}, true
	}
	l.ok()
	if n == 0 {
		return nil, false
	}
	l.mu.Lock()
	l.subs[member] = set
	l.mu.Unlock()
	return func() { l.release(set, member) }, true
}

func (l *Limits) release(set, member string) {
	l.mu.Lock()
	_, live := l.subs[member]
	delete(l.subs, member)
	l.mu.Unlock()
	if !live || !l.usable() {
		return // the member expires on its own
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.o.Timeout)
	defer cancel()
	if err := l.rdb.ZRem(ctx, set, member).Err(); err != nil {
		l.failed("subscription", err)
	}
}

// heartbeat refreshes this instance's members every SubTTL/3.
func (l *Limits) heartbeat() {
	defer close(l.done)
	t := time.NewTicker(l.o.SubTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.refreshAll()
		}
	}
}

func (l *Limits) refreshAll() {
	l.mu.Lock()
	byKey := map[string][]any{}
	for m, k := range l.subs {
		byKey[k] = append(byKey[k], m)
	}
	l.mu.Unlock()
	if len(byKey) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*l.o.Timeout)
	defer cancel()
	pipe := l.rdb.Pipeline()
	for k, ms := range byKey {
		refresh.Eval(ctx, pipe, []string{k}, append([]any{l.o.SubTTL.Milliseconds()}, ms...)...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		l.failed("subscription", err)
		return
	}
	l.ok()
}
