package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shipgraph/app"
	"shipgraph/db/dbtest"
	"shipgraph/testkit"
)

// TestDrainOnShutdown: on the signal, /readyz answers 503 at once while
// the API is still served for SHUTDOWN_DELAY, every answer closing its
// connection; then the server shuts down. Under load over keep-alive
// connections, no request fails: those in flight at the signal and those
// sent until the load balancer (here: the load itself) saw /readyz say 503
// all get their answer.
//
// SIGTERM is a cancelled context here (any cause but app.ErrInterrupted);
// TestInterruptSkipsDelay holds Ctrl-C's way.
func TestDrainOnShutdown(t *testing.T) {
	url := dbtest.NewDB(t)
	keys := seedKeys(t, url, "3")
	key := keys["acme admin"]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done, stderr := startServe(t, ctx, "--database-url", url, "--shutdown-delay", "1500ms", "--rate-limit", "0")

	// Load: POSTs (never retried by the client) over keep-alive
	// connections. Each worker is its own load balancer: it takes the
	// server out when an answer closes its connection (the drain has
	// begun), so the test waits for events — load running, /readyz 503,
	// every worker answered during the drain — never for a sleep that the
	// 1.5 s delay could outrun under load.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	const workers = 8
	var (
		ok, failed, closedConns atomic.Int64
		signalled               atomic.Bool
		mu                      sync.Mutex
		failures                []string
		wg                      sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				req, _ := http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(`{"query":"{ viewer { role } }"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Token "+key)
				res, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					failed.Add(1)
					mu.Lock()
					failures = append(failures, res.Status)
					mu.Unlock()
					return
				}
				ok.Add(1)
				if res.Close {
					if !signalled.Load() {
						t.Error("an answer closed its connection before the signal")
					}
					closedConns.Add(1)
					return // taken out: the drain was seen
				}
			}
		}()
	}
	testkit.WaitFor(t, 30*time.Second, "the load to run", func() bool { return ok.Load() >= 50 })
	signalled.Store(true)
	cancel() // SIGTERM
	ready := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	testkit.WaitFor(t, 10*time.Second, "/readyz to answer 503 while draining", func() bool {
		res, err := ready.Get(base + "/readyz")
		if err != nil {
			t.Fatalf("/readyz while draining: %v", err)
		}
		res.Body.Close()
		return res.StatusCode == http.StatusServiceUnavailable
	})
	// Every worker got an answer during the drain, closing its connection.
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(30 * time.Second):
		t.Fatal("the load did not see the drain")
	}
	if code := waitServe(t, done, 30*time.Second, "serve"); code > 0 {
		t.Errorf("serve exited %d: %s", code, stderr.String())
	}
	if failed.Load() != 0 {
		t.Errorf("%d requests failed in flight (%d answered): %v", failed.Load(), ok.Load(), failures[:min(5, len(failures))])
	}
	if closedConns.Load() != workers {
		t.Errorf("%d of %d workers got an answer closing its connection during the drain", closedConns.Load(), workers)
	}
	t.Logf("%d answered, %d with Connection: close, 0 failed", ok.Load(), closedConns.Load())
}

// TestInterruptSkipsDelay: Ctrl-C at a terminal (SIGINT: the context
// cancelled with app.ErrInterrupted) stops serve after the requests in
// flight, without the SHUTDOWN_DELAY meant for load balancers — here an
// hour, which a drain would wait out.
func TestInterruptSkipsDelay(t *testing.T) {
	url := dbtest.NewDB(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	base, done, stderr := startServe(t, ctx, "--database-url", url, "--shutdown-delay", "1h")
	if res, err := http.Get(base + "/healthz"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %v %v", res, err)
	}
	cancel(app.ErrInterrupted) // Ctrl-C
	if code := waitServe(t, done, 60*time.Second, "serve (waiting for SHUTDOWN_DELAY after Ctrl-C?)"); code > 0 {
		t.Errorf("serve exited %d: %s", code, stderr.String())
	}
}
