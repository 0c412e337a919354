package tracking_test

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"testing"
	"time"

	"shipgraph/carrier/sim"
	"shipgraph/carrier/tracking"
	"shipgraph/db"
	"shipgraph/jobs"
	"shipgraph/testkit/pg"
)

// childEnv, set, makes the test binary an engine process of the crash
// test (TestKilledMidPoll): the database URL and the simulator's URL.
const childEnv = "SHIPGRAPH_TRACKING_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		runChild(v)
		return
	}
	pg.Main(m)
}

// runChild runs an engine until killed.
func runChild(v string) {
	dbURL, simURL, _ := strings.Cut(v, " ")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	store, err := db.Open(ctx, dbURL)
	if err != nil {
		os.Exit(2)
	}
	c := tracking.Default
	for _, scac := range sim.DefaultSCACs {
		k := tracking.DefaultCarrier
		k.SCAC, k.BaseURL, k.Timeout = scac, simURL+"/"+scac, time.Minute
		c.Carriers = append(c.Carriers, k)
	}
	c.ScheduleEvery, c.PollTimeout, c.RescueAfter = 50*time.Millisecond, 2*time.Minute, 3*time.Minute
	j := jobs.New(store, jobsConfig(c))
	if _, err := tracking.New(c, store, j, nil); err != nil {
		os.Exit(3)
	}
	if err := j.Open(); err != nil {
		os.Exit(3)
	}
	if err := j.Start(ctx); err != nil {
		os.Exit(4)
	}
	<-ctx.Done()
}

// jobsConfig is the job engine of a test's tracking engine: River's
// timeouts as the server sets them from c, and a fetch every 20 ms.
func jobsConfig(c tracking.Config) jobs.Config {
	return jobs.Config{JobTimeout: c.PollTimeout, RescueAfter: c.RescueAfter, FetchInterval: 20 * time.Millisecond, MaxAttempts: 5}
}

// newEngine builds a tracking engine on a job engine of its own over
// store, open (inserts work) but not started; the job engine stops when tb
// ends.
func newEngine(tb testing.TB, c tracking.Config, store *db.DB, opts ...tracking.Option) (*tracking.Engine, *jobs.Engine) {
	tb.Helper()
	return newLoggedEngine(tb, c, store, nil, opts...)
}

// newLoggedEngine is newEngine with the engine's log going to log.
func newLoggedEngine(tb testing.TB, c tracking.Config, store *db.DB, log *slog.Logger, opts ...tracking.Option) (*tracking.Engine, *jobs.Engine) {
	tb.Helper()
	j := jobs.New(store, jobsConfig(c))
	eng, err := tracking.New(c, store, j, log, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	if err := j.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = j.Stop(ctx)
	})
	return eng, j
}

// enqueuePoll asks eng for a poll of the request id in a transaction of
// its own, as the API does in the one that creates the request.
func enqueuePoll(ctx context.Context, eng *tracking.Engine, store *db.DB, accountID, id string) error {
	tx, err := store.SQL().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := eng.EnqueuePollTx(ctx, tx, accountID, id); err != nil {
		return err
	}
	return tx.Commit()
}
