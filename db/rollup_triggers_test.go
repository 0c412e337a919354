package db_test

import (
	"context"
	"database/sql"
	"testing"

	"shipgraph/db/dbtest"
)

// rollupChecks are the counters and rollups of one account ($1), each as
// kept (summed over slots) and as counted afresh from the rows (the
// queries of counters_recount, 00024), as one text each.
var rollupChecks = []struct{ name, got, want string }{
	{"list counts",
		`SELECT list || '|' || sum(n) FROM list_counts WHERE account_id = $1 AND list IN ('shipments', 'containers') GROUP BY list HAVING sum(n) <> 0`,
		`SELECT 'shipments|' || count(*) FROM shipments WHERE account_id = $1 HAVING count(*) > 0
		 UNION ALL SELECT 'containers|' || count(*) FROM containers WHERE account_id = $1 HAVING count(*) > 0`},
	{"container rollup",
		`SELECT concat_ws('|', status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, sum(n)) FROM container_stats
		 WHERE account_id = $1 GROUP BY status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week HAVING sum(n) <> 0`,
		`SELECT concat_ws('|', c.current_status, coalesce(c.pod_terminal_id, '00000000-0000-0000-0000-000000000000'), s.shipping_line_scac,
			coalesce(s.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'), stats_week(s.pod_eta_at, pz.time_zone), count(*))
		 FROM containers c JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id
		 LEFT JOIN ports pz ON pz.id = s.port_of_discharge_id
		 WHERE c.account_id = $1 GROUP BY c.current_status, c.pod_terminal_id, s.shipping_line_scac, s.port_of_discharge_id,
			stats_week(s.pod_eta_at, pz.time_zone)`},
	{"container LFD rollup",
		`SELECT concat_ws('|', status, pod_terminal_id, lfd_date, sum(n)) FROM container_lfd_stats
		 WHERE account_id = $1 GROUP BY status, pod_terminal_id, lfd_date HAVING sum(n) <> 0`,
		`SELECT concat_ws('|', c.current_status, coalesce(c.pod_terminal_id, '00000000-0000-0000-0000-000000000000'),
			stats_day(c.pickup_lfd, tp.time_zone), count(*))
		 FROM containers c LEFT JOIN terminals t ON t.id = c.pod_terminal_id LEFT JOIN ports tp ON tp.id = t.port_id
		 WHERE c.account_id = $1 GROUP BY c.current_status, c.pod_terminal_id, stats_day(c.pickup_lfd, tp.time_zone)`},
	{"shipment rollup",
		`SELECT concat_ws('|', pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, sum(n)) FROM shipment_stats
		 WHERE account_id = $1 GROUP BY pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week HAVING sum(n) <> 0`,
		`SELECT concat_ws('|', coalesce(s.pod_terminal_id, '00000000-0000-0000-0000-000000000000'), s.shipping_line_scac,
			coalesce(s.port_of_discharge_id, '00000000-0000-0000-0000-000000000000'), stats_week(s.pod_eta_at, pz.time_zone), count(*))
		 FROM shipments s LEFT JOIN ports pz ON pz.id = s.port_of_discharge_id
		 WHERE s.account_id = $1 GROUP BY s.pod_terminal_id, s.shipping_line_scac, s.port_of_discharge_id, stats_week(s.pod_eta_at, pz.time_zone)`},
	{"rows at zero",
		`SELECT ((SELECT count(*) FROM container_stats WHERE account_id = $1 AND n = 0) + (SELECT count(*) FROM container_lfd_stats WHERE account_id = $1 AND n = 0)
			+ (SELECT count(*) FROM shipment_stats WHERE account_id = $1 AND n = 0))::text`,
		`SELECT '0' WHERE $1::uuid IS NOT NULL`},
}

