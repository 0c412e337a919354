package db_test

import (
	"context"
	"sync"
	"testing"

	"shipgraph/db"
	"shipgraph/model"
)

// TestTrackingRequestDuplicateRace: concurrent creates of one number, type
// and SCAC in an account: the unique index lets exactly one through, and
// the others get ErrDuplicateTrackingRequest (a conflict), not an internal
// error; another account and another type are not duplicates.
func TestTrackingRequestDuplicateRace(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f.DB.CreateTrackingRequest(ctx, f.A.Account,
				&model.TrackingRequest{RequestType: "bill_of_lading", RequestNumber: "MEDURACE1", Scac: "MSCU"}, nil, nil)
		}()
	}
	wg.Wait()
	created := 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case model.ErrorCode(err) != model.ECONFLICT || model.ErrorMessage(err) != db.ErrDuplicateTrackingRequest.Message:
			t.Errorf("a racing create: %v", err)
		}
	}
	if created != 1 {
		t.Fatalf("%d of %d racing creates succeeded, want 1", created, n)
	}
	for _, c := range []struct {
		account, typ string
	}{{f.B.Account, "bill_of_lading"}, {f.A.Account, "booking_number"}} {
		r := &model.TrackingRequest{RequestType: c.typ, RequestNumber: "MEDURACE1", Scac: "MSCU"}
		if err := f.DB.CreateTrackingRequest(ctx, c.account, r, nil, nil); err != nil || r.Status != model.TrackingPending || r.NextPollAt == nil || r.AccountID != c.account {
			t.Errorf("%s %s: %v %+v", c.account, c.typ, err, r)
		}
	}
	// Another account's request is not read, listed or updated.
	page, err := f.DB.ListTrackingRequests(ctx, f.B.Account, model.TrackingRequestFilter{RequestNumber: "medu race1"}, model.PageRequest{Limit: 10})
	if err != nil || len(page.Items) != 1 || page.Items[0].AccountID != f.B.Account {
		t.Fatalf("globex's list: %v %+v", err, page)
	}
	theirs := page.Items[0].ID
	if got, err := f.DB.TrackingRequestsByIDs(ctx, f.A.Account, []string{theirs}); err != nil || len(got) != 0 {
		t.Errorf("acme reads globex's request: %v %v", got, err)
	}
	if _, err := f.DB.UpdateTrackingRequest(ctx, f.A.Account, theirs, db.TrackingRequestPatch{Tags: []string{"x"}, SetTags: true}); model.ErrorCode(err) != model.ENOTFOUND {
		t.Errorf("acme updates globex's request: %v", err)
	}
}
