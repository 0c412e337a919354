package tracking_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lib/pq"

	"shipgraph/db"
	"shipgraph/model"
	"shipgraph/testkit/pg"
	"shipgraph/webhook"
)

// rollupTruth holds each rollup of migrations 00021 and 00024 (its slots
// summed) to its rows counted
// afresh, as (rollup, key..., n) text rows that differ: none when exact.
const rollupTruth = `
WITH cs AS (
    SELECT c.account_id, c.current_status AS status, coalesce(c.pod_terminal_id, '00000000-0000-0000-0000-000000000000') AS t,
        s.shipping_line_scac AS l, coalesce(s.port_of_discharge_id, '00000000-0000-0000-0000-000000000000') AS p,
        coalesce(date_trunc('week', s.pod_eta_at AT TIME ZONE coalesce(pz.time_zone, 'UTC'))::date, 'infinity') AS w, count(*) AS n
    FROM containers c JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id
    LEFT JOIN ports pz ON pz.id = s.port_of_discharge_id GROUP BY 1, 2, 3, 4, 5, 6),
lfd AS (
    SELECT c.account_id, c.current_status AS status, coalesce(c.pod_terminal_id, '00000000-0000-0000-0000-000000000000') AS t,
        coalesce((c.pickup_lfd AT TIME ZONE coalesce(tp.time_zone, 'UTC'))::date, 'infinity') AS d, count(*) AS n
    FROM containers c LEFT JOIN terminals t ON t.id = c.pod_terminal_id LEFT JOIN ports tp ON tp.id = t.port_id GROUP BY 1, 2, 3, 4),
ss AS (
    SELECT s.account_id, coalesce(s.pod_terminal_id, '00000000-0000-0000-0000-000000000000') AS t, s.shipping_line_scac AS l,
        coalesce(s.port_of_discharge_id, '00000000-0000-0000-0000-000000000000') AS p,
        coalesce(date_trunc('week', s.pod_eta_at AT TIME ZONE coalesce(pz.time_zone, 'UTC'))::date, 'infinity') AS w, count(*) AS n
    FROM shipments s LEFT JOIN ports pz ON pz.id = s.port_of_discharge_id GROUP BY 1, 2, 3, 4, 5),
-- The rollups, their slots summed.
rcs AS (SELECT account_id, status, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, sum(n)::bigint AS n
    FROM container_stats GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0),
rlfd AS (SELECT account_id, status, pod_terminal_id, lfd_date, sum(n)::bigint AS n
    FROM container_lfd_stats GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0),
rss AS (SELECT account_id, pod_terminal_id, shipping_line_scac, port_of_discharge_id, eta_week, sum(n)::bigint AS n
    FROM shipment_stats GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0)
SELECT 'container_stats want ' || x::text FROM (SELECT * FROM cs EXCEPT SELECT * FROM rcs) x
UNION ALL SELECT 'container_stats have ' || x::text FROM (SELECT * FROM rcs EXCEPT SELECT * FROM cs) x
UNION ALL SELECT 'container_lfd_stats want ' || x::text FROM (SELECT * FROM lfd EXCEPT SELECT * FROM rlfd) x
UNION ALL SELECT 'container_lfd_stats have ' || x::text FROM (SELECT * FROM rlfd EXCEPT SELECT * FROM lfd) x
UNION ALL SELECT 'shipment_stats want ' || x::text FROM (SELECT * FROM ss EXCEPT SELECT * FROM rss) x
UNION ALL SELECT 'shipment_stats have ' || x::text FROM (SELECT * FROM rss EXCEPT SELECT * FROM ss) x`

