package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeebo/xxh3"

	"shipgraph/db"
	"shipgraph/graph/gqlhttp"
	"shipgraph/model"
	"shipgraph/respcache"
)

// The response cache: answers of GraphQL
// queries and /v2 GETs kept until the data they read changes, and their
// strong ETags.
//
// A request is a candidate when it is a GET of /v2 or of /graphql (with a
// query string), or a POST of /graphql with a JSON body; streams
// (WebSocket, SSE, multipart/mixed) and uploads never are. Its key is the
// SHA-256 of the account, role and user of the key, the method, path,
// query string and body, and the headers that change the bytes (Accept,
// Content-Type, Host and the forwarded scheme/host of absolute links).
//
// A candidate's answer is buffered; it is cacheable when it is a 200, a
// GraphQL query (not a mutation: the transport marks queries) with no
// errors, carries no Set-Cookie, was not marked NoStore (signed URLs), and
// its statements wrote nothing and read only tables whose changes the log
// records (db.Touched). A cacheable answer gets a strong ETag (a hash of
// its bytes) and Cache-Control: private, no-cache, whether or not the cache
// is on; an If-None-Match that matches is a 304. With the cache on, it is
// kept with the record types it read, and a later identical request is
// answered from memory: no statement, no rendering; with If-None-Match,
// no body either.
//
// Invalidation: cacheFeed follows every account's change log (woken by the
// listener's ChangeLogChannel) and drops, per change, the entries of that
// account that read its record type. A request whose statements wrote
// drops every entry of its account before the first byte of its answer:
// its client never reads its own write stale on this instance, whatever
// triggers the write fired. A WebSocket's operations are scoped one by one
// (respcache.BeginOperation, called by the graphql-ws transport): a
// mutation's drop happens before its answer is sent.

// responseCache is the middleware's state; cache is nil when
// RESPONSE_CACHE_BYTES is 0 (ETags and 304s still work).
type responseCache struct {
	cache *respcache.Cache
	feed  *cacheFeed
	// positions, when set (REDIS_URL), holds each account's change-log
	// position after its last answered write, shared by every instance:
	// an instance answers from its cache only once its feed read that far.
	positions logPositions
	store     *db.DB
	// budget, when set (GRAPHQL_COST_BUDGET), charges an answer from the
	// cache what its operation cost, with the caller's own headers.
	budget func(ctx context.Context, p *model.Principal, cost int) gqlhttp.Charge

	// inflight: the misses being computed, by key; an identical request
	// that misses meanwhile waits for the first rather than computing
	// the same answer again (after a drop, every poller misses at once).
	mu       sync.Mutex
	inflight map[string]chan struct{}
}

// lead returns nil when the caller computes key's answer (call the
// returned done when it is kept or not), or a channel closed when the
// request already computing it ends.
func (rc *responseCache) lead(key string) (wait <-chan struct{}, done func()) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if ch, ok := rc.inflight[key]; ok {
		return ch, nil
	}
	if rc.inflight == nil {
		rc.inflight = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	rc.inflight[key] = ch
	return nil, func() {
		rc.mu.Lock()
		delete(rc.inflight, key)
		rc.mu.Unlock()
		close(ch)
	}
}

// logPositions is sharedlimit.Limits' store of accounts' change-log
// positions (AccountLogPosition).
type logPositions interface {
	AccountLogPosition(ctx context.Context, accountID string) (uint64, error)
	AdvanceAccountLogPosition(ctx context.Context, accountID string, pos uint64) error
}

// positionTimeout bounds recording a write's position before its answer.
const positionTimeout = 5 * time.Second

// current says whether this instance's cache may answer for account: its
// feed has read every change of the account's last answered write on any
// instance. Unknown (Redis unreachable) is no.
func (rc *responseCache) current(ctx context.Context, account string) bool {
	if rc.positions == nil {
		return true
	}
	pos, err := rc.positions.AccountLogPosition(ctx, account)
	if err != nil {
		return false
	}
	if rc.feed.readUpTo(account, int64(pos)) {
		return true
	}
	// The feed reads when a change wakes it; the write's wake-up may be
	// on its way.
	rc.feed.wakeAccount(account)
	return false
}

// cacheAllowedHeaders are request headers that change an answer's bytes.
var cacheKeyHeaders = [...]string{"Accept", "Content-Type", "X-Forwarded-Proto", "X-Forwarded-Host", "Forwarded"}

