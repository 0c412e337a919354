package webhook_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"shipgraph/db"
	"shipgraph/jobs"
	"shipgraph/testkit"
	"shipgraph/webhook"
)

// The two designs of delivery compared (docs/decisions.md, "Webhook
// delivery stays on its claim loop"): the dispatcher's claim loop, and a
// River job per notification on the one job engine (package jobs),
// inserted in the transaction that raises the notification. The fan-out
// is the same for both and left out: each round inserts notifications
// (and, for River, their jobs) in one transaction, as the fan-out would.
//
//	go test ./webhook -run '^$' -bench DeliveryEngines -benchtime 200x -count 2

// benchDelivery is the River job of the second design: one notification.
type benchDelivery struct {
	Account string `json:"account"`
	ID      string `json:"id"`
}

func (benchDelivery) Kind() string { return "webhook_delivery_bench" }

// benchDeliveryWorker claims the job's notification (the job is the claim;
// the row's claim columns name the attempt's owner, as RecordWebhookAttempt
// needs) and makes the attempt with the dispatcher's code.
type benchDeliveryWorker struct {
	river.WorkerDefaults[benchDelivery]
	store *db.DB
	d     *webhook.Dispatcher
	ctx   context.Context // counts statements
}

func (w *benchDeliveryWorker) Work(_ context.Context, j *river.Job[benchDelivery]) error {
	dl := db.WebhookDelivery{AccountID: j.Args.Account, ID: j.Args.ID}
	err := w.store.SQL().QueryRowContext(w.ctx, `UPDATE webhook_notifications n SET claimed_by = $3, claimed_until = now() + interval '1 minute'
FROM webhooks wh WHERE n.account_id = $1 AND n.id = $2 AND wh.account_id = $1 AND wh.id = n.webhook_id
RETURNING n.webhook_id, n.event, n.attempts, n.created_at, wh.url, wh.secret`, dl.AccountID, dl.ID, w.d.Owner()).Scan(
		&dl.WebhookID, &dl.Event, &dl.Attempts, &dl.CreatedAt, &dl.URL, &dl.Secret)
	if err != nil {
		return err
	}
	db.CountStatement(w.ctx)
	w.d.Deliver(&dl)
	return nil
}

// BenchmarkDeliveryEngines: loop is the dispatcher as configured by
// default (at most 2 in flight per webhook); loop-8 lets it use all 8
// workers on the one webhook, as River does (River limits concurrency per
// queue, not per webhook); river polls for jobs every second (the jobs
// engine's default: River's database/sql driver does not LISTEN), and
// river-50ms every 50 ms.
func BenchmarkDeliveryEngines(b *testing.B) {
	for _, design := range []string{"loop", "loop-8", "river", "river-50ms"} {
		b.Run(design, func(b *testing.B) { benchDeliveryEngine(b, design) })
	}
}

