package db_test

import (
	"context"
	"testing"

	"shipgraph/db"
)

// citusFloor is the last migration a Citus cluster can go down to: the
// migrations up to 00036 made the schema runnable on Citus (row counters,
// per-account change-log positions, shard-local triggers), and the schema
// before them cannot serve writes there. Every later migration's down runs
// on both engines.
const citusFloor = 36

// A seeded database taken down to citusFloor and migrated up again (the
// migrations, then the distribution step, as shipgraph migrate runs them)
// keeps its rows, and a write afterwards is logged at the account's next
// change-log position and counted. On Citus this is how a team rolls back
// a release's migrations.
func TestMigrationsDownToCitusFloorAndUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, p := seededMigrations(t, 30, 11)
	q := store.SQL()
	var acct string
	if err := q.QueryRowContext(ctx, `SELECT account_id FROM shipments ORDER BY account_id, id LIMIT 1`).Scan(&acct); err != nil {
		t.Fatal(err)
	}
	count := func() (rows, listed, head int64) {
		t.Helper()
		if err := q.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM shipments WHERE account_id = $1),
				(SELECT coalesce(sum(n), 0) FROM list_counts WHERE account_id = $1 AND list = 'shipments'),
				(SELECT coalesce(max(pos), 0) FROM change_log WHERE account_id = $1)`, acct).Scan(&rows, &listed, &head); err != nil {
			t.Fatal(err)
		}
		return
	}
	rows0, listed0, _ := count()
	if rows0 == 0 || listed0 != rows0 {
		t.Fatalf("seeded: %d shipments, %d counted", rows0, listed0)
	}
	if _, err := p.DownTo(ctx, citusFloor); err != nil {
		t.Fatalf("down: %v", err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	if err := db.Distribute(ctx, q); err != nil {
		t.Fatal(err)
	}
	rows1, listed1, head1 := count()
	if rows1 != rows0 || listed1 != listed0 {
		t.Fatalf("after down and up: %d shipments, %d counted; want %d, %d", rows1, listed1, rows0, listed0)
	}
	// The search columns, kept by triggers since 00054 (on Citus added
	// again and filled by its up), hold their expression's values.
	var drift, searched int
	if err := q.QueryRowContext(ctx, searchColumnsDrift).Scan(&drift, &searched); err != nil || drift != 0 || searched == 0 {
		t.Fatalf("after down and up: %d of %d rows' search columns differ from their expression (%v)", drift, searched, err)
	}
	// Two changes in one transaction: positions head+1 and head+2 (the
	// per-transaction positions of 00041, re-created by the up).
	tx, err := q.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"ROLLBACK0001", "ROLLBACK0002"} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number,
				shipping_line_scac, shipping_line_name, shipping_line_short_name) VALUES ($1, $2, $2, 'MAEU', 'Maersk', 'Maersk')`, acct, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows2, listed2, head2 := count()
	if rows2 != rows0+2 || listed2 != rows2 || head2 != head1+2 {
		t.Fatalf("after two inserts: %d shipments, %d counted, head %d; want %d, %d, %d", rows2, listed2, head2, rows0+2, rows0+2, head1+2)
	}
}