// candidate says whether r's answer may be kept, and its key; it reads a
// POST's body (and puts it back).
func candidate(r *http.Request, p *model.Principal) (string, bool) {
	if r.Header.Get("Upgrade") != "" {
		return "", false
	}
	accept := r.Header.Get("Accept")
	if r.URL.Path == "/graphql" {
		// A client that accepts streams gets a single result as one
		// answer, kept like any other (gqlhttp.Streams).
		if gqlhttp.Streams(r) {
			return "", false
		}
	} else if strings.Contains(accept, "text/event-stream") || strings.Contains(accept, "multipart/mixed") {
		return "", false
	}
	var body []byte
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v2/"):
	case r.Method == http.MethodGet && r.URL.Path == "/graphql" && r.URL.RawQuery != "":
	case r.Method == http.MethodPost && r.URL.Path == "/graphql":
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			return "", false
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			// The handler meets the same error (a body too large).
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), errReader{err}))
			return "", false
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		body = b
	default:
		return "", false
	}
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	user := ""
	if p.UserID != nil {
		user = *p.UserID
	}
	field(p.AccountID)
	field(p.Role)
	field(user)
	field(r.Method)
	field(r.URL.Path)
	field(r.URL.RawQuery)
	field(string(body))
	field(r.Host)
	if r.TLS != nil {
		field("tls")
	} else {
		field("")
	}
	for _, k := range cacheKeyHeaders {
		field(strings.Join(r.Header.Values(k), ","))
	}
	return string(h.Sum(nil)), true
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// wrap is the middleware, after authentication and the rate limit.
func (rc *responseCache) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := model.PrincipalFrom(r.Context())
		if p == nil {
			// A WebSocket may authenticate in connection_init: its
			// operations still drop what they write (operationScope).
			if r.Header.Get("Upgrade") != "" {
				r = r.WithContext(respcache.WithOperationScope(r.Context(), rc.operationScope))
			}
			next.ServeHTTP(w, r)
			return
		}
		var touched db.Touched
		ctx := db.WithTouched(r.Context(), &touched)
		key, ok := candidate(r, p)
		if !ok {
			if r.Header.Get("Upgrade") != "" {
				ctx = respcache.WithOperationScope(ctx, rc.operationScope)
			}
			dw := &dropWriter{ResponseWriter: w, drop: func() { rc.dropWrites(p.AccountID, &touched) }}
			next.ServeHTTP(dw, r.WithContext(ctx))
			dw.dropOnce()
			return
		}
		now := time.Now()
		release := func() {}
		var gen respcache.Gen
		if rc.cache != nil {
			// After a write answered by another instance whose changes
			// this one's feed has not read yet, neither an entry nor an
			// identical request under way may predate it: the answer is
			// computed, and kept as usual (the feed's drop of the change
			// bumps the account's generation, or drops it).
			if rc.current(r.Context(), p.AccountID) {
				if e := rc.cache.Get(key, now); e != nil && rc.charged(w, r, p, e) {
					serveEntry(w, r, e)
					return
				}
				wait, done := rc.lead(key)
				if wait != nil {
					select {
					case <-wait:
						if e := rc.cache.Get(key, time.Now()); e != nil && rc.charged(w, r, p, e) {
							serveEntry(w, r, e)
							return
						}
					case <-r.Context().Done():
						// Computed below, to fail as the context says.
					}
				} else {
					release = done
					defer func() { release() }()
				}
			}
			rc.cache.Miss()
			gen = rc.cache.Gen(p.AccountID)
		}
		var mark respcache.Mark
		ctx = respcache.WithMark(ctx, &mark)
		bw := &bufferWriter{ResponseWriter: w, status: http.StatusOK, limit: 32 << 20}
		bw.buf = *bytes.NewBuffer(answerBufs.get())
		defer bw.release()
		if rc.cache != nil {
			bw.limit = max(rc.cache.MaxEntry(), 1<<20)
		}
		for k := range w.Header() {
			bw.before = append(bw.before, k)
		}
		bw.drop = func() { rc.dropWrites(p.AccountID, &touched) }
		next.ServeHTTP(bw, r.WithContext(ctx))
		if bw.passing {
			bw.dropOnce()
			return
		}
		bw.dropOnce()
		if !cacheable(r, bw, &mark, &touched) {
			bw.flushOut()
			return
		}
		e := &respcache.Entry{Status: bw.status, Header: bw.ownHeader(), Body: bw.buf.Bytes(), ETag: etagOf(bw.buf.Bytes())}
		e.Header.Set("ETag", e.ETag)
		e.Header.Set("Cache-Control", "private, no-cache")
		if rc.cache != nil {
			// The budget's headers are this request's; a later answer
			// from the cache gets its own (charged).
			kept := *e
			kept.Header = e.Header.Clone()
			for _, k := range budgetHeaders {
				kept.Header.Del(k)
			}
			if n, err := strconv.Atoi(e.Header.Get(gqlhttp.HeaderCost)); err == nil {
				kept.Cost = n
			}
			kept.Body = bytes.Clone(e.Body)
			rc.cache.Put(key, p.AccountID, uint64(touched.Read()), gen, &kept, now)
		}
		// Waiters find the entry now, whatever this client's speed.
		release()
		release = func() {}
		serveEntry(w, r, e)
	})
}

