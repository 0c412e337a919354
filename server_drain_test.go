package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shipgraph/db/dbtest"
)

// TestDrainOnShutdown: on the signal, /readyz answers 503 at once while
// the API is still served for SHUTDOWN_DELAY, every answer closing its
// connection; then the server shuts down. Under load over keep-alive
// connections, no request fails: those in flight at the signal and those
// sent until the load balancer (here: the load itself) saw /readyz say 503
// all get their answer.
func TestDrainOnShutdown(t *testing.T) {
	url := dbtest.NewDB(t)
	keys := seedKeys(t, url, "3")
	key := keys["acme admin"]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var stderr syncBuffer
	go func() {
		code := run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn", "--database-url", url, "--shutdown-delay", "1500ms", "--rate-limit", "0"}, pw, &stderr)
		pw.Close()
		done <- code
	}()
	var base string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "shipgraph listening on "); ok {
			base = rest
			go func() { _, _ = io.Copy(io.Discard, pr) }()
			break
		}
	}
	if base == "" {
		t.Fatalf("serve exited before listening: %s", stderr.String())
	}

	// Load: POSTs (never retried by the client) over keep-alive
	// connections, until the load balancer takes the server out.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	var (
		ok, failed, closedConns atomic.Int64
		deregistered            atomic.Bool
		mu                      sync.Mutex
		failures                []string
		wg                      sync.WaitGroup
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !deregistered.Load() {
				req, _ := http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(`{"query":"{ viewer { role } }"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Token "+key)
				res, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					failed.Add(1)
					mu.Lock()
					failures = append(failures, res.Status)
					mu.Unlock()
					continue
				}
				if res.Close {
					closedConns.Add(1)
				}
				ok.Add(1)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	cancel() // SIGTERM
	time.Sleep(200 * time.Millisecond)
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatalf("/readyz while draining: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz while draining: %d, want 503", res.StatusCode)
	}
	before := ok.Load()
	time.Sleep(500 * time.Millisecond)
	if ok.Load() == before {
		t.Error("the API stopped answering during the drain delay")
	}
	// The load balancer has taken the server out (within the delay).
	deregistered.Store(true)
	wg.Wait()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve exited %d: %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	if failed.Load() != 0 {
		t.Errorf("%d requests failed in flight (%d answered): %v", failed.Load(), ok.Load(), failures[:min(5, len(failures))])
	}
	if closedConns.Load() == 0 {
		t.Error("no answer closed its connection during the drain")
	}
	t.Logf("%d answered, %d with Connection: close, 0 failed", ok.Load(), closedConns.Load())
}
