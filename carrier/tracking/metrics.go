package tracking

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// The pipeline of one poll, measured: what bounds an account's polls a
// second is how many polls a batch carries and how long its transaction
// holds the account (docs/tracking.md, "One account's pipeline").
var (
	// PollSeconds is the time of each step of a poll: read (the request's
	// target), fetch (the carrier's answer), queue (waiting for its
	// account's batch to start), write (the batch's transaction).
	PollSeconds = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "shipgraph_tracking_poll_step_seconds",
		Help:    "Time of each step of a tracking poll: read, fetch (the carrier), queue (waiting for its account's batch), write (the batch's transaction).",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"step"})
	stepRead  = PollSeconds.WithLabelValues("read")
	stepFetch = PollSeconds.WithLabelValues("fetch")
	stepQueue = PollSeconds.WithLabelValues("queue")
	stepWrite = PollSeconds.WithLabelValues("write")

	// BatchPolls is how many polls each batch wrote in one transaction
	// (of several accounts on plain PostgreSQL).
	BatchPolls = promauto.NewHistogram(prometheus.HistogramOpts{
		Name:    "shipgraph_tracking_batch_polls",
		Help:    "Polls written by one transaction (group commit; of several accounts on plain PostgreSQL).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
	})

	// Postponed counts polls put off without a carrier's answer, by
	// reason: carrier_busy (its rate or concurrency limit), request_busy
	// (another transaction held the request).
	Postponed = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "shipgraph_tracking_polls_postponed_total",
		Help: "Tracking polls snoozed without an answer: carrier_busy (the carrier's limits), request_busy (another transaction held the request).",
	}, []string{"reason"})
	postponedCarrier = Postponed.WithLabelValues(whyCarrier)
	postponedRequest = Postponed.WithLabelValues(whyRequest)
)