func benchDeliveryEngine(b *testing.B, design string) {
	e := newEnv(b)
	r := newReceiver(b)
	hook := e.webhook(b, e.acme, r.URL, webhook.EventContainerUpdated)
	var stmts atomic.Int64
	counted := db.WithQueryCounter(context.Background(), &stmts)
	c := e.config(webhook.Config{Abort: counted, Poll: webhook.Defaults.Poll})
	if design == "loop-8" {
		c.PerWebhook = webhook.Defaults.Workers
	}
	var payloads atomic.Int64
	render := c.Payload
	c.Payload = func(ctx context.Context, account, id string) ([]byte, error) {
		payloads.Add(1) // the payload's statement (the /v2 renderer's are its own)
		return render(ctx, account, id)
	}
	d := webhook.NewDispatcher(e.Store, c)
	var eng *jobs.Engine
	ctx, cancel := context.WithCancel(counted)
	done := make(chan struct{})
	if design == "loop" || design == "loop-8" {
		go func() { d.Run(ctx); close(done) }()
	} else {
		fetch := time.Second
		if design == "river-50ms" {
			fetch = 50 * time.Millisecond
		}
		eng = jobs.New(e.Store, jobs.Config{FetchInterval: fetch, RescueAfter: time.Minute, JobTimeout: time.Minute, MaxAttempts: 1})
		if err := eng.Register(jobs.Queue{Name: "webhook_bench", Workers: webhook.Defaults.Workers, Register: func(w *river.Workers) {
			river.AddWorker(w, &benchDeliveryWorker{store: e.Store, d: d, ctx: counted})
		}}); err != nil {
			b.Fatal(err)
		}
		if err := eng.Open(); err != nil {
			b.Fatal(err)
		}
		if err := eng.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		close(done)
	}
	b.Cleanup(func() {
		cancel()
		<-done
		if eng != nil {
			_ = eng.Stop(context.Background())
		}
	})
	var change atomic.Int64
	// raise inserts n notifications (distinct records) in one transaction
	// and, for River, their jobs in the same one.
	raise := func(n int) {
		tx, err := e.Store.SQL().BeginTx(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		var params []river.InsertManyParams
		for range n {
			var id string
			if err := tx.QueryRow(`INSERT INTO webhook_notifications (account_id, webhook_id, event, change_id, reference_type, reference_id, payload)
VALUES ($1, $2, 'container.updated', $3, 'container', gen_random_uuid(), '{}') RETURNING id`, e.acme, hook, change.Add(1)).Scan(&id); err != nil {
				b.Fatal(err)
			}
			params = append(params, river.InsertManyParams{Args: benchDelivery{Account: e.acme, ID: id},
				InsertOpts: &river.InsertOpts{Queue: "webhook_bench"}})
		}
		if eng != nil {
			if _, err := eng.InsertManyTx(context.Background(), tx, params); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		if eng == nil {
			d.Wake() // the fan-out wakes its process' dispatcher
		}
	}
	// Write transactions: the next transaction id (assigned to writing
	// transactions only; reading it takes none). This benchmark's database
	// is the only busy one of its server.
	writes := func() int64 {
		var n int64
		e.one(b, `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint`, &n)
		return n
	}

	// Latency: one notification at a time, from its commit to the POST.
	lat := make([]time.Duration, 0, b.N)
	stmts.Store(0)
	payloads.Store(0)
	x0 := writes()
	b.ResetTimer()
	for range b.N {
		raise(1)
		committed := time.Now()
		dl := r.wait(b, 30*time.Second)
		lat = append(lat, dl.at.Sub(committed))
	}
	b.StopTimer()
	waitRecorded(b, e, hook)
	perDelivery := float64(stmts.Load()+payloads.Load()) / float64(b.N)
	xPer := float64(writes()-x0-int64(b.N)) / float64(b.N) // less the bench's own raises
	slices.Sort(lat)

	// Throughput: a burst of 1,000 raised at once (10 transactions).
	const burst = 1000
	start := time.Now()
	for range burst / 100 {
		raise(100)
	}
	testkit.WaitFor(b, 5*time.Minute, "the burst delivered", func() bool {
		return len(r.deliveries()) >= b.N+burst
	})
	rate := burst / time.Since(start).Seconds()

	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(perDelivery, "stmts/delivery")
	b.ReportMetric(xPer, "writes/delivery")
	b.ReportMetric(rate, "deliveries/s")
	b.Logf("%s: %d deliveries, p50 %s p99 %s, %.1f statements and %.1f write transactions per delivery, burst %.0f/s",
		b.Name(), b.N, lat[len(lat)/2], lat[len(lat)*99/100], perDelivery, xPer, rate)
}

// waitRecorded waits until no notification of hook is pending (every
// attempt recorded).
func waitRecorded(b *testing.B, e *env, hook string) {
	testkit.WaitFor(b, time.Minute, fmt.Sprintf("webhook %s's attempts recorded", hook), func() bool {
		return e.Count(b, `SELECT count(*) FROM webhook_notifications WHERE webhook_id = $1 AND delivery_status = 'pending'`, hook) == 0
	})
}
