package httpapi

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"shipgraph/graph/gqlhttp"
	"shipgraph/model"
	"shipgraph/sharedlimit"
)

// costBudget is the per-key budget of GraphQL operation cost
// (GRAPHQL_COST_BUDGET complexity units a minute, all of it available at
// once): GCRA buckets in Redis over every instance with shared set, the
// per-process buckets while Redis does not answer, as the rate limit.
type costBudget struct {
	shared    *sharedlimit.Limits
	perMinute int
	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
}

// newCostBudget returns the budget of perMinute units a minute per key;
// nil (no budget) when perMinute is not positive.
func newCostBudget(perMinute int, shared *sharedlimit.Limits) *costBudget {
	if perMinute <= 0 {
		return nil
	}
	return &costBudget{shared: shared, perMinute: perMinute, buckets: map[string]*rate.Limiter{}}
}

// charge takes cost units of p's key's budget, all or nothing
// (gqlhttp.HandlerConfig.CostBudget).
func (b *costBudget) charge(ctx context.Context, p *model.Principal, cost int) gqlhttp.Charge {
	c := gqlhttp.Charge{Cost: cost, Limit: b.perMinute}
	if cost > b.perMinute {
		c.TooBig = true
		return c
	}
	if b.shared != nil {
		if t, ok := b.shared.AllowN(ctx, "cost:"+p.TokenID, cost, b.perMinute, b.perMinute); ok {
			c.Remaining, c.RetryAfter = t.Remaining, t.RetryAfter
			return c
		}
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	bucket, ok := b.buckets[p.TokenID]
	if !ok {
		bucket = rate.NewLimiter(rate.Limit(float64(b.perMinute)/60), b.perMinute)
		b.buckets[p.TokenID] = bucket
	}
	res := bucket.ReserveN(now, cost)
	if delay := res.DelayFrom(now); delay > 0 {
		res.CancelAt(now)
		c.RetryAfter = delay
	}
	c.Remaining = max(int(bucket.TokensAt(now)), 0)
	return c
}
