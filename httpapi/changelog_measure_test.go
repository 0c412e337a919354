package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

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
