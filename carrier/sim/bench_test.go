package sim_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"shipgraph/carrier/sim"
)

// BenchmarkNew: building the world of 8 carriers × 12 shipments.
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := sim.New(sim.Options{Seed: 1, Epoch: epoch}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEventsPage: one GET /{SCAC}/v2/events page of up to 100 events
// of a bill of lading, over real HTTP on loopback.
func BenchmarkEventsPage(b *testing.B) {
	s := start(b, sim.Options{Seed: 1})
	s.Clock.Set(epoch.Add(30 * 24 * time.Hour))
	var n sim.Number
	for _, x := range s.Numbers() {
		if x.RequestType == "bill_of_lading" {
			n = x
			break
		}
	}
	u := eventsURL(s.URL, n, "")
	var size int
	for b.Loop() {
		res, err := http.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		size = len(body)
	}
	b.ReportMetric(float64(size), "bytes/page")
}
