package db_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/model"
)

// TestFirstPollLeavesRequestToItsJob: a request created with its first
// poll enqueued in the same transaction is left to that poll for the
// lease, so the schedule's claim does not take it again (a claim of every
// new request re-inserted a job River already had and held the rows its
// polls were writing); one created without a poll is due at once, for the
// schedule.
func TestFirstPollLeavesRequestToItsJob(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	enqueued := 0
	first := &db.FirstPoll{Lease: time.Hour, Enqueue: func(context.Context, *sql.Tx, *model.TrackingRequest) error {
		enqueued++
		return nil
	}}
	polled := &model.TrackingRequest{RequestType: "bill_of_lading", RequestNumber: "MEDUFIRST1", Scac: "MSCU"}
	if err := f.DB.CreateTrackingRequest(ctx, f.A.Account, polled, nil, first); err != nil {
		t.Fatal(err)
	}
	plain := &model.TrackingRequest{RequestType: "bill_of_lading", RequestNumber: "MEDUFIRST2", Scac: "MSCU"}
	if err := f.DB.CreateTrackingRequest(ctx, f.A.Account, plain, nil, nil); err != nil {
		t.Fatal(err)
	}
	if enqueued != 1 {
		t.Fatalf("the first poll was enqueued %d times, want 1", enqueued)
	}
	var claimed []string
	if _, err := f.DB.ClaimDueTrackingRequests(ctx, 100, time.Minute, func(_ context.Context, _ *sql.Tx, due []db.DueTracking) error {
		for _, d := range due {
			if d.AccountID == f.A.Account {
				claimed = append(claimed, d.ID)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(claimed) != 1 || claimed[0] != plain.ID {
		t.Errorf("the schedule claimed %v, want only the request without a poll (%s), not the one with its poll enqueued (%s)",
			claimed, plain.ID, polled.ID)
	}
}
