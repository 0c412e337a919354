package webhook_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/testkit"
	"shipgraph/webhook"
)

// wakeOnFeed wakes the fan-out on the account's change NOTIFY, as the
// server does with the change log's wake-up.
func wakeOnFeed(b *testing.B, store *db.DB, account string, wake func()) {
	l := store.Listen(time.Second)
	b.Cleanup(l.Close)
	sub := l.Subscribe(1024, db.FeedChange)
	if err := l.Listen(account); err != nil {
		b.Fatal(err)
	}
	go func() {
		for range sub.Events() {
			wake()
		}
	}()
	time.Sleep(200 * time.Millisecond) // listening
}

// startWoken is start with the fan-out woken by NOTIFY.
func (e *env) startWoken(b *testing.B, c webhook.Config) {
	c = e.config(c)
	c.Poll = time.Second
	d := webhook.NewDispatcher(e.Store, c)
	f := webhook.NewFanOut(e.Store, c, d.Wake)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { d.Run(ctx); done <- struct{}{} }()
	go func() { f.Run(ctx); done <- struct{}{} }()
	wakeOnFeed(b, e.Store, e.acme, f.Wake)
	b.Cleanup(func() { cancel(); <-done; <-done })
}

// BenchmarkCommitToReceiver: one change at a time, from its commit (the
// UPDATE's return) to the receiver's request; reports p50 and p99.
//
//	go test ./webhook -run '^$' -bench CommitToReceiver -benchtime 300x
func BenchmarkCommitToReceiver(b *testing.B) {
	e := newEnv(b)
	r := newReceiver(b)
	c1, _ := e.containerOf(b, e.acme, 0)
	e.webhook(b, e.acme, r.URL, webhook.EventContainerUpdated)
	e.startWoken(b, webhook.Config{})
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		e.toggle(b, c1)
		committed := time.Now()
		d := r.wait(b, 10*time.Second)
		lat = append(lat, d.at.Sub(committed))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkTenEndpointsOneDead: each change raises one notification for
// each of 10 webhooks, one of which never answers (held until the
// timeout); reports the notifications per second delivered to the nine
// others.
//
//	go test ./webhook -run '^$' -bench TenEndpoints -benchtime 500x
func BenchmarkTenEndpointsOneDead(b *testing.B) {
	e := newEnv(b)
	dead := newReceiver(b)
	dead.SetHang(true)
	e.webhook(b, e.acme, dead.URL, webhook.EventContainerUpdated)
	var live []*receiver
	for range 9 {
		r := newReceiver(b)
		live = append(live, r)
		e.webhook(b, e.acme, r.URL, webhook.EventContainerUpdated)
	}
	var containers []string
	for i := range 4 {
		c, _ := e.containerOf(b, e.acme, i)
		containers = append(containers, c)
	}
	abort, kill := context.WithCancel(context.Background())
	b.Cleanup(kill)
	e.startWoken(b, webhook.Config{Abort: abort})
	delivered := func() (n int64) {
		for _, r := range live {
			n += int64(len(r.Got.All()))
		}
		return n
	}
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		e.toggle(b, containers[i%len(containers)])
	}
	want := int64(9 * b.N)
	testkit.WaitFor(b, 10*time.Minute, "every live delivery", func() bool { return delivered() >= want })
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(want)/el.Seconds(), "notifications/s")
	b.ReportMetric(float64(len(dead.deliveries())), "dead-requests")
}
