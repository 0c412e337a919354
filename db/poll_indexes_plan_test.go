package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lib/pq"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/model"
)

// planNode is one node of EXPLAIN (FORMAT JSON)'s plan tree.
type planNode struct {
	Type     string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Plans    []planNode `json:"Plans"`
}

func (n planNode) walk(f func(planNode)) {
	f(n)
	for _, c := range n.Plans {
		c.walk(f)
	}
}

// planOf is the plan PostgreSQL picks for query with args (a custom plan,
// as lib/pq's unnamed statements get), or, with generic, the plan of the
// statement prepared with plan_cache_mode = force_generic_plan (the plan a
// foreign key's action statement keeps, its value unknown).
func planOf(t *testing.T, f *fixture, generic bool, query string, args ...any) planNode {
	t.Helper()
	ctx := context.Background()
	conn, err := f.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var out string
	if generic {
		if _, err := conn.ExecContext(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
			t.Fatal(err)
		}
		defer conn.ExecContext(ctx, `RESET plan_cache_mode; DEALLOCATE ALL`)
		if _, err := conn.ExecContext(ctx, `PREPARE plan_probe AS `+query); err != nil {
			t.Fatalf("%v\n%s", err, query)
		}
		// EXECUTE's arguments are literals (it takes no bind parameters);
		// the values are ids of the test's own rows.
		lits := make([]string, len(args))
		for i, a := range args {
			lits[i] = fmt.Sprintf("'%v'", a)
		}
		err = conn.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) EXECUTE plan_probe(`+strings.Join(lits, ", ")+`)`).Scan(&out)
	} else {
		err = conn.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) `+query, args...).Scan(&out)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, query)
	}
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("plan %q: %v", out, err)
	}
	return plans[0].Plan
}

