package gqlhttp

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"shipgraph/graph"
	"shipgraph/live"
	"shipgraph/model"
	"shipgraph/respcache"
)

// Subscriptions (and any operation) also travel over WebSocket — the
// graphql-transport-ws protocol of the graphql-ws library, and the older
// graphql-ws (subscriptions-transport-ws) one — and over Server-Sent
// Events (a POST with Accept: text/event-stream).
//
// A WebSocket carries its API key in the connection_init payload
// ({"Authorization": "Token <key>"}; browsers cannot set headers on a
// WebSocket) or in the upgrade request's Authorization header. The
// connection's principal is the key's; every operation on it gets fresh
// loaders (the request's would live as long as the connection).

// liveConn is the connection a subscription travels on, so the hub can end
// it: a WebSocket closes with a code and reason; an SSE stream whose
// client stopped reading has its writes cut off.
type liveConn struct {
	w      http.ResponseWriter
	header http.Header // of the upgrade request
	mu     sync.Mutex
	ws     transport.WebsocketConn
	key    string // the WebSocket's API key, checked again by every operation
	// sse: the connection is an SSE stream; ids are the log ids of the
	// events handed to gqlgen and not yet written (live.EventIDs).
	sse bool
	ids []int64
}

// Sending queues the log id of the next event (live.EventIDs): an SSE
// stream writes it as the event's id.
func (c *liveConn) Sending(logID int64) {
	if c == nil || !c.sse {
		return
	}
	c.mu.Lock()
	c.ids = append(c.ids, logID)
	c.mu.Unlock()
}

// nextID is the log id of the event being written (0: none).
func (c *liveConn) nextID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ids) == 0 {
		return 0
	}
	id := c.ids[0]
	c.ids = c.ids[1:]
	return id
}

// sseIDs writes each event's log id as its SSE id: gqlgen's SSE transport
// writes an event ("event: next\ndata: …\n\n") in one Write, one per
// event handed to it, in order, so the ids queued by Sending pair with
// the events it writes. A client that reconnects sends the last one as
// Last-Event-ID and resumes after it.
type sseIDs struct {
	http.ResponseWriter
	c *liveConn
}

var sseNext = []byte("event: next\n")

func (w sseIDs) Write(b []byte) (int, error) {
	if bytes.HasPrefix(b, sseNext) {
		if id := w.c.nextID(); id > 0 {
			var buf [32]byte
			line := append(strconv.AppendInt(append(buf[:0], "id: "...), id, 10), '\n')
			if _, err := w.ResponseWriter.Write(line); err != nil {
				return 0, err
			}
		}
	}
	return w.ResponseWriter.Write(b)
}

func (w sseIDs) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w sseIDs) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type liveConnKey struct{}

func liveConnFrom(ctx context.Context) *liveConn {
	c, _ := ctx.Value(liveConnKey{}).(*liveConn)
	return c
}

func (c *liveConn) websocket() transport.WebsocketConn {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ws
}

// End ends the connection of a subscription the hub ended (live.Conn).
func (c *liveConn) End(r live.EndReason) {
	if ws := c.websocket(); ws != nil {
		// Closing waits (a while) for a writer stuck on a slow peer.
		go func() {
			_ = ws.WriteClose(r.Code, r.Text)
			_ = ws.Close()
		}()
		return
	}
	if r == live.EndSlow && c.w != nil {
		// The SSE writer is blocked on a client that does not read: cut
		// its writes off; the stream ends.
		_ = http.NewResponseController(c.w).SetWriteDeadline(time.Now())
	}
	// Otherwise closing the event channel completes the SSE stream.
}

// liveWebsocket is gqlgen's WebSocket transport with the connection
// remembered for endConnection.
type liveWebsocket struct{ transport.Websocket }

func (t liveWebsocket) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	c := &liveConn{w: w, header: r.Header}
	ctx := live.WithConn(context.WithValue(r.Context(), liveConnKey{}, c), c)
	t.Websocket.Do(w, r.WithContext(ctx), exec)
}

// liveAccept accepts with coder/websocket (gqlgen's default) and records
// the connection.
type liveAccept struct {
	transport.CoderWebsocketImplementation
}

func (i liveAccept) Accept(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	ws, err := i.CoderWebsocketImplementation.Accept(w, r, o)
	if c := liveConnFrom(r.Context()); err == nil && c != nil {
		c.mu.Lock()
		c.ws = ws
		c.mu.Unlock()
	}
	return ws, err
}

// liveSSE is gqlgen's SSE transport with the response remembered, the
// events numbered by their log ids, and a reconnecting client's
// Last-Event-ID passed to its subscription.
type liveSSE struct{ transport.SSE }

// Supports takes gqlgen's SSE requests that stream (Streams): a plain
// query from a client that also accepts JSON is answered as one result.
func (t liveSSE) Supports(r *http.Request) bool {
	return t.SSE.Supports(r) && Streams(r)
}

func (t liveSSE) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	c := &liveConn{w: w, sse: true}
	ctx := live.WithConn(context.WithValue(r.Context(), liveConnKey{}, c), c)
	if id := strings.TrimSpace(r.Header.Get("Last-Event-ID")); id != "" {
		ctx = live.WithResume(ctx, id)
	}
	t.SSE.Do(sseIDs{ResponseWriter: w, c: c}, r.WithContext(ctx), exec)
}

