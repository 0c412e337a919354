package resolve

import (
	"context"
	"database/sql"
	"time"

	"shipgraph/load"
	"shipgraph/model"
)

// Tracker is the tracking engine (carrier/tracking.Engine) as the resolver
// layer sees it (Deps.Tracking). Nil answers
// refreshes as unavailable and enqueues nothing (the engine's schedule
// still picks every due request up).
type Tracker interface {
	// EnqueuePollTx polls a request now: its job is inserted in tx, the
	// transaction that creates the request.
	EnqueuePollTx(ctx context.Context, tx *sql.Tx, accountID, requestID string) error
	// PollLease is how long a request whose poll was enqueued is left to
	// that poll before the schedule makes up for one that never ran.
	PollLease() time.Duration
	// Serves reports whether a carrier connection is configured for the
	// SCAC (the CARRIERS setting).
	Serves(scac string) bool
	// RefreshContainer polls at once every live request of the
	// container's shipment, within the refresh limit of key: retryAfter
	// > 0 when refused.
	RefreshContainer(ctx context.Context, key, accountID, containerID string) (retryAfter time.Duration, err error)
}

// RefreshContainer schedules the container id to be refreshed from its
// shipping line at once (PATCH /v2/containers/{id}/refresh,
// refreshContainer). Over the refresh limit it answers rate_limited with
// the wait (retryAfter).
func (r *Resolver) RefreshContainer(ctx context.Context, p *model.Principal, id string) (retryAfter time.Duration, err error) {
	p, _, c, err := writeTarget(ctx, p, func(l *load.Loaders) *load.Loader[*model.Container] { return l.ContainerByID }, id, "container", nil)
	if err != nil {
		return 0, err
	}
	if r.Tracking == nil {
		return 0, model.Errorf(model.EUNAVAILABLE, "tracking is not running")
	}
	wait, err := r.Tracking.RefreshContainer(ctx, p.TokenID, p.AccountID, c.ID)
	if err != nil {
		return 0, err
	}
	if wait > 0 {
		return wait, model.Errorf(model.ERATELIMITED, "You've hit the refresh limit. Please try again in a minute.")
	}
	return 0, nil
}