// The reads whose indexes migration 00067 changed keep an index plan on a
// large account (docs/tracking.md, "The index entries a first poll
// writes"): the lists' default order (created_at) reads the table's
// *_search_recent_idx in order, with no sort, where it read the dropped
// (account_id, created_at, id) twin; the carrier filter and its count read
// the unique key instead of the dropped (account_id, shipping_line_scac)
// prefix, never the whole table; the foreign keys' ON DELETE SET NULL of a
// terminal, metro area, rail terminal or user (their generic plans, as the
// key's trigger keeps them) find their rows by the partial indexes.
func TestPollIndexesKeepListPlans(t *testing.T) {
	f := newFixture(t)
	if dbtest.Citus(t) {
		t.Skip("Citus plans a distributed statement on the coordinator (its router plans), not PostgreSQL's index choice")
	}
	a := f.A.Account
	// One large account among others: 4,000 shipments over 40 carriers
	// (a carrier's are a fortieth), two containers and a request each.
	tx, err := f.SQL.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, q := range []string{
		// The change log off, as the seeder has it: the rows' own triggers
		// (counters, rollups, search columns) still run.
		`SET LOCAL shipgraph.notify = 'off'`,
		`SET LOCAL statement_timeout = 0`,
		`INSERT INTO shipping_lines (scac, name, short_name)
		SELECT 'L' || lpad(g::text, 3, '0'), 'Line ' || g, 'Line ' || g FROM generate_series(1, 40) g`,
		`INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number,
			shipping_line_scac, shipping_line_name, shipping_line_short_name, port_of_discharge_id, created_at)
		SELECT $1, 'IDX' || g, 'IDX' || g, 'L' || lpad((g % 40 + 1)::text, 3, '0'), 'Line', 'Line', $2,
			now() - g * interval '1 minute'
		FROM generate_series(1, 4000) g`,
		`INSERT INTO containers (account_id, shipment_id, number, created_at)
		SELECT s.account_id, s.id, 'IDXU' || k || right(s.bill_of_lading_number, 6), s.created_at
		FROM shipments s, generate_series(1, 2) k WHERE s.account_id = $1 AND s.bill_of_lading_number LIKE 'IDX%'`,
		`INSERT INTO transport_events (account_id, container_id, shipment_id, scac, carrier_event_id, event, event_at)
		SELECT c.account_id, c.id, c.shipment_id, 'L001', c.number || '-' || k, 'container.transport.vessel_departed', c.created_at + k * interval '1 day'
		FROM containers c, generate_series(1, 16) k WHERE c.account_id = $1 AND c.number LIKE 'IDXU%'`,
		`INSERT INTO tracking_requests (account_id, request_type, request_number, scac, status, shipment_id, created_at)
		SELECT s.account_id, 'bill_of_lading', s.bill_of_lading_number, s.shipping_line_scac, 'created', s.id, s.created_at
		FROM shipments s WHERE s.account_id = $1 AND s.bill_of_lading_number LIKE 'IDX%'`,
	} {
		var args []any
		if strings.Contains(q, "$2") {
			args = []any{a, f.PortLA}
		} else if strings.Contains(q, "$1") {
			args = []any{a}
		}
		if _, err := tx.Exec(q, args...); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	f.exec(t, `ANALYZE shipments, containers, tracking_requests, transport_events`)

	// ordered: the page is read in index order, by one of want, with no
	// sort and no scan of the whole table.
	ordered := func(name, table string, want []string, query string, args []any) {
		t.Helper()
		var used []string
		f.checkPlan(t, name, planOf(t, f, false, query, args...), func(n planNode) string {
			switch {
			case n.Type == "Seq Scan" && n.Relation == table:
				return "reads the whole table"
			case n.Type == "Sort" || n.Type == "Incremental Sort":
				return "sorts"
			case n.Relation == table && n.Index != "":
				used = append(used, n.Index)
			}
			return ""
		})
		if len(used) == 0 || slices.ContainsFunc(used, func(ix string) bool { return !slices.Contains(want, ix) }) {
			t.Errorf("%s: read %v; want %v", name, used, want)
		}
	}
	page := model.PageRequest{Order: model.Order{Field: "created_at", Desc: true}, Limit: 25}
	q, args, err := db.ShipmentPage(a, model.ShipmentFilter{}, page)
	if err != nil {
		t.Fatal(err)
	}
	ordered("shipments by created_at", "shipments", []string{"shipments_search_recent_idx"}, q, args)
	q, args, err = db.ContainerPage(a, model.ContainerFilter{}, page)
	if err != nil {
		t.Fatal(err)
	}
	ordered("containers by created_at", "containers", []string{"containers_search_recent_idx"}, q, args)
	q, args, err = db.TrackingRequestPage(a, model.TrackingRequestFilter{}, page)
	if err != nil {
		t.Fatal(err)
	}
	ordered("tracking requests by created_at", "tracking_requests", []string{"tracking_requests_search_recent_idx"}, q, args)

	// indexed: no scan of the whole table.
	indexed := func(name, table string, n planNode) {
		t.Helper()
		f.checkPlan(t, name, n, func(n planNode) string {
			if n.Type == "Seq Scan" && n.Relation == table {
				return "reads the whole table"
			}
			return ""
		})
	}
	byLine := model.ShipmentFilter{ShippingLineScacs: []string{"L007"}}
	q, args, err = db.ShipmentPage(a, byLine, page)
	if err != nil {
		t.Fatal(err)
	}
	indexed("shipments of a carrier", "shipments", planOf(t, f, false, q, args...))
	q, args = db.ShipmentCountStatement(a, byLine)
	indexed("count of a carrier's shipments", "shipments", planOf(t, f, false, q, args...))

	// A page's containers' transport events (the journey loader's read):
	// by the unique key's (account_id, container_id) prefix, a container's
	// events sorted, as they were with the dropped (account_id,
	// container_id, event_at, id) index, whose order is not the read's.
	var boxes []string
	if err := f.SQL.QueryRow(`SELECT array_agg(id::text) FROM (SELECT id FROM containers WHERE account_id = $1
		ORDER BY created_at DESC LIMIT 25) c`, a).Scan(pq.Array(&boxes)); err != nil {
		t.Fatal(err)
	}
	var journey []string
	f.checkPlan(t, "a page's transport events", planOf(t, f, false, db.TransportEventsByContainersSQL, pq.Array(boxes), a),
		func(n planNode) string {
			if n.Relation == "transport_events" {
				if n.Type == "Seq Scan" {
					return "reads the whole table"
				}
				journey = append(journey, n.Index)
			}
			return ""
		})
	if !slices.Equal(journey, []string{"transport_events_account_id_container_id_scac_carrier_event_key"}) {
		t.Errorf("a page's transport events read %v; want the unique key", journey)
	}

	// The foreign keys' actions (RI_FKey_setnull_del's statements).
	for _, c := range []struct{ table, index, query string }{
		{"shipments", "shipments_destination_terminal_id_idx",
			`UPDATE ONLY shipments SET destination_terminal_id = NULL WHERE $1 OPERATOR(pg_catalog.=) destination_terminal_id`},
		{"shipments", "shipments_destination_rail_terminal_id_idx",
			`UPDATE ONLY shipments SET destination_rail_terminal_id = NULL WHERE $1 OPERATOR(pg_catalog.=) destination_rail_terminal_id`},
		{"shipments", "shipments_destination_metro_area_id_idx",
			`UPDATE ONLY shipments SET destination_metro_area_id = NULL WHERE $1 OPERATOR(pg_catalog.=) destination_metro_area_id`},
		{"containers", "containers_pickup_facility_id_idx",
			`UPDATE ONLY containers SET pickup_facility_id = NULL WHERE $1 OPERATOR(pg_catalog.=) pickup_facility_id`},
		{"shipments", "shipments_line_tracking_stopped_by_user_id_idx",
			`UPDATE ONLY shipments SET line_tracking_stopped_by_user_id = NULL
			 WHERE $1 OPERATOR(pg_catalog.=) account_id AND $2 OPERATOR(pg_catalog.=) line_tracking_stopped_by_user_id`},
	} {
		args := []any{f.TermLA}
		if strings.Contains(c.query, "$2") {
			args = []any{a, f.A.Admin}
		}
		var used bool
		f.checkPlan(t, c.index, planOf(t, f, true, c.query, args...), func(n planNode) string {
			if n.Type == "Seq Scan" && n.Relation == c.table {
				return "reads the whole table"
			}
			used = used || n.Index == c.index
			return ""
		})
		if !used {
			t.Errorf("%s: the key's action does not read %s", c.query, c.index)
		}
	}
}

// checkPlan reports each complaint bad makes of a node of plan.
func (f *fixture) checkPlan(t *testing.T, name string, plan planNode, bad func(planNode) string) {
	t.Helper()
	plan.walk(func(n planNode) {
		if why := bad(n); why != "" {
			t.Errorf("%s: the plan %s (%s on %s)", name, why, n.Type, n.Relation)
		}
	})
}