// TestRollupTriggersKeepEveryKey: the row triggers of 00064 (a container's
// shipment read alone, zones looked up only for an ETA or an LFD, an
// update's keys from one read, the list counted by the rollup trigger)
// keep every key of every rollup exact through the changes that move one:
// zones on both sides of a week's and a day's end, a container's LFD, its
// terminal (with and without an LFD), its status, its shipment, its
// shipment's port and ETA, deletes (one cascading), and a row counted in
// and out in one transaction. After each step each rollup, summed over
// slots, equals a count of the rows, and no row is left at zero. (Dates
// are literals: Citus refuses a STABLE expression on a column in an UPDATE.)
func TestRollupTriggersKeepEveryKey(t *testing.T) {
	t.Parallel()
	q := openDB(t).SQL()
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := q.Exec(query, args...); err != nil {
			t.Fatalf("%v\n%s", err, query)
		}
	}
	id := func(query string, args ...any) string {
		t.Helper()
		var s string
		if err := q.QueryRow(query, args...).Scan(&s); err != nil {
			t.Fatalf("%v\n%s", err, query)
		}
		return s
	}
	const acct = "5ba7d000-0000-4000-8000-0000000000a1"
	exec(`INSERT INTO accounts (id, slug, company_name) VALUES ($1, 'rollup-keys', 'Keys')`, acct)
	// 2026-06-07 20:00 UTC is a Sunday: Monday in Auckland (another week,
	// another day), Sunday in Los Angeles.
	akl := id(`INSERT INTO ports (code, name, country_code, time_zone) VALUES ('NZRKA', 'Auckland keys', 'NZ', 'Pacific/Auckland') RETURNING id`)
	lax := id(`INSERT INTO ports (code, name, country_code, time_zone) VALUES ('USRKL', 'Los Angeles keys', 'US', 'America/Los_Angeles') RETURNING id`)
	takl := id(`INSERT INTO terminals (port_id, name) VALUES ($1, 'Auckland keys terminal') RETURNING id`, akl)
	tlax := id(`INSERT INTO terminals (port_id, name) VALUES ($1, 'Los Angeles keys terminal') RETURNING id`, lax)
	const edge = "2026-06-07T20:00:00Z"
	ship := func(number string, port, term, eta any) string {
		t.Helper()
		return id(`INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, shipping_line_scac, shipping_line_name,
				shipping_line_short_name, port_of_discharge_id, pod_terminal_id, pod_eta_at)
			VALUES ($1, $2, $2, 'MAEU', 'Maersk', 'Maersk', $3, $4, $5) RETURNING id`, acct, number, port, term, eta)
	}
	check := func(step string) {
		t.Helper()
		for _, c := range rollupChecks {
			var got, want string
			if err := q.QueryRow(`SELECT coalesce(string_agg(r, '; ' ORDER BY r), '') FROM (`+c.got+`) x(r)`, acct).Scan(&got); err != nil {
				t.Fatalf("%s: %v\n%s", c.name, err, c.got)
			}
			if err := q.QueryRow(`SELECT coalesce(string_agg(r, '; ' ORDER BY r), '') FROM (`+c.want+`) x(r)`, acct).Scan(&want); err != nil {
				t.Fatalf("%s: %v\n%s", c.name, err, c.want)
			}
			if got != want {
				t.Errorf("%s: %s:\n kept    %s\n counted %s", step, c.name, got, want)
			}
		}
	}

	s1 := ship("KEYS1", akl, takl, edge)
	s2 := ship("KEYS2", lax, nil, edge)
	s3 := ship("KEYS3", nil, nil, nil)
	exec(`INSERT INTO containers (account_id, shipment_id, number, pod_terminal_id, pickup_lfd_line) VALUES
		($1, $2, 'KEYU0000001', $5, $7::timestamptz), ($1, $2, 'KEYU0000002', NULL, NULL),
		($1, $3, 'KEYU0000003', $6, $7::timestamptz), ($1, $4, 'KEYU0000004', $5, NULL)`, acct, s1, s2, s3, takl, tlax, edge)
	check("insert")
	container := func(n int) string {
		return id(`SELECT id FROM containers WHERE account_id = $1 AND number = $2`, acct, []string{"", "KEYU0000001", "KEYU0000002", "KEYU0000003", "KEYU0000004"}[n])
	}
	c1, c2, c3, c4 := container(1), container(2), container(3), container(4)

	exec(`UPDATE containers SET pickup_lfd_line = '2026-06-08T20:00:00Z' WHERE account_id = $1 AND id = $2`, acct, c1)
	check("an LFD moved")
	exec(`UPDATE containers SET pod_terminal_id = $3 WHERE account_id = $1 AND id = $2`, acct, c1, tlax)
	check("a terminal in another zone, with an LFD")
	exec(`UPDATE containers SET pod_terminal_id = $3 WHERE account_id = $1 AND id = $2`, acct, c4, tlax)
	check("a terminal in another zone, no LFD")
	exec(`UPDATE containers SET current_status = 'available' WHERE account_id = $1 AND id IN ($2, $3, $4)`, acct, c1, c2, c4)
	check("statuses")
	exec(`UPDATE containers SET shipment_id = $3 WHERE account_id = $1 AND id = $2`, acct, c2, s2)
	check("a container to another shipment")
	exec(`UPDATE containers SET shipment_id = $3, current_status = 'new', pod_terminal_id = $4, pickup_lfd_line = $5::timestamptz
		WHERE account_id = $1 AND id = $2`, acct, c4, s1, takl, edge)
	check("a container to another shipment, with every key")
	exec(`UPDATE shipments SET port_of_discharge_id = $3, pod_eta_at = '2026-06-10T20:00:00Z' WHERE account_id = $1 AND id = $2`, acct, s1, lax)
	check("a shipment's port and ETA")
	exec(`UPDATE shipments SET pod_eta_at = $3::timestamptz, port_of_discharge_id = $4 WHERE account_id = $1 AND id = $2`, acct, s3, edge, akl)
	check("an ETA and port where there were none")
	exec(`UPDATE shipments SET shipping_line_scac = 'MSCU', pod_terminal_id = $3 WHERE account_id = $1 AND id = $2`, acct, s2, tlax)
	check("a shipment's line and terminal")
	exec(`UPDATE containers SET pickup_lfd_line = NULL WHERE account_id = $1 AND id = $2`, acct, c3)
	check("an LFD gone")

	// Counted in and out by one transaction (one slot): its rows at zero
	// are gone at the end.
	tx, err := q.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`INSERT INTO containers (account_id, shipment_id, number, pod_terminal_id, pickup_lfd_line) VALUES ($1, $2, 'KEYU0000005', $3, '2026-06-07T10:00:00Z')`,
		`UPDATE containers SET current_status = 'grounded' WHERE account_id = $1 AND number = 'KEYU0000005' AND shipment_id = $2 AND $3::uuid IS NOT NULL`,
		`DELETE FROM containers WHERE account_id = $1 AND number = 'KEYU0000005' AND shipment_id = $2 AND $3::uuid IS NOT NULL`,
	} {
		if _, err := tx.Exec(s, acct, s3, takl); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	check("in and out in one transaction")

	exec(`DELETE FROM containers WHERE account_id = $1 AND id = $2`, acct, c3)
	check("a container deleted")
	exec(`DELETE FROM shipments WHERE account_id = $1 AND id = $2`, acct, s1)
	check("a shipment deleted with its containers")
	exec(`DELETE FROM shipments WHERE account_id = $1`, acct)
	check("all deleted")
}