// checkRollups fails t unless every rollup equals a fresh count and every
// grouped count of account gives the same groups from the rollups as from
// GROUP BY.
func checkRollups(t *testing.T, store *db.DB, account, step string) {
	t.Helper()
	ctx := context.Background()
	diff := pg.Column[string](t, store.SQL(), rollupTruth)
	if len(diff) > 0 {
		t.Fatalf("%s: the rollups differ from a fresh count:\n%s", step, strings.Join(diff, "\n"))
	}
	now := time.Now()
	counted := store.WithoutStatsRollups()
	// Filters the rollups answer: two terminals, two statuses, two lines,
	// two ports (whatever the account has).
	var terminals, ports, lines []string
	if err := store.SQL().QueryRowContext(ctx, `SELECT
		ARRAY(SELECT DISTINCT pod_terminal_id::text FROM containers WHERE account_id = $1 AND pod_terminal_id IS NOT NULL ORDER BY 1 LIMIT 2),
		ARRAY(SELECT DISTINCT port_of_discharge_id::text FROM shipments WHERE account_id = $1 AND port_of_discharge_id IS NOT NULL ORDER BY 1 LIMIT 2),
		ARRAY(SELECT DISTINCT shipping_line_scac FROM shipments WHERE account_id = $1 ORDER BY 1 LIMIT 2)`, account).
		Scan((*pq.StringArray)(&terminals), (*pq.StringArray)(&ports), (*pq.StringArray)(&lines)); err != nil {
		t.Fatal(err)
	}
	sameStats(t, step+": containers", account, now, store.ContainerStats, counted.ContainerStats,
		[]model.ContainerFilter{{}, {PodTerminalIDs: terminals, Statuses: []model.ContainerStatus{"available", "on_ship"}}},
		[][]model.ContainerGroupBy{
			nil, {model.ContainerGroupByStatus}, {model.ContainerGroupByPodTerminal, model.ContainerGroupByLastFreeDay},
			{model.ContainerGroupByShippingLine, model.ContainerGroupByPortOfDischarge, model.ContainerGroupByEtaWeek},
			{model.ContainerGroupByStatus, model.ContainerGroupByEtaWeek},
		})
	sameStats(t, step+": shipments", account, now, store.ShipmentStats, counted.ShipmentStats,
		[]model.ShipmentFilter{{}, {ShippingLineScacs: lines, PortOfDischargeIDs: ports}, {PodTerminalIDs: terminals}},
		[][]model.ShipmentGroupBy{
			nil, {model.ShipmentGroupByPodTerminal, model.ShipmentGroupByEtaWeek},
			{model.ShipmentGroupByShippingLine, model.ShipmentGroupByPortOfDischarge},
		})
}

// sameStats checks that the rollups and a GROUP BY (counted) give the same
// groups for every filter by every grouping.
func sameStats[F, K any](t *testing.T, what, account string, now time.Time,
	rollups, counted func(context.Context, string, F, []K, time.Time) ([]*model.Group, error), filters []F, groupings [][]K) {
	t.Helper()
	ctx := context.Background()
	for _, f := range filters {
		for _, keys := range groupings {
			a, err := rollups(ctx, account, f, keys, now)
			if err != nil {
				t.Fatal(err)
			}
			b, err := counted(ctx, account, f, keys, now)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%s %+v by %v: the rollups give %s, GROUP BY %s", what, f, keys, groupsText(a), groupsText(b))
			}
		}
	}
}

// reference inserts ports in four time zones, with two terminals each
// (the tracking tests' databases hold no reference data).
func reference(t *testing.T, store *db.DB) {
	t.Helper()
	if _, err := store.SQL().Exec(`
		WITH p AS (INSERT INTO ports (code, name, country_code, time_zone) VALUES
			('USLAX', 'Los Angeles', 'US', 'America/Los_Angeles'), ('NLRTM', 'Rotterdam', 'NL', 'Europe/Amsterdam'),
			('CNSHA', 'Shanghai', 'CN', 'Asia/Shanghai'), ('NZAKL', 'Auckland', 'NZ', 'Pacific/Auckland')
			ON CONFLICT (code) DO UPDATE SET time_zone = EXCLUDED.time_zone RETURNING id, code)
		INSERT INTO terminals (port_id, name) SELECT p.id, p.code || ' terminal ' || k FROM p, generate_series(1, 2) k`); err != nil {
		t.Fatal(err)
	}
}

func groupsText(gs []*model.Group) string {
	var b strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&b, "\n  %+v", *g)
	}
	return b.String()
}

