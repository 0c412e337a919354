package testkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// WS is a graphql-transport-ws client (the protocol of the graphql-ws
// library) over coder/websocket: it answers the server's pings and hands
// every other message to the reader.
type WS struct {
	t    testing.TB
	c    *websocket.Conn
	msgs chan WSMsg
	err  chan error // the connection's end (a websocket.CloseError when closed)
}

// WSQueue is how many messages a client holds unread; small, so that
// memory measured in the test's process is mostly the server's.
const WSQueue = 64

// WSMsg is one message of the protocol.
type WSMsg struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// DialWS connects to the server at base (http://…) and sends
// connection_init with payload; it returns once the server acknowledged,
// or the error that ended the connection. The connection ends with the
// test.
func DialWS(tb testing.TB, base string, payload any, header http.Header) (*WS, error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/graphql", &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"},
		HTTPHeader:   header,
	})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 24)
	w := &WS{t: tb, c: c, msgs: make(chan WSMsg, WSQueue), err: make(chan error, 1)}
	tb.Cleanup(func() { _ = c.CloseNow() })
	if err := wsjson.Write(ctx, c, map[string]any{"type": "connection_init", "payload": payload}); err != nil {
		return nil, err
	}
	go w.read()
	select {
	case m := <-w.msgs:
		if m.Type != "connection_ack" {
			return nil, fmt.Errorf("got %s before connection_ack", m.Type)
		}
		return w, nil
	case err := <-w.err:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (w *WS) read() {
	for {
		var m WSMsg
		if err := wsjson.Read(context.Background(), w.c, &m); err != nil {
			w.err <- err
			return
		}
		if m.Type == "ping" {
			_ = wsjson.Write(context.Background(), w.c, map[string]any{"type": "pong"})
			continue
		}
		w.msgs <- m
	}
}

// Msgs is the channel of messages, for a test that selects on it.
func (w *WS) Msgs() <-chan WSMsg { return w.msgs }

// Close ends the connection with a close handshake: code and reason.
func (w *WS) Close(code websocket.StatusCode, reason string) error { return w.c.Close(code, reason) }

// CloseNow drops the connection without a close handshake.
func (w *WS) CloseNow() error { return w.c.CloseNow() }

// Subscribe starts operation id.
func (w *WS) Subscribe(id, query string, vars map[string]any) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := wsjson.Write(ctx, w.c, map[string]any{"id": id, "type": "subscribe",
		"payload": map[string]any{"query": query, "variables": vars}}); err != nil {
		w.t.Fatal(err)
	}
}

// Next returns the next message, or fails after timeout.
func (w *WS) Next(timeout time.Duration) WSMsg {
	w.t.Helper()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m := <-w.msgs:
		return m
	case err := <-w.err:
		w.t.Fatalf("connection ended: %v", err)
	case <-t.C:
		w.t.Fatalf("no message within %s", timeout)
	}
	return WSMsg{}
}

// NextByID reads the next n messages (each within timeout) and returns
// their payloads by operation id: for subscriptions whose messages come
// in no set order.
func (w *WS) NextByID(n int, timeout time.Duration) map[string]string {
	w.t.Helper()
	got := map[string]string{}
	for range n {
		m := w.Next(timeout)
		got[m.ID] = string(m.Payload)
	}
	return got
}

// None checks that no message arrives within d.
func (w *WS) None(d time.Duration) {
	w.t.Helper()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case m := <-w.msgs:
		w.t.Fatalf("unexpected message %s %s", m.Type, m.Payload)
	case <-t.C:
	}
}

// Closed waits for the connection to end and returns its close status and
// reason.
func (w *WS) Closed(timeout time.Duration) (websocket.StatusCode, string) {
	w.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case <-w.msgs:
		case err := <-w.err:
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Reason
			}
			return -1, err.Error()
		case <-deadline:
			w.t.Fatalf("connection still open after %s", timeout)
		}
	}
}

// Event decodes the data of a next message into into, failing tb on any
// other message or on errors.
func Event(tb testing.TB, m WSMsg, into any) {
	tb.Helper()
	if m.Type != "next" {
		tb.Fatalf("got %s %s, want next", m.Type, m.Payload)
	}
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors []any           `json:"errors"`
	}
	if err := json.Unmarshal(m.Payload, &r); err != nil {
		tb.Fatal(err)
	}
	if len(r.Errors) > 0 {
		tb.Fatalf("errors: %s", m.Payload)
	}
	if err := json.Unmarshal(r.Data, into); err != nil {
		tb.Fatal(err)
	}
}
