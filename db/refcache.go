package db

import (
	"context"
	"sync"
	"time"

	"shipgraph/graph/model"
)

// Reference rows (ports, metro areas, terminals, rail terminals, shipping
// lines) are the same for every account and change only when an operator
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
	ports         refCache[model.Port]
	metroAreas    refCache[model.MetroArea]
	terminals     refCache[model.Terminal]
	railTerminals refCache[model.RailTerminal]
	shippingLines refCache[model.ShippingLine]
}

type refCache[T any] struct {
	mu   sync.Mutex
	ttl  time.Duration
	rows map[string]refRow[T]
}

type refRow[T any] struct {
	rec   T
	until time.Time
}

// cached says whether reference rows are being kept.
func (r *refCaches) cached() bool {
	r.ports.mu.Lock()
	defer r.ports.mu.Unlock()
	return r.ports.ttl > 0
}

// SetReferenceTTL keeps reference rows read by this store, and stores made
// from it by Select, for ttl; 0 reads them every time.
func (db *DB) SetReferenceTTL(ttl time.Duration) {
	for _, c := range []interface{ setTTL(time.Duration) }{
		&db.ref.ports, &db.ref.metroAreas, &db.ref.terminals, &db.ref.railTerminals, &db.ref.shippingLines,
	} {
		c.setTTL(ttl)
	}
}

func (c *refCache[T]) setTTL(ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ttl, c.rows = ttl, nil
}

// byIDs answers ids from the cache and reads the rest with read (every
// column), keeping what it read.
func (c *refCache[T]) byIDs(ctx context.Context, ids []string, id func(*T) string, read func(ctx context.Context, ids []string) ([]*T, error)) ([]*T, error) {
	now := time.Now()
	c.mu.Lock()
	if c.ttl <= 0 {
		c.mu.Unlock()
		return read(ctx, ids)
	}
	out := make([]*T, 0, len(ids))
	missing := make([]string, 0, len(ids))
	for _, k := range ids {
		if r, ok := c.rows[k]; ok && now.Before(r.until) {
			rec := r.rec
			out = append(out, &rec)
		} else {
			missing = append(missing, k)
		}
	}
	ttl := c.ttl
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	recs, err := read(ctx, missing)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.ttl == ttl {
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
