package webhook

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	// DeliveriesTotal counts delivery attempts by outcome: succeeded,
	// retry (failed, tried again later), failed (given up), refused (the
	// address guard refused the connection; also retried or failed), and
	// queue_full (recorded failed without an attempt: WEBHOOK_QUEUE_LIMIT).
	DeliveriesTotal = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "shipgraph_webhook_deliveries_total",
		Help: "Webhook delivery attempts by outcome (succeeded, retry, failed), and notifications not queued (queue_full).",
	}, []string{"outcome"})
	deliveredOK    = DeliveriesTotal.WithLabelValues("succeeded")
	deliveredRetry = DeliveriesTotal.WithLabelValues("retry")
	deliveredFail  = DeliveriesTotal.WithLabelValues("failed")
	queueFull      = DeliveriesTotal.WithLabelValues("queue_full")

	// QueueDepth is the number of pending notifications of all accounts,
	// as the fan-out last counted them.
	QueueDepth = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "shipgraph_webhook_queue_depth",
		Help: "Pending webhook notifications (all accounts), as last counted.",
	})

	// AttemptSeconds is the duration of one HTTP attempt.
	AttemptSeconds = promauto.NewHistogram(prometheus.HistogramOpts{
		Name:    "shipgraph_webhook_attempt_seconds",
		Help:    "Duration of one webhook HTTP attempt.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	})

	// LatencySeconds is, for each delivered notification, the time from
	// its creation (the fan-out, right after the change committed) to the
	// receiver's 2xx.
	LatencySeconds = promauto.NewHistogram(prometheus.HistogramOpts{
		Name:    "shipgraph_webhook_delivery_latency_seconds",
		Help:    "Time from a webhook notification's creation to its successful delivery.",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600},
	})
)
