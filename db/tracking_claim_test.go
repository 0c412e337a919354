package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"shipgraph/db"
)

// TestClaimDueTrackingRequestsInChunks: the schedule's claim commits a few
// accounts at a time, each group's requests enqueued in its own
// transaction, so polls start before every account is claimed; the batch
// bound holds across groups, and a group whose enqueue fails leaves its
// requests due while the groups before it stay claimed.
func TestClaimDueTrackingRequestsInChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := openDB(t)
	q := d.SQL()
	const accounts = 21 // more than one group of 16
	due := 0
	for i := range accounts {
		var a string
		if err := q.QueryRowContext(ctx, `INSERT INTO accounts (slug, company_name) VALUES ($1, $1) RETURNING id`,
			fmt.Sprintf("claim-%02d", i)).Scan(&a); err != nil {
			t.Fatal(err)
		}
		per := 1
		if i == 0 {
			per = 3
		}
		for j := range per {
			if _, err := q.ExecContext(ctx, `INSERT INTO tracking_requests (account_id, request_type, request_number, scac, next_poll_at)
				VALUES ($1, 'bill_of_lading', $2, 'MSCU', now() - interval '1 minute')`, a, fmt.Sprintf("MEDUCLAIM%02d%d", i, j)); err != nil {
				t.Fatal(err)
			}
			due++
		}
	}
	stillDue := func() int {
		t.Helper()
		var n int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM tracking_requests WHERE next_poll_at <= now()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	makeDue := func() {
		t.Helper()
		if _, err := q.ExecContext(ctx, `UPDATE tracking_requests SET next_poll_at = now() - interval '1 minute'`); err != nil {
			t.Fatal(err)
		}
	}

	// Every due request, in two transactions (16 accounts, then 5).
	var groups []int
	seen := map[string]bool{}
	n, err := d.ClaimDueTrackingRequests(ctx, 1000, time.Minute, time.Second, func(_ context.Context, _ *sql.Tx, got []db.DueTracking) ([]db.DueTracking, error) {
		groups = append(groups, len(got))
		for _, g := range got {
			if seen[g.ID] {
				t.Errorf("request %s claimed twice", g.ID)
			}
			seen[g.ID] = true
		}
		return nil, nil
	})
	if err != nil || n != due || len(seen) != due {
		t.Fatalf("claimed %d (%d distinct), %v; want %d", n, len(seen), err, due)
	}
	if len(groups) != 2 || groups[0]+groups[1] != due || groups[1] != accounts-16 {
		t.Errorf("enqueued in groups %v, want two: 16 accounts' requests, then %d", groups, accounts-16)
	}
	if left := stillDue(); left != 0 {
		t.Errorf("%d requests still due after the claim", left)
	}
	if n, err := d.ClaimDueTrackingRequests(ctx, 1000, time.Minute, time.Second, func(context.Context, *sql.Tx, []db.DueTracking) ([]db.DueTracking, error) {
		t.Error("enqueue called with nothing due")
		return nil, nil
	}); err != nil || n != 0 {
		t.Errorf("a second claim: %d, %v; want 0", n, err)
	}

	// The bound: at most limit requests over the groups, the requests of
	// equal next_poll_at included (the claim's per-account subquery, if
	// run again for each row it joins, returned other rows of a tie each
	// time: 7 claimed for 5 before it was ordered by id as well).
	makeDue()
	calls := 0
	n, err = d.ClaimDueTrackingRequests(ctx, 5, time.Minute, time.Second, func(_ context.Context, _ *sql.Tx, got []db.DueTracking) ([]db.DueTracking, error) {
		calls++
		return nil, nil
	})
	if err != nil || n != 5 || calls != 1 {
		t.Errorf("claim of 5: %d in %d calls, %v", n, calls, err)
	}
	if left := stillDue(); left != due-n {
		t.Errorf("%d still due after claiming %d of %d, want %d", left, n, due, due-n)
	}

	// A failed enqueue leaves its group due; the group before stays claimed.
	makeDue()
	calls = 0
	var sizes []int
	boom := errors.New("queue down")
	n, err = d.ClaimDueTrackingRequests(ctx, 1000, time.Minute, time.Second, func(_ context.Context, _ *sql.Tx, got []db.DueTracking) ([]db.DueTracking, error) {
		calls++
		sizes = append(sizes, len(got))
		if calls == 2 {
			return nil, boom
		}
		return nil, nil
	})
	if !errors.Is(err, boom) || len(sizes) != 2 || n != sizes[0] {
		t.Errorf("claim with the second enqueue failing: %d, %v, groups %v; want the first group's and the enqueue's error", n, err, sizes)
	}
	if left := stillDue(); len(sizes) == 2 && left != sizes[1] {
		t.Errorf("%d still due, want the failed group's %d", left, sizes[1])
	}
}

// TestClaimRechecksSkippedRequests: a claimed request that enqueue got no
// poll for (its poll still waiting or running: River keeps one a request)
// is due again after the recheck, not after the lease. Without it a poll
// that recorded a retry (due again a backoff later) and was still running
// when the next round claimed its request left the request with no poll
// until the lease ran out (6 minutes by default).
func TestClaimRechecksSkippedRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := openDB(t)
	q := d.SQL()
	var a string
	if err := q.QueryRowContext(ctx, `INSERT INTO accounts (slug, company_name) VALUES ('recheck', 'Recheck') RETURNING id`).Scan(&a); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := q.ExecContext(ctx, `INSERT INTO tracking_requests (account_id, request_type, request_number, scac, next_poll_at)
			VALUES ($1, 'bill_of_lading', $2, 'MSCU', now() - interval '1 minute')`, a, fmt.Sprintf("MEDURECHECK%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var skipped string
	n, err := d.ClaimDueTrackingRequests(ctx, 10, time.Hour, 2*time.Second, func(_ context.Context, _ *sql.Tx, due []db.DueTracking) ([]db.DueTracking, error) {
		skipped = due[0].ID
		return due[:1], nil
	})
	if err != nil || n != 3 {
		t.Fatalf("claim: %d, %v; want 3", n, err)
	}
	rows, err := q.QueryContext(ctx, `SELECT id, extract(epoch FROM next_poll_at - now())::float8 FROM tracking_requests WHERE account_id = $1`, a)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var in float64
		if err := rows.Scan(&id, &in); err != nil {
			t.Fatal(err)
		}
		switch {
		case id == skipped && (in > 2 || in < 0):
			t.Errorf("the request enqueued no poll for is due in %.1f s, want within the recheck (2 s)", in)
		case id != skipped && in < 3500:
			t.Errorf("an enqueued request is due in %.1f s, want the lease (an hour)", in)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