// TestStatsRollupsFollowWrites: the rollups of grouped counts stay equal
// to a fresh count through what the tracking engine writes (shipments and
// containers created, ETAs and statuses moved, tracking stopped) and
// through plain SQL: updates of status, terminal, last free day, a
// shipment's line, ETA and port, a container moved between shipments,
// inserts, deletes (a shipment's cascading to its containers), a port's
// new time zone, a terminal moved to another port, and truncation.
func TestStatsRollupsFollowWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	reference(t, e.store)
	eng := e.engine(e.config())
	ids := e.requestTracked("bill_of_lading", 8)
	for _, id := range ids {
		if r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" }); r.ShipmentID == nil {
			t.Fatalf("request %s: %+v", id, r)
		}
	}
	if n := e.count(`SELECT count(*) FROM containers WHERE account_id = $1`, e.acct); n < 8 {
		t.Fatalf("the polls created %d containers", n)
	}
	checkRollups(t, e.store, e.acct, "created by polls")
	e.advance(9 * 24 * time.Hour)
	e.repoll(eng, ids...)
	checkRollups(t, e.store, e.acct, "moved by polls")

	exec := func(step, q string, args ...any) {
		t.Helper()
		res, err := e.store.SQL().Exec(q, args...)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if n, _ := res.RowsAffected(); n == 0 && !strings.HasPrefix(q, "TRUNCATE") {
			t.Fatalf("%s: no row changed", step)
		}
		checkRollups(t, e.store, e.acct, step)
	}
	acct := e.acct
	// Times are computed from now as a value ($2) in UTC with immutable
	// operators only, so the statements run on a Citus cluster too (it
	// refuses STABLE functions, such as now() or timestamptz + interval,
	// with column references in an UPDATE of a distributed table).
	now := time.Now().UTC()
	exec("terminals and last free days set", `UPDATE containers c SET pod_terminal_id = t.id,
		pickup_lfd_line = ($2::timestamp + ((abs(hashtext(c.id::text)) % 12) - 5) * interval '1 day' + interval '7 hours') AT TIME ZONE 'UTC'
		FROM (SELECT id, row_number() OVER (ORDER BY id) AS k FROM terminals) t, (SELECT count(*) AS n FROM terminals) m
		WHERE c.account_id = $1 AND t.k = 1 + abs(hashtext(c.number)) % m.n`, acct, now)
	exec("status", `UPDATE containers SET current_status = 'available' WHERE account_id = $1 AND id IN
		(SELECT id FROM containers WHERE account_id = $1 ORDER BY id LIMIT 5)`, acct)
	exec("terminal", `UPDATE containers SET pod_terminal_id = (SELECT id FROM terminals ORDER BY name DESC LIMIT 1)
		WHERE account_id = $1 AND id IN (SELECT id FROM containers WHERE account_id = $1 ORDER BY number LIMIT 3)`, acct)
	exec("no terminal", `UPDATE containers SET pod_terminal_id = NULL
		WHERE account_id = $1 AND id IN (SELECT id FROM containers WHERE account_id = $1 ORDER BY number DESC LIMIT 2)`, acct)
	exec("last free day", `UPDATE containers SET pickup_lfd_line = ((pickup_lfd_line AT TIME ZONE 'UTC') + interval '2 days') AT TIME ZONE 'UTC',
		pickup_lfd_terminal = $2 WHERE account_id = $1 AND id IN (SELECT id FROM containers WHERE account_id = $1 ORDER BY id DESC LIMIT 6)`, acct, now)
	exec("unknown last free day", `UPDATE containers SET pickup_lfd_line = NULL, pickup_lfd_terminal = NULL, pickup_lfd_rail = NULL
		WHERE account_id = $1 AND id IN (SELECT id FROM containers WHERE account_id = $1 ORDER BY number LIMIT 2)`, acct)
	exec("an update that changes no key", `UPDATE containers SET updated_at = $2 WHERE account_id = $1`, acct, now)
	exec("shipment line", `UPDATE shipments SET shipping_line_scac = 'ZZZZ' WHERE account_id = $1 AND id IN
		(SELECT id FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 2)`, acct)
	exec("shipment ETA", `UPDATE shipments SET pod_eta_at = (coalesce(pod_eta_at AT TIME ZONE 'UTC', $2::timestamp) + interval '9 days') AT TIME ZONE 'UTC'
		WHERE account_id = $1`, acct, now)
	exec("shipment ETA unknown", `UPDATE shipments SET pod_eta_at = NULL WHERE account_id = $1 AND id IN
		(SELECT id FROM shipments WHERE account_id = $1 ORDER BY id DESC LIMIT 1)`, acct)
	exec("shipment port", `UPDATE shipments SET port_of_discharge_id = (SELECT id FROM ports WHERE time_zone <> 'UTC' ORDER BY code LIMIT 1)
		WHERE account_id = $1 AND id IN (SELECT id FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 3)`, acct)
	exec("shipment terminal", `UPDATE shipments SET pod_terminal_id = (SELECT id FROM terminals ORDER BY name LIMIT 1)
		WHERE account_id = $1`, acct)
	exec("container moved between shipments", `UPDATE containers c SET shipment_id = (SELECT s.id FROM shipments s
		WHERE s.account_id = c.account_id AND s.id <> c.shipment_id ORDER BY s.id LIMIT 1)
		WHERE c.account_id = $1 AND c.id IN (SELECT id FROM containers WHERE account_id = $1 ORDER BY id LIMIT 2)`, acct)
	exec("container inserted", `INSERT INTO containers (account_id, shipment_id, number, current_status, pod_terminal_id, pickup_lfd_rail)
		SELECT account_id, id, 'ZZZU' || lpad(row_number() OVER (ORDER BY id)::text, 7, '0'), 'not_available',
			(SELECT id FROM terminals ORDER BY firms_code LIMIT 1), $2
		FROM shipments WHERE account_id = $1`, acct, now)
	exec("container deleted", `DELETE FROM containers WHERE account_id = $1 AND id IN
		(SELECT id FROM containers WHERE account_id = $1 ORDER BY number DESC LIMIT 3)`, acct)
	// Their tracking requests let go of them first: on Citus the key is NO
	// ACTION (it refuses SET NULL (column) with the distribution column).
	if _, err := e.store.SQL().Exec(`UPDATE tracking_requests SET shipment_id = NULL WHERE account_id = $1 AND shipment_id IN
		(SELECT id FROM shipments WHERE account_id = $1 ORDER BY id DESC LIMIT 2)`, acct); err != nil {
		t.Fatal(err)
	}
	exec("shipment deleted with its containers", `DELETE FROM shipments WHERE account_id = $1 AND id IN
		(SELECT id FROM shipments WHERE account_id = $1 ORDER BY id DESC LIMIT 2)`, acct)
	// Reference rows are changed by id: Citus refuses a write to a
	// reference table that selects from a distributed one.
	refIDs := func(q string) []string {
		t.Helper()
		var out []string
		if err := e.store.SQL().QueryRow(`SELECT coalesce(array_agg(DISTINCT id), '{}') FROM (`+q+`) q WHERE id IS NOT NULL`, acct).Scan(pq.Array(&out)); err != nil {
			t.Fatal(err)
		}
		return out
	}
	exec("a port's time zone", `UPDATE ports SET time_zone = CASE WHEN time_zone = 'Pacific/Kiritimati' THEN 'Pacific/Pago_Pago'
		ELSE 'Pacific/Kiritimati' END WHERE id = ANY($1)`, pq.Array(refIDs(`SELECT port_of_discharge_id AS id FROM shipments WHERE account_id = $1
		UNION SELECT t.port_id FROM containers c JOIN terminals t ON t.id = c.pod_terminal_id WHERE c.account_id = $1`)))
	exec("a terminal's port", `UPDATE terminals SET port_id = (SELECT id FROM ports WHERE code = 'NZAKL')
		WHERE id = ANY($1) AND port_id <> (SELECT id FROM ports WHERE code = 'NZAKL')`,
		pq.Array(refIDs(`SELECT pod_terminal_id AS id FROM containers WHERE account_id = $1`)))

	e.advance(150 * 24 * time.Hour)
	e.repoll(eng, ids...)
	checkRollups(t, e.store, e.acct, "tracking stopped by polls")

	exec("containers truncated", `TRUNCATE containers CASCADE`)
	if n := e.count(`SELECT (SELECT count(*) FROM container_stats) + (SELECT count(*) FROM container_lfd_stats)`); n != 0 {
		t.Fatalf("after TRUNCATE containers, %d container rollup rows", n)
	}
	exec("shipments truncated", `TRUNCATE shipments CASCADE`)
	if n := e.count(`SELECT count(*) FROM shipment_stats`); n != 0 {
		t.Fatalf("after TRUNCATE shipments, %d shipment rollup rows", n)
	}
}

