package tracking_test

import (
	"context"
	"os"
	"os/signal"
	"strings"
	"testing"
	"time"

	"shipgraph/carrier/sim"
	"shipgraph/carrier/tracking"
	"shipgraph/db"
	"shipgraph/db/dbtest"
)

// childEnv, set, makes the test binary an engine process of the crash
// test (TestKilledMidPoll): the database URL and the simulator's URL.
const childEnv = "SHIPGRAPH_TRACKING_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		runChild(v)
		return
	}
	dbtest.Main(m, db.Migrate)
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
	c.ScheduleEvery, c.FetchInterval, c.PollTimeout, c.RescueAfter = 50*time.Millisecond, 20*time.Millisecond, 2*time.Minute, 3*time.Minute
	eng, err := tracking.New(c, store, nil)
	if err != nil {
		os.Exit(3)
	}
	if err := eng.Start(ctx); err != nil {
		os.Exit(4)
	}
	<-ctx.Done()
}
