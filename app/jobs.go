package app

import (
	"context"
	"log/slog"
	"time"

	"shipgraph/carrier/tracking"
	"shipgraph/config"
	"shipgraph/db"
	"shipgraph/docproc"
	"shipgraph/sharedlimit"
)

// trackingConfig is the tracking engine's configuration from the declared
// settings (config/settings.go): CARRIERS with each carrier's
// CARRIER_<SCAC>_* family members, and the TRACKING_* settings.
func trackingConfig(v *config.Values) (tracking.Config, error) {
	c := tracking.Default
	family := v.Family(config.Carrier)
	var err error
	if c.Carriers, err = tracking.ParseCarriers(v.String(config.Carriers), func(suffix string) string { return family[suffix] }); err != nil {
		return c, err
	}
	c.Workers = v.Int(config.TrackingWorkers)
	c.PollInterval = v.Duration(config.TrackingPollInterval)
	c.AwaitingInterval = v.Duration(config.TrackingAwaitingInterval)
	c.RetryBase = v.Duration(config.TrackingRetryBase)
	c.MaxAttempts = v.Int(config.TrackingMaxAttempts)
	c.ScheduleEvery = v.Duration(config.TrackingScheduleEvery)
	c.PollTimeout = v.Duration(config.TrackingPollTimeout)
	c.RescueAfter = v.Duration(config.TrackingRescueAfter)
	c.FetchInterval = v.Duration(config.TrackingFetchInterval)
	c.StopAfterArrival = v.Duration(config.TrackingStopAfterArrival)
	c.MaxResponse = v.Int64(config.TrackingMaxResponse)
	c.MaxEvents = v.Int(config.TrackingMaxEvents)
	c.RefreshLimit = v.Int(config.TrackingRefreshLimit)
	// Behind PgBouncer in transaction mode LISTEN does not work: River
	// polls for jobs instead.
	c.PollOnly = v.String(config.DatabasePooler) == "pgbouncer"
	return c, c.Check()
}

// newTracking builds the tracking engine over store; it starts with the
// background components (p.tracking).
func newTracking(v *config.Values, store *db.DB, shared *sharedlimit.Limits, docs *docproc.Processor, log *slog.Logger) (*tracking.Engine, error) {
	c, err := trackingConfig(v)
	if err != nil {
		return nil, err
	}
	var opts []tracking.Option
	if shared != nil {
		opts = append(opts, tracking.WithShared(shared))
	}
	// One job engine per process: the document jobs run on the tracking
	// engine's River client, in a queue of their own.
	if docs != nil {
		opts = append(opts, tracking.WithQueue(docproc.Queue, v.Int(config.DocumentWorkers), docs.AddWorkers))
	}
	e, err := tracking.New(c, store, log, opts...)
	if err != nil {
		return nil, err
	}
	if docs != nil {
		docs.Use(e.Client())
	}
	return e, nil
}

// runTracking polls carriers until ctx ends, then lets the polls in
// flight finish for up to TRACKING_POLL_TIMEOUT (a poll cut short wrote
// nothing and runs again later).
func (p *process) runTracking(ctx context.Context) {
	// River's client would stop hard when its start context ends: the
	// stop below is the soft one, with its own deadline.
	if err := p.tracking.Start(context.WithoutCancel(ctx)); err != nil {
		p.log.Error("tracking engine did not start", "err", err)
		return
	}
	<-ctx.Done()
	stop, cancel := context.WithTimeout(context.Background(), p.v.Duration(config.TrackingPollTimeout)+5*time.Second)
	defer cancel()
	if err := p.tracking.Stop(stop); err != nil {
		p.log.Warn("tracking engine stopped with an error", "err", err)
	}
}
