package jobs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/jobs"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

func TestMain(m *testing.M) { pg.Main(m) }

type pingArgs struct {
	N int `json:"n"`
}

func (pingArgs) Kind() string { return "jobs_test_ping" }

func (pingArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: "ping"} }

func open(t *testing.T) *db.DB {
	t.Helper()
	store := pg.At(t, dbtest.NewDB(t)).Store
	return store
}

// The engine is built in two steps: inserts wait for Open, and a queue
// registered after it is refused (its workers would never be known).
func TestOpenOnce(t *testing.T) {
	e := jobs.New(open(t), jobs.Config{})
	if _, err := e.Insert(context.Background(), pingArgs{}, nil); !errors.Is(err, jobs.ErrNotOpen) {
		t.Fatalf("insert before Open: %v, want ErrNotOpen", err)
	}
	add := func(w *river.Workers) {
		river.AddWorker(w, river.WorkFunc(func(context.Context, *river.Job[pingArgs]) error { return nil }))
	}
	if err := e.Register(jobs.Queue{Name: "ping", Register: add}); err != nil {
		t.Fatal(err)
	}
	if err := e.Open(); err != nil {
		t.Fatal(err)
	}
	if err := e.Register(jobs.Queue{Name: "late", Register: add}); err == nil {
		t.Fatal("a queue registered after Open was accepted")
	}
}

// A job inserted in a transaction exists exactly when it commits: rolled
// back, no worker ever sees it; committed, the worker runs it.
func TestInsertTxCommits(t *testing.T) {
	store := open(t)
	e := jobs.New(store, jobs.Config{FetchInterval: 20 * time.Millisecond, MaxAttempts: 1})
	ran := make(chan int, 10)
	err := e.Register(jobs.Queue{Name: "ping", Workers: 1, Register: func(w *river.Workers) {
		river.AddWorker(w, river.WorkFunc(func(_ context.Context, j *river.Job[pingArgs]) error { ran <- j.Args.N; return nil }))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Open(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Stop(stop)
	})
	insert := func(n int, commit bool) {
		tx, err := store.SQL().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.InsertTx(ctx, tx, pingArgs{N: n}, nil); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	insert(1, false)
	insert(2, true)
	if n := testkit.Recv(t, ran, 30*time.Second, "the committed job to run"); n != 2 {
		t.Fatalf("ran job %d, want 2 (1 was rolled back)", n)
	}
	var left int
	if err := store.SQL().QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE kind = 'jobs_test_ping' AND args->>'n' = '1'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d rows of the rolled-back job", left)
	}
}

type roundArgs struct{}

func (roundArgs) Kind() string { return "jobs_test_round" }

func (roundArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: "round", UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
		rivertype.JobStateRunning, rivertype.JobStateScheduled}}}
}

// A process that works a queue inserts the queue's OnStart jobs as it
// starts: River's first fetch runs them, with no leader elected and no
// periodic job (the fetch interval here is a minute). A second process
// starting while the first one's job runs inserts none (unique options).
func TestOnStartOnce(t *testing.T) {
	store := open(t)
	ran := make(chan struct{}, 10)
	release := make(chan struct{})
	start := func() {
		e := jobs.New(store, jobs.Config{FetchInterval: time.Minute, MaxAttempts: 1})
		err := e.Register(jobs.Queue{Name: "round", Workers: 1, OnStart: []river.JobArgs{roundArgs{}},
			Register: func(w *river.Workers) {
				river.AddWorker(w, river.WorkFunc(func(ctx context.Context, _ *river.Job[roundArgs]) error {
					ran <- struct{}{}
					select {
					case <-release:
					case <-ctx.Done():
					}
					return nil
				}))
			}})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Open(); err != nil {
			t.Fatal(err)
		}
		if err := e.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = e.Stop(stop)
		})
	}
	start()
	t.Cleanup(func() { close(release) })
	testkit.Recv(t, ran, 30*time.Second, "the job inserted at start to run")
	start()
	var n int
	if err := store.SQL().QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'jobs_test_round'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d jobs inserted at two starts, want 1 (the second a duplicate of the running one)", n)
	}
}
