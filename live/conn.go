package live

import "context"

// Conn is the connection a subscription travels on (a WebSocket or an SSE
// stream), as the transport that serves it knows it: End closes it with
// the reason the hub ended the subscription (a WebSocket with the reason's
// close code; an SSE stream is completed or cut off).
type Conn interface {
	End(EndReason)
}

type connKey struct{}

// WithConn returns ctx carrying the connection c (the transport's).
func WithConn(ctx context.Context, c Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// End ends the connection of ctx, if a transport put one there.
func End(ctx context.Context, r EndReason) {
	if c, ok := ctx.Value(connKey{}).(Conn); ok && c != nil {
		c.End(r)
	}
}
