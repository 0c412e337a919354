package httpapi

import (
	"container/list"
	"context"
	"crypto/sha256"
	"log/slog"
	"sync"
	"time"

	"shipgraph/db"
	"shipgraph/model"
)

// touchEvery is how stale last_used_at may get: the database's own
// Authenticate bumps it at most once a minute, and so does the cache.
const touchEvery = time.Minute

// keyCache keeps API key hash → principal for the keys in use, so a request
// with a known key costs no statement. It is only trusted while its
// listener (its subscription to the process' db.Listener, which the live
// hub shares) is listening and was heard from within four pings: every
// change of a key is then announced by the database, and the key is
// forgotten at once. Whenever the listener is or may have been
// deaf — not yet connected, disconnected, reconnected, unanswered pings,
// or the cache fell so far behind that events were dropped for it —
// everything is forgotten and keys are looked up in the database until it
// listens again. Unknown keys are not cached: a key works the moment it is
// created.
type keyCache struct {
	store *db.DB
	log   *slog.Logger
	size  int           // 0: no cache
	stale time.Duration // how long a listener's word holds

	mu      sync.Mutex
	up      bool      // listening since the last flush
	heard   time.Time // when the listener was last known to be up
	gen     uint64    // bumped on every eviction: see put
	lru     *list.List
	byHash  map[[sha256.Size]byte]*list.Element
	byToken map[string]*list.Element

	sub    *db.Subscription
	checks chan struct{} // a floor check is due (FeedTick)
	touch  chan string   // token ids whose last_used_at is due
	cancel context.CancelFunc
	done   sync.WaitGroup
}

type keyEntry struct {
	hash    [sha256.Size]byte
	p       model.Principal
	touched time.Time // last_used_at was fresh then
}

// newKeyCache subscribes to listener, which pings at least every ping (it
// may be nil when size is 0).
func newKeyCache(store *db.DB, listener *db.Listener, log *slog.Logger, size int, ping time.Duration) *keyCache {
	c := &keyCache{store: store, log: log, size: max(size, 0), stale: 4 * ping}
	if c.size == 0 {
		return c
	}
	c.lru = list.New()
	c.byHash = map[[sha256.Size]byte]*list.Element{}
	c.byToken = map[string]*list.Element{}
	c.touch = make(chan string, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.sub = listener.Subscribe(keyEventBuffer, db.FeedToken, db.FeedAlive, db.FeedTick)
	c.checks = make(chan struct{}, 1)
	c.done.Add(3)
	go c.checkLoop(ctx)
	go c.watch(c.sub.Events())
	go c.touchLoop(ctx)
	return c
}

// authenticate resolves key through the cache, or the database on a miss.
func (c *keyCache) authenticate(ctx context.Context, key string) (*model.Principal, error) {
	if c.size == 0 {
		return c.store.Authenticate(ctx, key)
	}
	hash := sha256.Sum256([]byte(key))
	p, gen, ok := c.get(hash, time.Now())
	if ok {
		return p, nil
	}
	p, err := c.store.Authenticate(ctx, key)
	if err != nil {
		return nil, err
	}
	c.put(hash, p, gen, time.Now())
	return p, nil
}

func (c *keyCache) live(now time.Time) bool {
	return c.up && now.Sub(c.heard) < c.stale
}

func (c *keyCache) isLive() bool {
	if c.size == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live(time.Now())
}

// get returns the cached principal of hash, or the generation a lookup in
// the database must hand to put. A hit whose last_used_at is due queues
// the bump (off the request path).
func (c *keyCache) get(hash [sha256.Size]byte, now time.Time) (*model.Principal, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live(now) {
		return nil, c.gen, false
	}
	el, ok := c.byHash[hash]
	if !ok {
		return nil, c.gen, false
	}
	c.lru.MoveToFront(el)
	e := el.Value.(*keyEntry)
	if now.Sub(e.touched) >= touchEvery {
		select {
		case c.touch <- e.p.TokenID:
			e.touched = now
		default: // the queue is full: the next hit tries again
		}
	}
	p := e.p
	return &p, c.gen, true
}

// put caches what the database said about hash, unless anything was
// evicted since get returned gen: the answer may predate a revocation that
// was announced (and found nothing to evict) while the lookup ran.
func (c *keyCache) put(hash [sha256.Size]byte, p *model.Principal, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || !c.live(now) {
		return
	}
	if el, ok := c.byHash[hash]; ok {
		c.remove(el)
	}
	if el, ok := c.byToken[p.TokenID]; ok {
		c.remove(el)
	}
	// Authenticate bumped last_used_at, or found it bumped within the
	// minute.
	el := c.lru.PushFront(&keyEntry{hash: hash, p: *p, touched: now})
	c.byHash[hash] = el
	c.byToken[p.TokenID] = el
	for c.lru.Len() > c.size {
		c.remove(c.lru.Back())
	}
}

func (c *keyCache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*keyEntry)
	delete(c.byHash, e.hash)
	delete(c.byToken, e.p.TokenID)
}

