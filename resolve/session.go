package resolve

import (
	"context"

	"shipgraph/load"
	"shipgraph/model"
)

// Identity: a transport authenticates a request once (an API
// key, a WebSocket's connection_init, the account a webhook delivery acts
// for) and calls Session with the principal it found; every method of the
// resolver layer then takes that principal explicitly, as its second
// parameter, and reads the request's loaders with load.For(ctx). Nothing
// below the transports reads the principal back out of the context.

// Session returns ctx carrying p and a fresh set of loaders of p's account
// (r.Loaders tunes them): the one place a request's identity and loaders
// are put together, used by the HTTP chain, the WebSocket and SSE
// transport, each subscription event and webhook deliveries. A nil p
// returns ctx unchanged: the request is anonymous, and each method
// answers it unauthenticated.
func (r *Resolver) Session(ctx context.Context, p *model.Principal) context.Context {
	if p == nil {
		return ctx
	}
	ctx = model.WithPrincipal(ctx, p)
	return load.WithLoaders(ctx, load.NewLoaders(r.DB, p.AccountID, r.Loaders))
}

// EventSession is the Session of one subscription event: fresh loaders
// (a long-lived cache would serve stale records) narrowed to fields, and
// reads that may go to a replica which replayed the change (its WAL
// position, read with it from the change log on the primary).
func (r *Resolver) EventSession(ctx context.Context, p *model.Principal, c *model.Change, fields load.Fields) context.Context {
	ctx = r.Session(ctx, p)
	if l, err := load.For(ctx); err == nil {
		l.Select(fields)
	}
	return r.DB.WithReadAt(ctx, c.WAL, c.WALAt)
}

// AsAccount is the principal of work outside a request that acts for an
// account as its admin (the webhook delivery renders a notification's
// payload with it), and its Session.
func (r *Resolver) AsAccount(ctx context.Context, accountID string) (context.Context, *model.Principal) {
	p := &model.Principal{AccountID: accountID, Role: model.RoleAdmin}
	return r.Session(ctx, p), p
}
