package db_test

import (
	"context"
	"testing"

	"shipgraph/model"
)

// Migration 00013 backfills one tracking request per existing shipment
// under the id webhook payloads already gave it (model.TrackingRequestID),
// created or tracking_stopped as its shipment, and its down migration
// leaves every other row in place.
func TestTrackingMigrationBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, p := seededMigrations(t, 60, 3)
	q := store.SQL()
	if _, err := q.ExecContext(ctx, `UPDATE shipments SET line_tracking_stopped_at = now(), line_tracking_stopped_reason = 'cancelled_by_user'
		WHERE id = (SELECT id FROM shipments ORDER BY id LIMIT 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 12); err != nil {
		t.Fatalf("down: %v", err)
	}
	var logged int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM change_log`).Scan(&logged); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	var after int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM change_log`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != logged {
		t.Errorf("the backfill logged %d changes, want none", after-logged)
	}
	rows, err := q.QueryContext(ctx, `SELECT s.id, s.account_id, coalesce(t.id::text, ''), coalesce(t.status, ''),
			coalesce(t.request_number, ''), s.bill_of_lading_number, s.line_tracking_stopped_at IS NOT NULL
		FROM shipments s LEFT JOIN tracking_requests t ON t.account_id = s.account_id AND t.shipment_id = s.id
		ORDER BY s.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, stopped := 0, 0
	for rows.Next() {
		var id, acct, tr, status, number, bol string
		var isStopped bool
		if err := rows.Scan(&id, &acct, &tr, &status, &number, &bol, &isStopped); err != nil {
			t.Fatal(err)
		}
		n++
		if want := model.TrackingRequestID(id); tr != want {
			t.Errorf("shipment %s: tracking request %q, want %q", id, tr, want)
		}
		want := "created"
		if isStopped {
			want = "tracking_stopped"
			stopped++
		}
		if status != want {
			t.Errorf("shipment %s: status %q, want %q", id, status, want)
		}
		if number == "" {
			t.Errorf("shipment %s (%s): empty request number", id, bol)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 60 || stopped == 0 {
		t.Fatalf("%d shipments (%d stopped), want 60 (some stopped)", n, stopped)
	}
}