// evict forgets one token; flush forgets all. Both invalidate lookups in
// flight (see put).
func (c *keyCache) evict(tokenID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if el, ok := c.byToken[tokenID]; ok {
		c.remove(el)
	}
}

func (c *keyCache) flush() {
	c.gen++
	c.lru.Init()
	clear(c.byHash)
	clear(c.byToken)
}

// keyEventBuffer is how many key events the cache may fall behind its
// listener (then it is told to forget everything, as after a reconnection).
const keyEventBuffer = 256

// watch applies the listener's reports until its channel closes.
func (c *keyCache) watch(events <-chan db.FeedEvent) {
	defer c.done.Done()
	// A deaf listener is logged once per outage, not per ping or
	// reconnection attempt.
	reported := false
	for e := range events {
		switch e.Kind {
		case db.FeedToken:
			if e.TokenID != "*" {
				c.evict(e.TokenID)
				break
			}
			// Every key may have changed (TRUNCATE).
			c.mu.Lock()
			c.flush()
			c.mu.Unlock()
		case db.FeedListening:
			c.mu.Lock()
			c.flush() // changes made while deaf went unheard
			c.up, c.heard = true, time.Now()
			c.mu.Unlock()
			if reported {
				c.log.Info("API key cache on: listening for key changes again")
			}
			reported = false
		case db.FeedAlive:
			c.mu.Lock()
			if c.up {
				c.heard = time.Now()
			}
			c.mu.Unlock()
		case db.FeedTick:
			select {
			case c.checks <- struct{}{}:
			default:
			}
		case db.FeedDown:
			c.mu.Lock()
			c.flush()
			c.up = false
			c.mu.Unlock()
			if !reported {
				c.log.Warn("API key cache off: cannot listen for key changes; looking every key up", "err", e.Err)
				reported = true
			}
		}
	}
	c.mu.Lock()
	c.flush()
	c.up = false
	c.mu.Unlock()
}

// checkLoop is the floor under the announcements: at every tick it looks
// the cached keys up and forgets those revoked, deleted or changed since
// they were cached (a change made with plain SQL announces nothing).
func (c *keyCache) checkLoop(ctx context.Context) {
	defer c.done.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.checks:
		}
		c.mu.Lock()
		cached := make(map[string]keyEntry, len(c.byToken))
		for id, el := range c.byToken {
			cached[id] = *el.Value.(*keyEntry)
		}
		c.mu.Unlock()
		if len(cached) == 0 {
			continue
		}
		ids := make([]string, 0, len(cached))
		for id := range cached {
			ids = append(ids, id)
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		now, err := c.store.CurrentKeys(cctx, ids)
		cancel()
		if err != nil {
			continue // the next tick tries again
		}
		for id, e := range cached {
			k, ok := now[id]
			if !ok || string(k.Hash) != string(e.hash[:]) || !samePrincipal(k.Principal, e.p) {
				c.evict(id)
			}
		}
	}
}

func samePrincipal(a, b model.Principal) bool {
	return a.TokenID == b.TokenID && a.AccountID == b.AccountID && a.Role == b.Role &&
		(a.UserID == nil) == (b.UserID == nil) && (a.UserID == nil || *a.UserID == *b.UserID)
}

// touchLoop bumps last_used_at of the keys get queued, a batch at a time.
func (c *keyCache) touchLoop(ctx context.Context) {
	defer c.done.Done()
	for {
		var ids []string
		select {
		case id := <-c.touch:
			ids = append(ids, id)
		case <-ctx.Done():
		}
	drain:
		for len(ids) < 1000 {
			select {
			case id := <-c.touch:
				ids = append(ids, id)
			default:
				break drain
			}
		}
		if len(ids) > 0 {
			tctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := c.store.TouchTokens(tctx, ids); err != nil {
				c.log.Warn("recording API key use", "keys", len(ids), "err", err)
			}
			cancel()
		}
		if ctx.Err() != nil && len(c.touch) == 0 {
			return
		}
	}
}

func (c *keyCache) close() {
	if c.cancel == nil {
		return
	}
	c.cancel()
	c.sub.Close()
	c.done.Wait()
}