// budgetHeaders are the cost budget's headers of one request's charge.
var budgetHeaders = [...]string{gqlhttp.HeaderCost, gqlhttp.HeaderCostRemaining, gqlhttp.HeaderCostLimit, "Retry-After"}

// charged charges an answer about to be served from the cache against the
// caller's cost budget, as its operation would be, and writes the
// caller's budget headers; false when the budget refuses it (the request
// then runs, and is refused as any other).
func (rc *responseCache) charged(w http.ResponseWriter, r *http.Request, p *model.Principal, e *respcache.Entry) bool {
	if rc.budget == nil || r.URL.Path != "/graphql" {
		return true
	}
	return gqlhttp.ChargeHeader(w, rc.budget(r.Context(), p, e.Cost))
}

// dropWrites drops the account's entries when the request's statements
// wrote, before its answer's first byte.
func (rc *responseCache) dropWrites(account string, t *db.Touched) {
	if rc.cache == nil || t.Wrote() == 0 {
		return
	}
	rc.cache.Invalidate(account, ^uint64(0))
	if rc.positions != nil {
		// Other instances answer the account from their caches only once
		// their feeds read past this write (current). Bounded: a slow
		// primary or Redis does not hold the answer longer than this; on
		// failure the others may answer from a cache the feed is about
		// to drop, as without shared positions.
		ctx, cancel := context.WithTimeout(context.Background(), positionTimeout)
		defer cancel()
		pos, err := rc.store.AccountChangeLogHead(ctx, account)
		if err != nil && rc.feed != nil {
			rc.feed.log.Warn("response cache: the write's change-log position was not read; other instances may answer from before it until their feeds read it", "account", account, "err", err)
		}
		if err == nil && pos > 0 {
			_ = rc.positions.AdvanceAccountLogPosition(ctx, account, uint64(pos))
		}
	}
}

// operationScope records what one operation of a WebSocket touches, and
// drops the account's entries when it wrote, before its answer is sent
// (the connection's own drop happened at the upgrade, before any
// operation ran).
func (rc *responseCache) operationScope(ctx context.Context, account string) (context.Context, func()) {
	t := new(db.Touched)
	return db.WithTouched(ctx, t), func() { rc.dropWrites(account, t) }
}

// cacheable says whether a buffered answer is a function of the data the
// change log follows.
func cacheable(r *http.Request, bw *bufferWriter, m *respcache.Mark, t *db.Touched) bool {
	if bw.status != http.StatusOK || m.NoStore() || t.Wrote() != 0 || t.Read()&db.TablesUnlogged != 0 {
		return false
	}
	if r.URL.Path == "/graphql" && (!m.Query() || bytes.Contains(bw.buf.Bytes(), []byte(`"errors"`))) {
		return false
	}
	h := bw.Header()
	if ct := h.Get("Content-Type"); strings.HasPrefix(ct, "text/event-stream") || strings.HasPrefix(ct, "multipart/") {
		return false
	}
	if len(h.Values("Set-Cookie")) > 0 || strings.Contains(h.Get("Cache-Control"), "no-store") {
		return false
	}
	return true
}

