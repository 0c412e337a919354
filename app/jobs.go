package app

import (
	"context"
	"log/slog"
	"time"

	"shipgraph/carrier/tracking"
	"shipgraph/config"
	"shipgraph/datasync"
	"shipgraph/db"
	"shipgraph/docproc"
	"shipgraph/files"
	"shipgraph/jobs"
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
	c.Writers = v.Int(config.TrackingWriters)
	c.PollInterval = v.Duration(config.TrackingPollInterval)
	c.AwaitingInterval = v.Duration(config.TrackingAwaitingInterval)
	c.RetryBase = v.Duration(config.TrackingRetryBase)
	c.MaxAttempts = v.Int(config.TrackingMaxAttempts)
	c.ScheduleEvery = v.Duration(config.TrackingScheduleEvery)
	c.PollTimeout = v.Duration(config.TrackingPollTimeout)
	c.RescueAfter = v.Duration(config.TrackingRescueAfter)
	c.StopAfterArrival = v.Duration(config.TrackingStopAfterArrival)
	c.MaxResponse = v.Int64(config.TrackingMaxResponse)
	c.MaxEvents = v.Int(config.TrackingMaxEvents)
	c.RefreshLimit = v.Int(config.TrackingRefreshLimit)
	return c, c.Check()
}

// jobsConfig is the job engine's configuration: the River settings the
// tracking polls always set (TRACKING_POLL_TIMEOUT is every job's
// deadline unless its worker says otherwise, TRACKING_RESCUE_AFTER and
// TRACKING_FETCH_INTERVAL hold for every queue).
func jobsConfig(v *config.Values, log *slog.Logger) jobs.Config {
	return jobs.Config{
		JobTimeout:    v.Duration(config.TrackingPollTimeout),
		RescueAfter:   v.Duration(config.TrackingRescueAfter),
		FetchInterval: v.Duration(config.TrackingFetchInterval),
		// Behind PgBouncer in transaction mode LISTEN does not work:
		// River polls for jobs instead.
		PollOnly:    v.String(config.DatabasePooler) == "pgbouncer",
		MaxAttempts: 5,
		Logger:      log,
	}
}

// newJobs builds the job engine and the components that work on it — the
// document processing, the tracking engine and the data sync, each
// registering its queue — then opens it. It starts with the background components
// (runJobs).
func newJobs(v *config.Values, store *db.DB, shared *sharedlimit.Limits, fs *files.Store, log *slog.Logger) (*jobs.Engine, *docproc.Processor, *tracking.Engine, *datasync.Syncer, error) {
	tc, err := trackingConfig(v)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	j := jobs.New(store, jobsConfig(v, log))
	docs, err := docproc.New(store, fs, j, v.Int(config.DocumentWorkers), log)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	syncer, err := datasync.New(store, j, datasync.Config{Workers: v.Int(config.SyncWorkers), Key: v.String(config.SyncSecretKey),
		AllowPrivate: v.Bool(config.WebhookAllowPrivateURLs)}, log)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	var opts []tracking.Option
	if shared != nil {
		opts = append(opts, tracking.WithShared(shared))
	}
	trk, err := tracking.New(tc, store, j, log, opts...)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if err := j.Open(); err != nil {
		return nil, nil, nil, nil, err
	}
	return j, docs, trk, syncer, nil
}

// runJobs works the job engine's queues until ctx ends, then lets the jobs
// in flight finish for up to TRACKING_POLL_TIMEOUT (a poll cut short wrote
// nothing and runs again later).
func (p *process) runJobs(ctx context.Context) {
	// River's client would stop hard when its start context ends: the
	// stop below is the soft one, with its own deadline.
	if err := p.jobs.Start(context.WithoutCancel(ctx)); err != nil {
		p.log.Error("job engine did not start", "err", err)
		return
	}
	<-ctx.Done()
	stop, cancel := context.WithTimeout(context.Background(), p.v.Duration(config.TrackingPollTimeout)+5*time.Second)
	defer cancel()
	if err := p.jobs.Stop(stop); err != nil {
		p.log.Warn("job engine stopped with an error", "err", err)
	}
}
