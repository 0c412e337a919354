package gqlhttp

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"shipgraph/model"
)

// The cost budget (GRAPHQL_COST_BUDGET): every operation's complexity, as
// the complexity limit computed it, is charged against its key's budget
// of complexity units a minute (HandlerConfig.CostBudget; the chain counts
// it, over every instance with REDIS_URL). An operation the budget cannot
// pay for now is refused before it runs with COST_BUDGET_EXCEEDED: 429
// with Retry-After over HTTP. One that costs more than the whole budget
// can never run: it is refused the same way but without a wait.
//
// The answer says what the operation cost and what remains in headers
// (Query-Cost, Query-Cost-Remaining, Query-Cost-Limit), not in the body's
// extensions: the body stays the same bytes for the same data (the fast
// path writes it before anything else is known, and a response cache can
// keep it), while the headers belong to this one request. Operations on
// a WebSocket have no headers: they are charged the same and a refusal
// is their error.

// The budget's metrics: what it charged and what it refused, over every
// key (no key as a label: the series stay bounded; the rate limit has no
// per-key series either).
var (
	budgetCharged = promauto.NewCounter(prometheus.CounterOpts{
		Name: "shipgraph_cost_budget_charged_total",
		Help: "Complexity units charged to the per-key cost budget (GRAPHQL_COST_BUDGET) by the operations it let run.",
	})
	budgetRefusals = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "shipgraph_cost_budget_refusals_total",
		Help: "Operations the per-key cost budget refused, by reason: exhausted (a wait would cure it) or too_big (more than the whole budget).",
	}, []string{"reason"})
	refusedExhausted = budgetRefusals.WithLabelValues("exhausted")
	refusedTooBig    = budgetRefusals.WithLabelValues("too_big")
)

// CodeCostBudget is the code of a refusal of the cost budget.
const CodeCostBudget = "COST_BUDGET_EXCEEDED"

// Headers of the cost budget.
const (
	HeaderCost          = "Query-Cost"
	HeaderCostRemaining = "Query-Cost-Remaining"
	HeaderCostLimit     = "Query-Cost-Limit"
)

// Charge is the cost budget's decision on one operation.
type Charge struct {
	// Cost is the operation's complexity; Limit the budget a minute;
	// Remaining what the budget holds after the decision.
	Cost, Remaining, Limit int
	// RetryAfter > 0 refuses the operation: the budget holds Cost again
	// after it.
	RetryAfter time.Duration
	// TooBig refuses an operation that costs more than the whole budget.
	TooBig bool
}

// costBudget charges each operation once it is validated and its
// complexity known (after the complexity limit, among the operation
// context mutators: every transport).
type costBudget struct {
	charge func(ctx context.Context, p *model.Principal, cost int) Charge
}

var _ interface {
	graphql.OperationContextMutator
	graphql.HandlerExtension
} = costBudget{}

func (costBudget) ExtensionName() string                   { return "CostBudget" }
func (costBudget) Validate(graphql.ExecutableSchema) error { return nil }

func (b costBudget) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	p := model.PrincipalFrom(ctx)
	if p == nil {
		return nil // refused as unauthenticated by the resolvers
	}
	cost := 0
	if s := extension.GetComplexityStats(ctx); s != nil {
		cost = s.Complexity
	}
	c := b.charge(ctx, p, cost)
	if n, ok := ctx.Value(costNoteKey{}).(*costNote); ok {
		n.charge, n.set = c, true
	}
	switch {
	case c.TooBig:
		refusedTooBig.Inc()
		err := refusal(CodeCostBudget, "the operation costs %d, more than the whole budget of %d a minute of this key: ask for less (smaller pages, fewer nested lists)", c.Cost, c.Limit)
		err.Extensions["cost"], err.Extensions["limit"] = c.Cost, c.Limit
		return err
	case c.RetryAfter > 0:
		refusedExhausted.Inc()
		secs := retrySeconds(c.RetryAfter)
		err := refusal(CodeCostBudget, "the operation costs %d and this key's budget holds %d of its %d a minute; retry in %d s", c.Cost, c.Remaining, c.Limit, secs)
		err.Extensions["cost"], err.Extensions["remaining"], err.Extensions["limit"] = c.Cost, c.Remaining, c.Limit
		err.Extensions["retryAfter"] = secs
		return err
	}
	budgetCharged.Add(float64(c.Cost))
	return nil
}

// costNote carries the charge of an HTTP request's operation to its
// transport, which writes the headers.
type costNote struct {
	charge Charge
	set    bool
}

type costNoteKey struct{}

// withCostNote returns ctx with an empty note the budget fills.
func withCostNote(ctx context.Context) (context.Context, *costNote) {
	n := &costNote{}
	return context.WithValue(ctx, costNoteKey{}, n), n
}

// header writes the charge's headers (none when no charge was made) and
// returns the status of a refusal that a wait would cure (429, with
// Retry-After), or 0.
func (n *costNote) header(w http.ResponseWriter) int {
	if !n.set {
		return 0
	}
	h := w.Header()
	h.Set(HeaderCost, strconv.Itoa(n.charge.Cost))
	h.Set(HeaderCostRemaining, strconv.Itoa(n.charge.Remaining))
	h.Set(HeaderCostLimit, strconv.Itoa(n.charge.Limit))
	if n.charge.RetryAfter > 0 && !n.charge.TooBig {
		h.Set("Retry-After", strconv.Itoa(retrySeconds(n.charge.RetryAfter)))
		return http.StatusTooManyRequests
	}
	return 0
}

// ChargeHeader writes the headers of a charge made outside an operation's
// execution (an answer from the response cache, which costs the budget
// what the operation cost) and counts it; it returns false, writing
// nothing, when the charge refused: the caller runs the operation, which
// is refused as usual.
func ChargeHeader(w http.ResponseWriter, c Charge) bool {
	if c.TooBig || c.RetryAfter > 0 {
		return false
	}
	budgetCharged.Add(float64(c.Cost))
	n := costNote{charge: c, set: true}
	n.header(w)
	return true
}

// retrySeconds rounds a wait up to whole seconds (at least one).
func retrySeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
