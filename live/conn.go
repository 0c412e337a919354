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

// EventIDs is what a transport that numbers its events (Server-Sent
// Events: the SSE id) implements beside Conn: Sending is told the log id
// of each event just before it is handed to gqlgen, in order (0: none,
// e.g. RESYNC).
type EventIDs interface {
	Sending(logID int64)
}

// Sending tells the connection of ctx the log id of the event about to be
// sent, if its transport numbers events.
func Sending(ctx context.Context, logID int64) {
	if c, ok := ctx.Value(connKey{}).(EventIDs); ok && c != nil {
		c.Sending(logID)
	}
}

type resumeKey struct{}

// WithResume returns ctx carrying the log id a reconnecting client saw
// last (an SSE stream's Last-Event-ID), for subscriptions that are not
// given one as an argument.
func WithResume(ctx context.Context, logID string) context.Context {
	return context.WithValue(ctx, resumeKey{}, logID)
}

// ResumeFrom is the log id of WithResume.
func ResumeFrom(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(resumeKey{}).(string)
	return id, ok && id != ""
}
