package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

// Latency from a plain SQL UPDATE's commit to the event at a graphql-ws
// client and an SSE client, over 200 changes: reported, not asserted
// (timing depends on the machine).
func TestLiveLatency(t *testing.T) {
	d := newLiveDB(t)
	in := start(t, d.url, nil)
	ws := in.ws(t, d.keys["acme/admin"])
	ws.Subscribe("1", containerSub, nil)
	sse, stop := testkit.SubscribeSSE(t, in.url, d.keys["acme/viewer"], containerSub)
	defer stop()
	testkit.WaitFor(t, 5*time.Second, "two subscriptions", func() bool { return in.h.Subscriptions() == 2 })
	id, _ := d.container(t, "acme", 0)
	const n = 200
	var wsLat, sseLat []time.Duration
	for i := range n {
		start := time.Now()
		d.exec(t, `UPDATE containers SET seal_number = $2 WHERE id = $1`, id, fmt.Sprint("L", i))
		for got := 0; got < 2; got++ {
			select {
			case m := <-ws.Msgs():
				var e containerEvent
				testkit.Event(t, m, &e)
				wsLat = append(wsLat, time.Since(start))
			case data := <-sse:
				var r struct{ Data containerEvent }
				if err := json.Unmarshal(data, &r); err != nil {
					t.Fatal(err)
				}
				sseLat = append(sseLat, time.Since(start))
			case <-time.After(5 * time.Second):
				t.Fatalf("change %d: no event", i)
			}
		}
	}
	for name, l := range map[string][]time.Duration{"graphql-ws": wsLat, "SSE": sseLat} {
		if len(l) != n {
			t.Fatalf("%s: %d events, want %d", name, len(l), n)
		}
		slices.Sort(l)
		t.Logf("%s: %d changes, UPDATE commit → event: p50 %v, p99 %v, max %v", name, n,
			l[n/2].Round(10*time.Microsecond), l[n*99/100-1].Round(10*time.Microsecond), l[n-1].Round(10*time.Microsecond))
	}
}

// Memory of idle subscriptions, measured in this process (server and Go
// clients together, so an upper bound of the server's share): reported,
// not asserted.
func TestLiveIdleMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 subscriptions")
	}
	d := newLiveDB(t)
	cfg := testkit.Defaults()
	cfg.Live.MaxPerKey = 0
	cfg.RateLimit = 0 // 1,000 subscriptions in a second are a burst beyond it
	in := start(t, d.url, &cfg)
	heap := func() (uint64, uint64, int) {
		for range 3 {
			runtime.GC()
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc, m.StackInuse, runtime.NumGoroutine()
	}
	measure := func(conns, perConn int) {
		before, s0, g0 := heap()
		var clients []*testkit.WS
		for range conns {
			c := in.ws(t, d.keys["acme/admin"])
			clients = append(clients, c)
		}
		for _, c := range clients {
			for j := range perConn {
				c.Subscribe(fmt.Sprint(j), containerSub, nil)
			}
		}
		total := conns * perConn
		testkit.WaitFor(t, 30*time.Second, "the subscriptions", func() bool { return in.h.Subscriptions() == total })
		after, s1, g1 := heap()
		if f := os.Getenv("LIVE_HEAP_PROFILE"); f != "" && perConn > 1 {
			out, _ := os.Create(f)
			_ = pprof.WriteHeapProfile(out)
			_ = out.Close()
		}
		t.Logf("%d idle subscriptions on %d WebSocket connections: heap +%.1f MiB, stacks +%.1f MiB: %.1f KiB a subscription; goroutines +%d",
			total, conns, float64(after-before)/(1<<20), float64(s1-s0)/(1<<20), float64(after-before+s1-s0)/1024/float64(total), g1-g0)
		// One change reaches every one of them.
		id, _ := d.container(t, "acme", 0)
		d.exec(t, `UPDATE containers SET seal_number = $2 WHERE id = $1`, id, fmt.Sprint("M", time.Now().UnixNano()))
		for _, c := range clients {
			for range perConn {
				if m := c.Next(20 * time.Second); m.Type != "next" {
					t.Fatalf("got %s", m.Type)
				}
			}
			_ = c.CloseNow()
		}
		testkit.WaitFor(t, 30*time.Second, "the subscriptions to end", func() bool { return in.h.Subscriptions() == 0 })
	}
	measure(20, 50)
	measure(1000, 1)
}

// /v2 PATCH throughput with the change log and with the trigger before it
// (notify only), on loopback, interleaved rounds: reported, not asserted.
// Run with SHIPGRAPH_MEASURE=1 (docs/live.md has the numbers).
func TestChangeLogPatchThroughput(t *testing.T) {
	if os.Getenv("SHIPGRAPH_MEASURE") == "" {
		t.Skip("a measurement: set SHIPGRAPH_MEASURE=1")
	}
	d := newLiveDB(t)
	cfg := testkit.Defaults()
	cfg.RateLimit = 0
	in := start(t, d.url, &cfg)
	mig, err := os.ReadFile("../db/migrations/00008_change_log.sql")
	if err != nil {
		t.Fatal(err)
	}
	body := func(s string) string {
		a := strings.Index(s, "CREATE OR REPLACE FUNCTION")
		return s[a:strings.Index(s, "-- +goose StatementEnd")]
	}
	up, down, _ := strings.Cut(string(mig), "-- +goose Down")
	variants := []struct{ name, fn string }{{"log", body(up)}, {"notify-only", body(down)}}

	slug := d.shortTextSlug(t, "acme")
	shipments := pg.Column[string](t, d.sql, `SELECT s.id FROM shipments s JOIN accounts a ON a.id = s.account_id WHERE a.slug = 'acme' ORDER BY s.id`)
	key := d.keys["acme/member"]
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	patch := func(shipment string, i int) error {
		req, _ := http.NewRequest(http.MethodPatch, in.url+"/v2/shipments/"+shipment+"/custom_fields/"+slug,
			strings.NewReader(fmt.Sprintf(`{"data":{"type":"custom_field","attributes":{"value":"v%d"}}}`, i)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Token "+key)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("PATCH: %d", res.StatusCode)
		}
		return nil
	}
	// One worker per shipment: no two wait on one row.
	workers, round := min(4, len(shipments)), 4*time.Second
	results := map[string][]float64{}
	for r := range 4 {
		for _, v := range variants {
			if _, err := d.sql.Exec(v.fn); err != nil {
				t.Fatal(err)
			}
			var n atomic.Int64
			deadline := time.Now().Add(round)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := 0; time.Now().Before(deadline); i++ {
						if err := patch(shipments[w%len(shipments)], r*1_000_000+i); err != nil {
							t.Error(err)
							return
						}
						n.Add(1)
					}
				})
			}
			wg.Wait()
			results[v.name] = append(results[v.name], float64(n.Load())/round.Seconds())
		}
	}
	for _, v := range variants {
		sum := 0.0
		for _, r := range results[v.name] {
			sum += r
		}
		t.Logf("%s: PATCH /v2/shipments/{id}/custom_fields/{slug}, %d workers: %.0f req/s on average, per round %.0f", v.name, workers, sum/float64(len(results[v.name])), results[v.name])
	}
}
