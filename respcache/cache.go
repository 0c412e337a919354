package respcache

import (
	"container/list"
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// DefaultBytes is RESPONSE_CACHE_BYTES' default: 64 MiB holds about 1,700
// dashboard answers of 38 KB (hundreds of accounts' screens with a few
// variables each) and bounds what the cache adds to the process' RSS.
const DefaultBytes = 64 << 20

// entryOverhead is what an entry costs besides its body and headers (the
// key, the list element, the maps): counted so that many tiny answers
// cannot exceed the bound.
const entryOverhead = 256

var (
	hits = promauto.NewCounter(prometheus.CounterOpts{
		Name: "shipgraph_response_cache_hits_total",
		Help: "Answers served from the response cache (304s included).",
	})
	misses = promauto.NewCounter(prometheus.CounterOpts{
		Name: "shipgraph_response_cache_misses_total",
		Help: "Cacheable requests the response cache did not hold.",
	})
	invalidations = promauto.NewCounter(prometheus.CounterOpts{
		Name: "shipgraph_response_cache_invalidations_total",
		Help: "Response cache entries dropped because data they read changed.",
	})
	evictions = promauto.NewCounter(prometheus.CounterOpts{
		Name: "shipgraph_response_cache_evictions_total",
		Help: "Response cache entries dropped to stay within RESPONSE_CACHE_BYTES.",
	})
	bytesGauge = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "shipgraph_response_cache_bytes",
		Help: "Bytes held by the response cache (bodies, headers and bookkeeping).",
	})
)

// Entry is one kept answer.
type Entry struct {
	Status int
	Header http.Header // the headers the handler set (outer layers' aside)
	Body   []byte
	ETag   string // strong: quoted, derived from Body
	// Cost is the GraphQL operation's complexity, charged to the cost
	// budget of each request the entry answers.
	Cost int

	key     string
	account string
	tags    uint64
	size    int64
	expires time.Time
	elem    *list.Element
}

// Cache is the bounded LRU of answers. The zero value is not usable: New.
type Cache struct {
	max    int64
	maxAge time.Duration

	mu       sync.Mutex
	size     int64
	lru      *list.List // front: most recently used
	entries  map[string]*Entry
	accounts map[string]map[*Entry]struct{}
	// gen: each account's generation, bumped by its invalidations (from
	// the one counter); all: bumped by Flush. A read keeps its answer
	// only if neither moved since it began.
	counter uint64
	gen     map[string]uint64
	all     uint64

	live atomic.Bool
}

// New returns a cache of at most maxBytes; entries live at most maxAge
// (0: until invalidated or evicted). It serves nothing until SetLive.
func New(maxBytes int64, maxAge time.Duration) *Cache {
	return &Cache{max: maxBytes, maxAge: maxAge, lru: list.New(), entries: map[string]*Entry{},
		accounts: map[string]map[*Entry]struct{}{}, gen: map[string]uint64{}}
}

// SetLive says whether the change log is being followed: while it is not,
// Get finds nothing and Put keeps nothing (the caller flushes when it
// stops following).
func (c *Cache) SetLive(live bool) { c.live.Store(live) }

// Live reports SetLive's last value.
func (c *Cache) Live() bool { return c.live.Load() }

// MaxEntry is the largest body worth keeping: an eighth of the cache.
func (c *Cache) MaxEntry() int64 { return c.max / 8 }

// Gen is the generation of account's data; pass it to Put.
type Gen struct{ acc, all uint64 }

// Gen returns account's generation now: take it before reading.
func (c *Cache) Gen(account string) Gen {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Gen{c.gen[account], c.all}
}

// Get returns the live entry under key, marking it used; nil when there
// is none (a miss is counted by the caller: Miss).
func (c *Cache) Get(key string, now time.Time) *Entry {
	if !c.live.Load() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil {
		return nil
	}
	if !e.expires.IsZero() && now.After(e.expires) {
		c.remove(e)
		return nil
	}
	c.lru.MoveToFront(e.elem)
	hits.Inc()
	return e
}

// Miss counts a cacheable request that Get did not serve.
func (c *Cache) Miss() { misses.Inc() }

