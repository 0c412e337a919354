package db

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"shipgraph/model"
)

// Reference rows (ports, metro areas, terminals, rail terminals, shipping
// lines; and users, per account: accounts.go) are the same for every account and change only when an operator
// edits them, while nearly every dashboard page reads some. The store keeps
// the rows it read for a while (SetReferenceTTL; off until set, the server
// sets REFERENCE_CACHE_TTL) and reads only ids it does not hold fresh. An
// edit shows within the TTL. The rows are whole (every column, whatever a
// request's column selection) and handed out as copies, so a request may
// attach relationships to its records.

// maxRefRows bounds each type's cache: past it, the cache starts over. The
// reference tables hold tens to thousands of rows; ids that do not exist
// are not kept.
const maxRefRows = 50_000

type refCaches struct {
	ttl           atomic.Int64 // a time.Duration; 0 keeps nothing
	ports         refCache[model.Port]
	metroAreas    refCache[model.MetroArea]
	terminals     refCache[model.Terminal]
	railTerminals refCache[model.RailTerminal]
	shippingLines refCache[model.ShippingLine]
	// users, keyed "account/id": the names reference custom fields show.
	// Users change only by an operator's hand, as reference
	// rows do; kept per account, read for one account only.
	users refCache[model.User]
}

type refCache[T any] struct {
	mu   sync.Mutex
	gen  uint64 // bumped when the rows are dropped, so a read begun before is not kept
	rows map[string]refRow[T]
	// clock, when set (tests: export_test.go), is the time instead of
	// time.Now, so a test passes the TTL without sleeping.
	clock func() time.Time
}

type refRow[T any] struct {
	rec   T
	until time.Time
}

// cached says whether reference rows are being kept.
func (r *refCaches) cached() bool { return r.ttl.Load() > 0 }

// ttlNow is how long reference rows read now are kept.
func (r *refCaches) ttlNow() time.Duration { return time.Duration(r.ttl.Load()) }

// SetReferenceTTL keeps reference rows read by this store, and stores made
// from it by Select, for ttl; 0 reads them every time. What was kept is
// dropped.
func (db *DB) SetReferenceTTL(ttl time.Duration) {
	db.ref.ttl.Store(int64(ttl))
	db.ref.ports.reset()
	db.ref.metroAreas.reset()
	db.ref.terminals.reset()
	db.ref.railTerminals.reset()
	db.ref.shippingLines.reset()
	db.ref.users.reset()
}

func (c *refCache[T]) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.rows = nil
}

// byIDs answers ids from the cache and reads the rest with read (every
// column), keeping what it read for ttl.
func (c *refCache[T]) byIDs(ctx context.Context, ttl time.Duration, ids []string, id func(*T) string, read func(ctx context.Context, ids []string) ([]*T, error)) ([]*T, error) {
	if ttl <= 0 {
		return read(ctx, ids)
	}
	out := make([]*T, 0, len(ids))
	missing := make([]string, 0, len(ids))
	c.mu.Lock()
	now := time.Now()
	if c.clock != nil {
		now = c.clock()
	}
	for _, k := range ids {
		if r, ok := c.rows[k]; ok && now.Before(r.until) {
			rec := r.rec
			out = append(out, &rec)
		} else {
			missing = append(missing, k)
		}
	}
	gen := c.gen
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	recs, err := read(ctx, missing)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.gen == gen {
		if c.rows == nil || len(c.rows)+len(recs) > maxRefRows {
			c.rows = make(map[string]refRow[T], len(recs))
		}
		until := now.Add(ttl)
		for _, r := range recs {
			c.rows[id(r)] = refRow[T]{rec: *r, until: until}
		}
	}
	c.mu.Unlock()
	return append(out, recs...), nil
}
