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

	// FanOutLag is the age of the oldest change_log row the webhook
	// cursor has not passed (among the next page's), 0 when the fan-out
	// is caught up, as last measured (FanOut.CheckLag, every few seconds).
	FanOutLag = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "shipgraph_webhook_fanout_lag_seconds",
		Help: "Age of the oldest change-log row the webhook fan-out has not read yet; 0 when caught up.",
	})

	// ChangesLost counts logged changes whose notifications were never
	// raised, by reason: poison_row (the fan-out could not derive or
	// insert them and skipped the row), pruned_unread (pruning passed
	// the ceiling, CHANGE_LOG_WEBHOOK_CEILING, and deleted rows the
	// fan-out had not read). Each is also logged at ERROR.
	ChangesLost = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "shipgraph_webhook_changes_lost_total",
		Help: "Change-log rows whose webhook notifications were never raised: poison_row (skipped by the fan-out), pruned_unread (pruned before the fan-out read them).",
	}, []string{"reason"})
	lostPoison = ChangesLost.WithLabelValues("poison_row")
	lostPruned = ChangesLost.WithLabelValues("pruned_unread")

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