// Put keeps e under key for account with tags (what it read), unless
// account's data changed since g was taken, the cache is not live, or e is
// too large. It reports whether e was kept.
func (c *Cache) Put(key, account string, tags uint64, g Gen, e *Entry, now time.Time) bool {
	e.size = int64(len(e.Body)+len(key)) + entryOverhead
	for k, vs := range e.Header {
		e.size += int64(len(k))
		for _, v := range vs {
			e.size += int64(len(v))
		}
	}
	if e.size > c.MaxEntry() || !c.live.Load() {
		return false
	}
	e.key, e.account, e.tags = key, account, tags
	if c.maxAge > 0 {
		e.expires = now.Add(c.maxAge)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen[account] != g.acc || c.all != g.all {
		return false
	}
	if old := c.entries[key]; old != nil {
		c.remove(old)
	}
	e.elem = c.lru.PushFront(e)
	c.entries[key] = e
	set := c.accounts[account]
	if set == nil {
		set = map[*Entry]struct{}{}
		c.accounts[account] = set
	}
	set[e] = struct{}{}
	c.size += e.size
	for c.size > c.max {
		evictions.Inc()
		c.remove(c.lru.Back().Value.(*Entry))
	}
	bytesGauge.Set(float64(c.size))
	return true
}

// remove drops e (under mu).
func (c *Cache) remove(e *Entry) {
	c.lru.Remove(e.elem)
	delete(c.entries, e.key)
	if set := c.accounts[e.account]; set != nil {
		delete(set, e)
		if len(set) == 0 {
			delete(c.accounts, e.account)
		}
	}
	c.size -= e.size
	bytesGauge.Set(float64(c.size))
}

// Invalidate drops account's entries whose tags meet tags, and moves the
// account's generation so that reads under way are not kept. It returns
// how many entries it dropped.
func (c *Cache) Invalidate(account string, tags uint64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counter++
	c.gen[account] = c.counter
	n := 0
	for e := range c.accounts[account] {
		if e.tags&tags != 0 {
			c.remove(e)
			n++
		}
	}
	invalidations.Add(float64(n))
	return n
}

// Flush drops every entry (the change log could not be followed).
func (c *Cache) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all++
	n := len(c.entries)
	c.lru.Init()
	c.entries = map[string]*Entry{}
	c.accounts = map[string]map[*Entry]struct{}{}
	c.size = 0
	bytesGauge.Set(0)
	invalidations.Add(float64(n))
}

// Len is the number of entries.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Size is the bytes held.
func (c *Cache) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// ---------------------------------------------------------------- marks

// Mark is what the layers below say of one request's answer.
type Mark struct {
	query   atomic.Bool
	noStore atomic.Bool
}

// Query reports whether MarkQuery was called.
func (m *Mark) Query() bool { return m.query.Load() }

// NoStore reports whether NoStore was called.
func (m *Mark) NoStore() bool { return m.noStore.Load() }

type markKey struct{}

// WithMark returns ctx carrying m.
func WithMark(ctx context.Context, m *Mark) context.Context {
	return context.WithValue(ctx, markKey{}, m)
}

// MarkQuery says the request is a GraphQL query operation (the transport
// knows it once the document is parsed): a mutation is never kept.
func MarkQuery(ctx context.Context) {
	if m, _ := ctx.Value(markKey{}).(*Mark); m != nil {
		m.query.Store(true)
	}
}

// NoStore says the answer must not be kept: it carries something that is
// not a function of the data (a signed URL that expires, a per-request
// number such as a remaining budget).
func NoStore(ctx context.Context) {
	if m, _ := ctx.Value(markKey{}).(*Mark); m != nil {
		m.noStore.Store(true)
	}
}

// ---------------------------------------------------------------- operations

// OperationScope begins one operation of a long-lived connection (a
// graphql-ws query or mutation) for account: it returns the context the
// operation runs in and a function to call once its answer is computed,
// before it is sent (httpapi drops there what a write touched, as it does
// for an HTTP write before its first byte).
type OperationScope func(ctx context.Context, account string) (context.Context, func())

type scopeKey struct{}

// WithOperationScope returns ctx carrying s.
func WithOperationScope(ctx context.Context, s OperationScope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// BeginOperation runs ctx's OperationScope, if any; the returned function
// is never nil.
func BeginOperation(ctx context.Context, account string) (context.Context, func()) {
	if s, _ := ctx.Value(scopeKey{}).(OperationScope); s != nil {
		return s(ctx, account)
	}
	return ctx, func() {}
}
