package testkit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// SubscribeSSE opens a GraphQL subscription over Server-Sent Events at
// base (http://…) with key, and delivers the data of each "next" event;
// the channel closes when the stream ends. stop ends the subscription (it
// also ends with the test). An answer other than a 200 event stream fails
// tb with its body.
func SubscribeSSE(tb testing.TB, base, key, query string) (events <-chan json.RawMessage, stop func()) {
	tb.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Token "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); res.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		cancel()
		tb.Fatalf("SSE subscription: %d %s %s", res.StatusCode, ct, b)
	}
	out := make(chan json.RawMessage, 100000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		ev := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && ev == "next":
				select {
				case out <- json.RawMessage(strings.TrimPrefix(line, "data: ")):
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	tb.Cleanup(func() { cancel(); <-done })
	return out, cancel
}