// etagOf is the strong ETag of body: its 128-bit XXH3 hash. Equal bytes
// give equal tags in every instance; the tag names one answer among the
// versions of one caller's request, where a chance collision of 128 bits
// is not a concern, and it is computed for every cacheable answer, cache
// on or off: SHA-256 cost 0.3-0.6 ms of CPU per 700 KB include list, XXH3
// about a hundredth of that.
func etagOf(body []byte) string {
	sum := xxh3.Hash128(body).Bytes()
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:]) + `"`
}

// serveEntry answers with e: a 304 when If-None-Match names its ETag.
func serveEntry(w http.ResponseWriter, r *http.Request, e *respcache.Entry) {
	h := w.Header()
	for k, v := range e.Header {
		h[k] = v
	}
	if noneMatch(r.Header.Values("If-None-Match"), e.ETag) {
		h.Del("Content-Type")
		h.Del("Content-Length")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.Body)
}

// noneMatch reports whether an If-None-Match list names etag ("*" names
// any; the comparison is weak, as RFC 9110 says for If-None-Match).
func noneMatch(values []string, etag string) bool {
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == etag {
				return true
			}
		}
	}
	return false
}

// bufferWriter holds a candidate's answer until it is known whether it is
// cacheable; a flush (a stream) or more than limit bytes lets it through
// as it comes, uncached.
type bufferWriter struct {
	http.ResponseWriter
	status  int
	buf     bytes.Buffer
	limit   int64
	passing bool
	before  []string // header keys outer layers had set
	drop    func()
	dropped bool
}

func (w *bufferWriter) dropOnce() {
	if !w.dropped {
		w.dropped = true
		w.drop()
	}
}