// addLiveTransports adds the WebSocket and SSE transports. They go before
// the GET/POST transport: an SSE request is a POST too.
func addLiveTransports(srv *handler.Server, r *graph.Resolver, cfg HandlerConfig) {
	keepAlive := live.DefaultConfig.KeepAlive
	if r.Live != nil && r.Live.Config().KeepAlive > 0 {
		keepAlive = r.Live.Config().KeepAlive
	}
	srv.AddTransport(liveSSE{transport.SSE{KeepAlivePingInterval: keepAlive}})
	srv.AddTransport(liveWebsocket{transport.Websocket{
		Implementation:        liveAccept{},
		InitFunc:              wsInit(cfg),
		InitTimeout:           10 * time.Second,
		KeepAlivePingInterval: keepAlive,
		PingPongInterval:      keepAlive,
		PayloadReadLimit:      ptr(int64(64 << 10)),
	}})
	// Every operation on a WebSocket checks the connection's key again (a
	// key revoked since connection_init ends the connection), and queries
	// and mutations get loaders of their own (subscriptions build theirs
	// per event).
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		c := liveConnFrom(ctx)
		ws := c.websocket()
		if ws == nil {
			return next(ctx)
		}
		c.mu.Lock()
		key := c.key
		c.mu.Unlock()
		// The connection's principal (connection_init or the upgrade
		// request), read once, then checked again against its key.
		p := model.PrincipalFrom(ctx)
		if key != "" && cfg.Authenticate != nil {
			fresh, err := cfg.Authenticate(ctx, key)
			if err != nil {
				if model.ErrorCode(err) == model.EUNAUTHENTICATED {
					c.End(live.EndRevoked)
				}
				return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{
					Message:    model.ErrorMessage(err),
					Extensions: map[string]any{"code": gqlCodes[model.ErrorCode(err)]},
				}}})
			}
			p = fresh
		}
		if cfg.RateLimit != nil {
			if err := cfg.RateLimit(ctx, p); err != nil {
				return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{
					Message:    model.ErrorMessage(err),
					Extensions: map[string]any{"code": gqlCodes[model.ErrorCode(err)]},
				}}})
			}
		}
		op := graphql.GetOperationContext(ctx)
		switch {
		case p == nil:
		case op.Operation != nil && op.Operation.Operation != ast.Subscription:
			ctx = r.Res.Session(ctx, p) // the principal and loaders of the operation
			// What a mutation writes is dropped from the response
			// cache before its answer is sent (httpapi), so a read
			// over HTTP after it never finds the old answer.
			var after func()
			ctx, after = respcache.BeginOperation(ctx, p.AccountID)
			h := next(ctx)
			return func(ctx context.Context) *graphql.Response {
				resp := h(ctx)
				if resp != nil {
					after()
				}
				return resp
			}
		default:
			ctx = model.WithPrincipal(ctx, p) // each event gets loaders of its own
		}
		return next(ctx)
	})
}

// wsInit authenticates a WebSocket from its connection_init payload: the
// Authorization member ("Token <key>" or "Bearer <key>"), or apiKey or
// token with the bare key. Without one, the upgrade request's principal
// (from its Authorization header) stands; with neither the connection is
// refused with 4401.
func wsInit(cfg HandlerConfig) transport.WebsocketInitFunc {
	refuse := func(ctx context.Context, code int, msg string) (context.Context, *transport.InitPayload, error) {
		ctx = transport.WithWebsocketCloseCode(ctx, code)
		ctx = transport.AppendCloseReason(ctx, msg)
		return ctx, nil, model.Errorf(model.EUNAUTHENTICATED, "%s", msg)
	}
	return func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		key := ""
		if auth := strings.TrimSpace(p.Authorization()); auth != "" {
			scheme, k, ok := strings.Cut(auth, " ")
			if ok && (strings.EqualFold(scheme, "Token") || strings.EqualFold(scheme, "Bearer")) {
				key = strings.TrimSpace(k)
			} else {
				key = auth
			}
		}
		for _, name := range []string{"apiKey", "token"} {
			if key == "" {
				key = strings.TrimSpace(p.GetString(name))
			}
		}
		c := liveConnFrom(ctx)
		if key == "" {
			if model.PrincipalFrom(ctx) == nil {
				return refuse(ctx, 4401, "Unauthorized: send the API key in connection_init as {\"Authorization\": \"Token <key>\"}")
			}
			// The upgrade request's header authenticated the connection.
			if c != nil {
				scheme, k, _ := strings.Cut(strings.TrimSpace(c.header.Get("Authorization")), " ")
				if strings.EqualFold(scheme, "Token") || strings.EqualFold(scheme, "Bearer") {
					c.mu.Lock()
					c.key = strings.TrimSpace(k)
					c.mu.Unlock()
				}
			}
			return ctx, nil, nil
		}
		if cfg.Authenticate == nil {
			return refuse(ctx, 4500, "authentication is not configured")
		}
		pr, err := cfg.Authenticate(ctx, key)
		if err != nil {
			if model.ErrorCode(err) == model.EUNAUTHENTICATED {
				return refuse(ctx, 4401, "Unauthorized: the API key is unknown or revoked")
			}
			cfg.Logger.Error("websocket authentication failed", "err", err)
			return refuse(ctx, 1013, "the database is unavailable; try again shortly")
		}
		if c != nil {
			c.mu.Lock()
			c.key = key
			c.mu.Unlock()
		}
		return model.WithPrincipal(ctx, pr), nil, nil
	}
}

func ptr[T any](v T) *T { return &v }