// TestRollupTriggersReadOnlyWhatDecides (00064): a row's counters and
// rollups cost one trigger and read only what decides their keys. A
// container's status change reads its shipment once (it was share-locked
// by one statement and read with its ports by another) and no zone when
// the shipment has no ETA and the container no LFD (the dates are
// 'infinity' in any zone); a shipment's change of line reads no zone
// without an ETA; a new container or shipment calls no list_counts_row
// (its rollup trigger counts the list). Plain PostgreSQL only: on Citus
// the triggers run on the workers, whose statistics these are not.
func TestRollupTriggersReadOnlyWhatDecides(t *testing.T) {
	t.Parallel()
	if dbtest.Citus(t) {
		t.Skip("the triggers run on the workers")
	}
	q := openDB(t).SQL()
	ctx := context.Background()
	id := func(query string, args ...any) string {
		t.Helper()
		var s string
		if err := q.QueryRow(query, args...).Scan(&s); err != nil {
			t.Fatalf("%v\n%s", err, query)
		}
		return s
	}
	const acct = "5ba7d000-0000-4000-8000-0000000000a2"
	if _, err := q.Exec(`INSERT INTO accounts (id, slug, company_name) VALUES ($1, 'rollup-reads', 'Reads')`, acct); err != nil {
		t.Fatal(err)
	}
	port := id(`INSERT INTO ports (code, name, country_code, time_zone) VALUES ('NZRKB', 'Auckland reads', 'NZ', 'Pacific/Auckland') RETURNING id`)
	term := id(`INSERT INTO terminals (port_id, name) VALUES ($1, 'Auckland reads terminal') RETURNING id`, port)
	ship := func(number string) string {
		return id(`INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, shipping_line_scac, shipping_line_name,
				shipping_line_short_name, port_of_discharge_id)
			VALUES ($1, $2, $2, 'MAEU', 'Maersk', 'Maersk', $3) RETURNING id`, acct, number, port)
	}
	s1, s2 := ship("READS1"), ship("READS2")
	box := id(`INSERT INTO containers (account_id, shipment_id, number, pod_terminal_id) VALUES ($1, $2, 'REDU0000001', $3) RETURNING id`, acct, s1, term)

	c, err := q.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	// Scans of each table by this transaction so far (its own statistics,
	// not yet reported).
	scans := func() (ports, terminals, shipments int) {
		t.Helper()
		if err := tx.QueryRow(`SELECT
				coalesce(sum(seq_scan + coalesce(idx_scan, 0)) FILTER (WHERE relname = 'ports'), 0),
				coalesce(sum(seq_scan + coalesce(idx_scan, 0)) FILTER (WHERE relname = 'terminals'), 0),
				coalesce(sum(seq_scan + coalesce(idx_scan, 0)) FILTER (WHERE relname = 'shipments'), 0)
			FROM pg_stat_xact_user_tables WHERE schemaname = 'public'`).Scan(&ports, &terminals, &shipments); err != nil {
			t.Fatal(err)
		}
		return
	}
	run := func(query string, args ...any) (ports, terminals, shipments int) {
		t.Helper()
		p0, t0, s0 := scans()
		if _, err := tx.Exec(query, args...); err != nil {
			t.Fatalf("%v\n%s", err, query)
		}
		p1, t1, s1 := scans()
		return p1 - p0, t1 - t0, s1 - s0
	}

	if p, tm, s := run(`UPDATE containers SET current_status = 'available' WHERE account_id = $1 AND id = $2`, acct, box); p != 0 || tm != 0 || s != 1 {
		t.Errorf("a container's status change read ports %d, terminals %d, shipments %d times; want 0, 0, 1", p, tm, s)
	}
	if p, _, _ := run(`UPDATE shipments SET shipping_line_scac = 'MSCU' WHERE account_id = $1 AND id = $2`, acct, s2); p != 0 {
		t.Errorf("a change of line of a shipment with no ETA read ports %d times, want 0", p)
	}

	// The functions this transaction called (track_functions is the
	// superuser's to set).
	if _, err := tx.Exec(`SAVEPOINT track`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`SET LOCAL track_functions = 'pl'`); err != nil {
		t.Logf("not checking the calls: %v", err)
		if _, err := tx.Exec(`ROLLBACK TO SAVEPOINT track`); err != nil {
			t.Fatal(err)
		}
		return
	}
	s3 := ""
	if err := tx.QueryRow(`INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, shipping_line_scac, shipping_line_name,
			shipping_line_short_name) VALUES ($1, 'READS3', 'READS3', 'MAEU', 'Maersk', 'Maersk') RETURNING id`, acct).Scan(&s3); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO containers (account_id, shipment_id, number) VALUES ($1, $2, 'REDU0000002'), ($1, $2, 'REDU0000003')`, acct, s3); err != nil {
		t.Fatal(err)
	}
	calls := func(fn string) int {
		t.Helper()
		var n sql.NullInt64
		if err := tx.QueryRow(`SELECT sum(calls) FROM pg_stat_xact_user_functions WHERE funcname = $1`, fn).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return int(n.Int64)
	}
	if n := calls("list_counts_row"); n != 0 {
		t.Errorf("a shipment and two containers inserted called list_counts_row %d times, want 0", n)
	}
	if n, m := calls("container_stats_row"), calls("shipment_stats_row"); n != 2 || m != 1 {
		t.Errorf("container_stats_row called %d times, shipment_stats_row %d; want 2 and 1", n, m)
	}
}