func (w *bufferWriter) WriteHeader(code int) {
	if w.passing {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	if code >= 100 && code < 200 {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.status = code
}

func (w *bufferWriter) Write(b []byte) (int, error) {
	if w.passing {
		return w.ResponseWriter.Write(b)
	}
	if int64(w.buf.Len()+len(b)) > w.limit {
		w.pass()
		return w.ResponseWriter.Write(b)
	}
	return w.buf.Write(b)
}

// pass sends what was buffered and lets the rest through.
func (w *bufferWriter) pass() {
	if w.passing {
		return
	}
	w.dropOnce()
	w.passing = true
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(w.buf.Bytes())
	w.release()
}

// release gives the buffer back for another answer. Nothing keeps its
// bytes past the request: a cached entry holds a copy, and an answer
// served from it is written out before the handler returns.
func (w *bufferWriter) release() {
	answerBufs.put(w.buf.Bytes())
	w.buf = bytes.Buffer{}
}

// answerBufs are the buffers answers are held in, reused: without them
// every answer grows a fresh buffer to its size (a /v2 include list of
// 700 KB, twenty doublings with their copies and zeroing).
var answerBufs bufPool

// bufPool keeps byte slices of at most maxPooledAnswer bytes.
type bufPool struct{ p sync.Pool }

// maxPooledAnswer is the largest buffer kept for reuse.
const maxPooledAnswer = 8 << 20

func (bp *bufPool) get() []byte {
	if b, ok := bp.p.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return nil
}

func (bp *bufPool) put(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooledAnswer {
		return
	}
	b = b[:0]
	bp.p.Put(&b)
}

// flushOut sends a buffered answer that is not cacheable as it is.
func (w *bufferWriter) flushOut() {
	w.pass()
}

func (w *bufferWriter) Flush() {
	w.pass()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *bufferWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ownHeader is a copy of the headers the handler set.
func (w *bufferWriter) ownHeader() http.Header {
	out := http.Header{}
outer:
	for k, v := range w.Header() {
		for _, b := range w.before {
			if b == k {
				continue outer
			}
		}
		out[k] = append([]string(nil), v...)
	}
	out.Del("Content-Length")
	return out
}

// dropWriter drops the account's entries before the first byte of a
// request that is no candidate (a write, an upload).
type dropWriter struct {
	http.ResponseWriter
	drop    func()
	dropped bool
}

func (w *dropWriter) dropOnce() {
	if !w.dropped {
		w.dropped = true
		w.drop()
	}
}

func (w *dropWriter) WriteHeader(code int) {
	w.dropOnce()
	w.ResponseWriter.WriteHeader(code)
}

func (w *dropWriter) Write(b []byte) (int, error) {
	w.dropOnce()
	return w.ResponseWriter.Write(b)
}

func (w *dropWriter) Flush() {
	w.dropOnce()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *dropWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ---------------------------------------------------------------- feed

// cacheFeed follows every account's change log for the response cache:
// woken by the listener on ChangeLogChannel (the wake-up names the
// account), it reads that account's log from its position there and
// drops, per change, what the account kept of its record type. At every
// listener tick (db.FeedTick), after a reconnection and after a failed
// read it looks at every account's head (db.ChangeLogHeads) to find the
// accounts whose log moved without a wake-up (a write without the server,
// a wake-up lost). The cache serves only while the feed listens and its
// last read succeeded; when the listener went down (wake-ups missed) the
// cache is flushed and serves again once the log was read up to now.
type cacheFeed struct {
	store *db.DB
	cache *respcache.Cache
	log   *slog.Logger
	sub   *db.Subscription
	wake  chan struct{}
	ctx   context.Context
	stop  context.CancelFunc
	done  chan struct{}

	// up: the listener listens, ChangeLogChannel included (wake-ups are
	// heard); the cache goes live only then, after a read of the log.
	up, all atomic.Bool
	// full: the next read looks at every account's head, not only the
	// accounts woken.
	full atomic.Bool

	mu      sync.Mutex
	dirty   map[string]struct{} // accounts woken since the last read
	last    map[string]walAt    // each account's last change read: its WAL position
	pos     map[string]int64    // each account's position read up to (missing: 0)
	started bool
	moved   chan struct{} // closed and replaced when a position moves
}

func newCacheFeed(store *db.DB, listen *db.Listener, cache *respcache.Cache, log *slog.Logger) *cacheFeed {
	f := &cacheFeed{store: store, cache: cache, log: log, wake: make(chan struct{}, 1), done: make(chan struct{}), moved: make(chan struct{}),
		dirty: map[string]struct{}{}, last: map[string]walAt{}, pos: map[string]int64{}}
	f.ctx, f.stop = context.WithCancel(context.Background())
	f.sub = listen.Subscribe(1024, db.FeedChange, db.FeedListening, db.FeedDown, db.FeedTick)
	go func() {
		if err := listen.ListenAll(); err != nil {
			if f.ctx.Err() == nil {
				log.Warn("response cache: cannot listen to the change log; the cache stays off until it can", "err", err)
			}
			return
		}
		f.all.Store(true)
		f.kick()
	}()
	go f.run()
	return f
}

func (f *cacheFeed) kick() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// run turns the listener's events into reads of the log.
func (f *cacheFeed) run() {
	defer close(f.done)
	readerDone := make(chan struct{})
	go func() { defer close(readerDone); f.read() }()
	defer func() { f.stop(); <-readerDone }()
	for {
		select {
		case <-f.ctx.Done():
			return
		case e, ok := <-f.sub.Events():
			if !ok {
				return
			}
			switch e.Kind {
			case db.FeedChange:
				if a := e.Change.AccountID; a != "" {
					f.mu.Lock()
					f.dirty[a] = struct{}{}
					f.mu.Unlock()
				} else {
					f.full.Store(true)
				}
				f.kick()
			case db.FeedTick:
				f.full.Store(true)
				f.kick()
			case db.FeedListening:
				f.up.Store(true)
				if e.Resync {
					f.cache.SetLive(false)
					f.cache.Flush()
				}
				f.full.Store(true)
				f.kick()
			case db.FeedDown:
				f.up.Store(false)
				f.cache.SetLive(false)
				f.cache.Flush()
			}
		}
	}
}

// read is the one reader of the log.
func (f *cacheFeed) read() {
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	var delay time.Duration
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-f.wake:
		case <-retry.C:
		}
		if err := f.drain(); err != nil {
			if f.ctx.Err() != nil {
				return
			}
			if f.cache.Live() {
				f.log.Warn("response cache: reading the change log failed; cache off until it succeeds", "err", err)
			}
			f.full.Store(true)
			f.cache.SetLive(false)
			f.cache.Flush()
			delay = min(max(2*delay, 50*time.Millisecond), 2*time.Second)
			retry.Reset(delay)
			continue
		}
		delay = 0
	}
}

// allTables is every tag of a change (a record type's bits, all of them).
const allTables = ^uint64(0)

// drain reads the log of the accounts woken (of every account whose head
// moved, when full is set) until nothing is left to read now. The first
// read starts at every account's head: the cache held nothing before it.
func (f *cacheFeed) drain() error {
	ctx, cancel := context.WithTimeout(f.ctx, 30*time.Second)
	defer cancel()
	f.mu.Lock()
	started := f.started
	f.mu.Unlock()
	if !started {
		f.full.Store(false)
		heads, err := f.store.ChangeLogHeads(ctx)
		if err != nil {
			return err
		}
		f.mu.Lock()
		f.pos, f.started = heads, true
		f.mu.Unlock()
		f.advance()
	}
	todo := map[string]struct{}{}
	if f.full.Swap(false) {
		heads, err := f.store.ChangeLogHeads(ctx)
		if err != nil {
			return err
		}
		f.mu.Lock()
		for a, h := range heads {
			if h > f.pos[a] {
				todo[a] = struct{}{}
			}
		}
		f.mu.Unlock()
	}
	f.mu.Lock()
	for a := range f.dirty {
		todo[a] = struct{}{}
	}
	clear(f.dirty)
	f.mu.Unlock()
	for a := range todo {
		if err := f.drainAccount(ctx, a); err != nil {
			f.mu.Lock()
			for a := range todo {
				f.dirty[a] = struct{}{}
			}
			f.mu.Unlock()
			return err
		}
	}
	if !f.cache.Live() && f.up.Load() && f.all.Load() {
		f.cache.SetLive(true)
		f.advance()
	}
	return nil
}

// drainAccount reads one account's log from its position until nothing is
// left to read now.
func (f *cacheFeed) drainAccount(ctx context.Context, account string) error {
	f.mu.Lock()
	cur := f.pos[account]
	f.mu.Unlock()
	for {
		page, err := f.store.ReadAccountChangeLogPage(ctx, account, cur, db.DefaultChangeLogPage)
		if err != nil {
			return err
		}
		if page.Gap {
			// Changes it had not read were pruned: whatever the
			// account kept may be stale.
			f.cache.Invalidate(account, allTables)
		}
		for i := range page.Changes {
			f.cache.Invalidate(account, uint64(db.TablesOfChange(page.Changes[i].Type)))
		}
		cur = page.Next
		f.mu.Lock()
		if n := len(page.Changes); n > 0 && page.Changes[n-1].WAL > 0 {
			// One page's changes share the WAL position it was read at.
			c := &page.Changes[n-1]
			f.last[account] = walAt{c.WAL, c.WALAt}
		}
		f.pos[account] = cur
		f.mu.Unlock()
		f.advance()
		if !page.More {
			return nil
		}
	}
}

type walAt struct {
	lsn uint64
	at  time.Time
}

// lastChange is the WAL position of the last change of account the feed
// read, and when it read it (0: none).
func (f *cacheFeed) lastChange(account string) (uint64, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.last[account]
	return w.lsn, w.at
}

// advance wakes the waiters (wait): a position moved, or the cache went
// live.
func (f *cacheFeed) advance() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.moved)
	f.moved = make(chan struct{})
}

// wait returns once the feed read account's log up to position pos (its
// drops are done) and the cache is live; with account "", once it is
// live.
// readUpTo says whether the feed has read account's log up to pos (every
// change at or below it was read and dropped for): positions are given in
// commit order per account, so nothing below pos can come later.
func (f *cacheFeed) readUpTo(account string, pos int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started && f.pos[account] >= pos
}

// wakeAccount asks the feed to read account's log now.
func (f *cacheFeed) wakeAccount(account string) {
	f.mu.Lock()
	f.dirty[account] = struct{}{}
	f.mu.Unlock()
	f.kick()
}

func (f *cacheFeed) wait(ctx context.Context, account string, pos int64) error {
	for {
		f.mu.Lock()
		cur, moved, started := f.pos[account], f.moved, f.started
		f.mu.Unlock()
		if started && (account == "" || cur >= pos) && f.cache.Live() {
			return nil
		}
		if account != "" {
			f.wakeAccount(account)
		} else {
			f.kick()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-moved:
		case <-f.done:
			return errors.New("response cache: closed")
		}
	}
}

func (f *cacheFeed) close() {
	f.stop()
	f.sub.Close()
	<-f.done
}
