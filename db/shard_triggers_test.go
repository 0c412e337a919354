package db_test

import (
	"fmt"
	"strings"
	"testing"

	"shipgraph/db/dbtest"
)

// TestShardTriggersKeepCounts: writes of many accounts in one transaction
// (on Citus: over both workers, committed in two phases), updates that move
// rollups, deletes, a user's rename, a port's zone change and a TRUNCATE;
// after each, every account's counters, rollups and change-log head agree
// with its rows. On Citus the database runs without
// citus.allow_nested_distributed_execution on any node: the triggers write
// their colocated shards and never start a nested distributed query
// (migration 00036). The same statements run on plain PostgreSQL.
func TestShardTriggersKeepCounts(t *testing.T) {
	d := openDB(t)
	q := d.SQL()
	citus := dbtest.Citus(t)
	one := func(query string, args ...any) int {
		t.Helper()
		var n int
		if err := q.QueryRow(query, args...).Scan(&n); err != nil {
			t.Fatalf("%v\n%s", err, query)
		}
		return n
	}
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := q.Exec(query, args...); err != nil {
			t.Fatalf("%v\n%s", err, query)
		}
	}

	if citus {
		var nested string
		if err := q.QueryRow(`SHOW citus.allow_nested_distributed_execution`).Scan(&nested); err != nil {
			t.Fatal(err)
		}
		rows, err := q.Query(`SELECT result FROM run_command_on_workers('SHOW citus.allow_nested_distributed_execution')`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var r string
			if err := rows.Scan(&r); err != nil {
				t.Fatal(err)
			}
			nested += " " + r
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if strings.Contains(nested, "on") {
			t.Fatalf("citus.allow_nested_distributed_execution (coordinator, workers): %s, want off everywhere", nested)
		}
	}

	const accounts = 24
	ids := make([]string, accounts)
	for i := range ids {
		ids[i] = fmt.Sprintf("5ba7d000-0000-4000-8000-%012d", i+1)
	}
	arr := "{" + strings.Join(ids, ",") + "}"
	port := ""
	if err := q.QueryRow(`INSERT INTO ports (code, name, country_code, time_zone) VALUES ('NZAKL', 'Auckland', 'NZ', 'Pacific/Auckland') RETURNING id`).Scan(&port); err != nil {
		t.Fatal(err)
	}
	exec(`INSERT INTO accounts (id, slug, company_name) SELECT a, 'shard-' || a, 'Shard' FROM unnest($1::uuid[]) a`, arr)
	if citus {
		groups := map[int]bool{}
		for _, a := range ids {
			groups[one(`SELECT p.groupid FROM pg_dist_placement p WHERE p.shardid = get_shard_id_for_distribution_column('shipments', $1::uuid)`, a)] = true
		}
		if len(groups) < 2 {
			t.Fatalf("the accounts' shards are on %d node(s), want at least 2", len(groups))
		}
	}

	check := func(step string) {
		t.Helper()
		for _, a := range ids {
			for _, c := range []struct{ name, got, want string }{
				{"shipments total", `SELECT coalesce(sum(n), 0) FROM list_counts WHERE account_id = $1 AND list = 'shipments'`, `SELECT count(*) FROM shipments WHERE account_id = $1`},
				{"containers total", `SELECT coalesce(sum(n), 0) FROM list_counts WHERE account_id = $1 AND list = 'containers'`, `SELECT count(*) FROM containers WHERE account_id = $1`},
				{"container rollup", `SELECT coalesce(sum(n), 0) FROM container_stats WHERE account_id = $1`, `SELECT count(*) FROM containers WHERE account_id = $1`},
				{"container LFD rollup", `SELECT coalesce(sum(n), 0) FROM container_lfd_stats WHERE account_id = $1`, `SELECT count(*) FROM containers WHERE account_id = $1`},
				{"shipment rollup", `SELECT coalesce(sum(n), 0) FROM shipment_stats WHERE account_id = $1`, `SELECT count(*) FROM shipments WHERE account_id = $1`},
				{"shipment rollup at the port", `SELECT coalesce(sum(n), 0) FROM shipment_stats WHERE account_id = $1 AND port_of_discharge_id = '` + port + `'`,
					`SELECT count(*) FROM shipments WHERE account_id = $1 AND port_of_discharge_id = '` + port + `'`},
				{"change-log head", `SELECT coalesce(max(pos), 0) FROM change_log_heads WHERE account_id = $1`, `SELECT count(*) FROM change_log WHERE account_id = $1`},
			} {
				if got, want := one(c.got, a), one(c.want, a); got != want {
					t.Errorf("%s: account %s: %s %d, want %d", step, a, c.name, got, want)
				}
			}
		}
	}

	// One transaction over every account.
	tx, err := q.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, shipping_line_scac,
			shipping_line_name, shipping_line_short_name, port_of_discharge_id, pod_eta_at)
		SELECT a, 'BL' || n, 'BL' || n, 'MAEU', 'Maersk', 'Maersk', CASE WHEN n % 2 = 0 THEN $2::uuid END,
			'2026-06-01T10:00:00Z'::timestamptz + n * interval '1 day'
		FROM unnest($1::uuid[]) a, generate_series(1, 3) n`, arr, port); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO containers (account_id, shipment_id, number, pickup_lfd_line)
		SELECT s.account_id, s.id, 'CNTU' || s.normalized_number || n, '2026-06-20T00:00:00Z'
		FROM shipments s, generate_series(1, 2) n WHERE s.account_id = ANY($1::uuid[])`, arr); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := one(`SELECT count(*) FROM containers WHERE account_id = ANY($1::uuid[])`, arr); n != accounts*6 {
		t.Fatalf("%d containers, want %d", n, accounts*6)
	}
	check("insert")

	exec(`UPDATE shipments SET port_of_discharge_id = $2, pod_eta_at = '2026-06-12T10:00:00Z' WHERE account_id = ANY($1::uuid[]) AND normalized_number = 'BL1'`, arr, port)
	exec(`UPDATE containers SET current_status = 'available' WHERE account_id = ANY($1::uuid[]) AND number LIKE '%1'`, arr)
	check("update")

	exec(`DELETE FROM containers WHERE account_id = ANY($1::uuid[]) AND number LIKE 'CNTUBL3%'`, arr)
	exec(`DELETE FROM shipments WHERE account_id = ANY($1::uuid[]) AND normalized_number = 'BL2'`, arr)
	check("delete")

	// Reference data: a copy on every node on Citus, each node recounting
	// its own shards.
	exec(`UPDATE ports SET time_zone = 'Pacific/Kiritimati' WHERE id = $1`, port)
	check("port zone")
	exec(`INSERT INTO users (id, account_id, email, role, first_name, last_name) VALUES ('5ba7d000-0000-4000-8000-0000000000ff', $1, 'u@example.com', 'admin', 'Ann', 'Old')`, ids[0])
	exec(`INSERT INTO documents (account_id, name, document_type, source, file_name, user_id) VALUES ($1, 'doc', 'other', 'upload', 'doc.pdf', '5ba7d000-0000-4000-8000-0000000000ff')`, ids[0])
	exec(`UPDATE users SET last_name = 'New' WHERE id = '5ba7d000-0000-4000-8000-0000000000ff'`)
	if n := one(`SELECT count(*) FROM documents WHERE account_id = $1 AND added_by_name = 'Ann New'`, ids[0]); n != 1 {
		t.Errorf("after the rename, %d documents added by 'Ann New', want 1", n)
	}

	exec(`TRUNCATE containers CASCADE`)
	check("truncate")
	if n := one(`SELECT count(*) FROM container_stats`); n != 0 {
		t.Errorf("after TRUNCATE containers, %d container rollup rows", n)
	}
}