// TestStatsRollupsConcurrentWriters: writers changing containers' keys and
// their shipments' lines, ETAs and ports at the same time, in transactions
// of several statements, leave the rollups exact. A writer chosen as a
// deadlock's victim (the counters are locked until commit) retries.
func TestStatsRollupsConcurrentWriters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	reference(t, e.store)
	e.engine(e.config())
	ids := e.requestTracked("", 6)
	for _, id := range ids {
		e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
	}
	checkRollups(t, e.store, e.acct, "created by polls")
	ctx := context.Background()
	// Each statement takes the account ($1) and values drawn by the
	// writer's generator: Citus refuses random() (VOLATILE) in an UPDATE of
	// a distributed table, so rows are picked in an order salted by a
	// drawn value (md5, immutable) and new values are parameters.
	type stmt struct {
		q    string
		args func(r *rand.Rand) []any
	}
	salt := func(r *rand.Rand) string { return strconv.FormatUint(r.Uint64(), 36) }
	days := func(r *rand.Rand, span float64) time.Time {
		return time.Now().UTC().Add(time.Duration((r.Float64()*2*span - span) * float64(24*time.Hour)))
	}
	statements := []stmt{
		{`UPDATE containers SET current_status = $2
			WHERE account_id = $1 AND id IN (SELECT id FROM containers WHERE account_id = $1 ORDER BY md5(id::text || $3) LIMIT 2)`,
			func(r *rand.Rand) []any {
				return []any{[]string{"available", "not_available", "picked_up", "on_ship"}[r.IntN(4)], salt(r)}
			}},
		{`UPDATE containers SET pickup_lfd_line = $2
			WHERE account_id = $1 AND id IN (SELECT id FROM containers WHERE account_id = $1 ORDER BY md5(id::text || $3) LIMIT 2)`,
			func(r *rand.Rand) []any { return []any{days(r, 5), salt(r)} }},
		{`UPDATE containers SET pod_terminal_id = (SELECT id FROM terminals ORDER BY md5(id::text || $2) LIMIT 1)
			WHERE account_id = $1 AND id IN (SELECT id FROM containers WHERE account_id = $1 ORDER BY md5(id::text || $3) LIMIT 1)`,
			func(r *rand.Rand) []any { return []any{salt(r), salt(r)} }},
		{`UPDATE shipments SET shipping_line_scac = $2
			WHERE account_id = $1 AND id IN (SELECT id FROM shipments WHERE account_id = $1 ORDER BY md5(id::text || $3) LIMIT 1)`,
			func(r *rand.Rand) []any { return []any{[]string{"MAEU", "MSCU", "CMDU"}[r.IntN(3)], salt(r)} }},
		{`UPDATE shipments SET pod_eta_at = $2,
			port_of_discharge_id = (SELECT id FROM ports ORDER BY md5(id::text || $3) LIMIT 1)
			WHERE account_id = $1 AND id IN (SELECT id FROM shipments WHERE account_id = $1 ORDER BY md5(id::text || $4) LIMIT 1)`,
			func(r *rand.Rand) []any { return []any{days(r, 15), salt(r), salt(r)} }},
		{`UPDATE containers SET shipment_id = (SELECT s.id FROM shipments s WHERE s.account_id = $1 ORDER BY md5(s.id::text || $2) LIMIT 1)
			WHERE account_id = $1 AND id IN (SELECT id FROM containers WHERE account_id = $1 ORDER BY md5(id::text || $3) LIMIT 1)`,
			func(r *rand.Rand) []any { return []any{salt(r), salt(r)} }},
		{`INSERT INTO containers (account_id, shipment_id, number, current_status)
			SELECT account_id, id, $2, 'on_ship' FROM shipments WHERE account_id = $1 ORDER BY md5(id::text || $3) LIMIT 1`,
			func(r *rand.Rand) []any { return []any{fmt.Sprintf("ZZZU%07d", r.IntN(1e7)), salt(r)} }},
		{`DELETE FROM containers WHERE account_id = $1 AND id IN (SELECT id FROM containers WHERE account_id = $1 ORDER BY md5(id::text || $2) LIMIT 1)`,
			func(r *rand.Rand) []any { return []any{salt(r)} }},
	}
	const writers, txs = 4, 8
	waits := watchLockWaits(e.store.SQL(), 5*time.Second)
	var wg sync.WaitGroup
	var retries atomic.Int64
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 27))
			for range txs {
				var picks []stmtArgs
				for range 3 {
					s := statements[r.IntN(len(statements))]
					picks = append(picks, stmtArgs{s.q, append([]any{e.acct}, s.args(r)...)})
				}
				for attempt := 1; ; attempt++ {
					err := runTx(ctx, e.store.SQL(), picks)
					if db.Victim(err) {
						retries.Add(1)
						// Back off as a client would (the webhooks' full
						// jitter, at most 80 ms): run again at once, two
						// victims took the same rows again and again, and a
						// third writer's statement queued behind them waited
						// out the statement timeout (57014, once in a loaded run).
						time.Sleep(webhook.Backoff(5*time.Millisecond, min(attempt, 5), r.Float64()))
						continue
					}
					if err != nil {
						errs <- fmt.Errorf("%w; the database's sessions then: %s", err, sessions(e.store.SQL()))
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	waited := waits()
	for err := range errs {
		if waited != "" {
			t.Errorf("while the writers ran, a statement waited for a lock 5 s or more; the sessions then: %s", waited)
		}
		t.Fatal(err)
	}
	t.Logf("%d transactions retried after a deadlock", retries.Load())
	checkRollups(t, e.store, e.acct, "after concurrent writers")
}

// watchLockWaits looks at q's database's sessions every second until
// stopped and keeps the first description of them (sessions) in which a
// statement has waited for a lock for longer than after: a writer that
// times out (57014 after the 30 s statement_timeout, once in CI) is seen
// while it waits, with the session that blocks it and that session's
// statement, instead of after its cancel.
func watchLockWaits(q *sql.DB, after time.Duration) (stop func() string) {
	done := make(chan struct{})
	seen := make(chan string, 1)
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				seen <- ""
				return
			case <-tick.C:
			}
			var n int
			err := q.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
				AND wait_event_type = 'Lock' AND state = 'active' AND now() - state_change > $1 * interval '1 millisecond'`,
				after.Milliseconds()).Scan(&n)
			if err == nil && n > 0 {
				seen <- sessions(q)
				return
			}
		}
	}()
	return func() string {
		close(done)
		return <-seen
	}
}

// sessions describes the sessions of q's database (state, what each waits
// for and who blocks it, its statement): what a writer that timed out met.
func sessions(q *sql.DB) string {
	rows, err := q.Query(`SELECT pid, coalesce(state, ''), coalesce(wait_event_type || ':' || wait_event, ''),
		pg_blocking_pids(pid)::text, coalesce(xact_start::text, ''), left(query, 160)
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY pid`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var pid int
		var state, wait, blockers, since, query string
		if err := rows.Scan(&pid, &state, &wait, &blockers, &since, &query); err != nil {
			return err.Error()
		}
		fmt.Fprintf(&b, "\n  %d %s %s blocked by %s since %s: %s", pid, state, wait, blockers, since, query)
	}
	return b.String()
}

// stmtArgs is one statement of a transaction and its arguments.
type stmtArgs struct {
	q    string
	args []any
}

// runTx runs stmts in one transaction.
func runTx(ctx context.Context, q *sql.DB, stmts []stmtArgs) error {
	tx, err := q.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s.q, s.args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}
