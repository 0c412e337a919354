package db

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/lib/pq"

	"shipgraph/model"
)

// Grouped counts from the rollups (migration 00021): counts per
// combination of the grouping dimensions, kept by triggers, summed here.
// A count is read from a rollup when its filter names only dimensions the
// rollup holds; any other filter counts the rows with GROUP BY (stats.go),
// and both give the same groups:
//
//	containerStats: no filter, statuses, podTerminalIds
//	shipmentStats:  no filter, shippingLineScacs, portOfDischargeIds, podTerminalIds
//
// Keys are NOT NULL in a rollup: no terminal or port is the nil uuid, no
// date is 'infinity'. The last free day is stored as the local date in
// its terminal's zone, so the bucket is that date against today in the
// same zone; the ETA week as its Monday in the port of discharge's zone.

// rollup is one rollup table and the key columns it holds.
type rollup struct {
	table string
	cols  []string
}

// The rollups of each list, narrowest first: a count reads the first that
// holds every key it groups by and every dimension it filters on.
var (
	containerRollups = []rollup{
		{"container_lfd_stats", []string{"status", "pod_terminal_id", "lfd_date"}},
		{"container_stats", []string{"status", "pod_terminal_id", "shipping_line_scac", "port_of_discharge_id", "eta_week"}},
	}
	shipmentRollups = []rollup{
		{"shipment_stats", []string{"pod_terminal_id", "shipping_line_scac", "port_of_discharge_id", "eta_week"}},
	}
)

// nilUUID stands for "no terminal" or "no port" in a rollup key.
const nilUUID = "00000000-0000-0000-0000-000000000000"

// The keys' expressions over a rollup row r.
const (
	rollupTerminal = `nullif(r.pod_terminal_id, '` + nilUUID + `'::uuid)`
	rollupPort     = `nullif(r.port_of_discharge_id, '` + nilUUID + `'::uuid)`
	rollupWeek     = `to_char(nullif(r.eta_week, 'infinity'::date), 'YYYY-MM-DD')`
	// rollupToday is today in the terminal's zone (z, rollupZones), or in
	// UTC (%[1]s) without a terminal.
	rollupToday     = `coalesce(z.today, %[1]s::date)`
	rollupLFDBucket = `CASE WHEN r.lfd_date = 'infinity'::date THEN 'unknown'
	WHEN r.lfd_date < ` + rollupToday + ` THEN 'overdue'
	WHEN r.lfd_date = ` + rollupToday + ` THEN 'today'
	WHEN r.lfd_date <= ` + rollupToday + ` + 3 THEN 'next_3_days'
	ELSE 'later' END`
	// rollupZones is today's date in each terminal's zone (%[1]s now),
	// computed once per terminal (OFFSET 0 keeps the planner from pulling
	// the conversion up into every row's comparisons).
	rollupZones = ` LEFT JOIN (SELECT t.id, (%[1]s::timestamptz AT TIME ZONE p.time_zone)::date AS today
		FROM terminals t JOIN ports p ON p.id = t.port_id OFFSET 0) z ON z.id = r.pod_terminal_id`
)

// WithoutStatsRollups is db counting every grouped count with GROUP BY,
// never from the rollups: tests hold both ways to the same truth.
func (db *DB) WithoutStatsRollups() *DB {
	d := db.Select(db.sel)
	d.noRollups = true
	return d
}

// pickRollup is the first of rs holding every column of need, or nil.
func pickRollup(rs []rollup, need []string) *rollup {
	for i := range rs {
		if !slices.ContainsFunc(need, func(c string) bool { return !slices.Contains(rs[i].cols, c) }) {
			return &rs[i]
		}
	}
	return nil
}

// rollupNeed lists the rollup columns that specs group by, then extra.
func rollupNeed(specs []statKey, extra ...string) []string {
	need := extra
	for _, k := range specs {
		need = append(need, k.rcol)
	}
	return need
}

// rollupIDs are the ids of a filter as the rollups hold them: valid
// ones, never the nil uuid (which stands there for "no terminal").
func rollupIDs(ids []string) pq.StringArray {
	return slices.DeleteFunc(validUUIDs(ids), func(id string) bool { return id == nilUUID })
}

// containerRollup is the rollup that answers a container count filtered
// by f and grouped by specs, with the filter over it; nil if none can.
func containerRollup(accountID string, f model.ContainerFilter, specs []statKey) (*rollup, *conds) {
	rest := f
	rest.Statuses, rest.PodTerminalIDs = nil, nil
	if !reflect.ValueOf(rest).IsZero() {
		return nil, nil
	}
	c := &conds{}
	c.add("r.account_id = %s", accountID)
	var need []string
	if len(f.Statuses) > 0 {
		statuses := make([]string, len(f.Statuses))
		for i, s := range f.Statuses {
			statuses[i] = string(s)
		}
		c.add("r.status = ANY(%s)", pq.Array(statuses))
		need = append(need, "status")
	}
	if len(f.PodTerminalIDs) > 0 {
		c.add("r.pod_terminal_id = ANY(%s)", rollupIDs(f.PodTerminalIDs))
		need = append(need, "pod_terminal_id")
	}
	r := pickRollup(containerRollups, rollupNeed(specs, need...))
	if r == nil {
		return nil, nil
	}
	return r, c
}

// shipmentRollup is containerRollup for shipments.
func shipmentRollup(accountID string, f model.ShipmentFilter, specs []statKey) (*rollup, *conds) {
	rest := f
	rest.ShippingLineScacs, rest.PortOfDischargeIDs, rest.PodTerminalIDs = nil, nil, nil
	if !reflect.ValueOf(rest).IsZero() {
		return nil, nil
	}
	c := &conds{}
	c.add("r.account_id = %s", accountID)
	var need []string
	if len(f.ShippingLineScacs) > 0 {
		c.add("r.shipping_line_scac = ANY(%s)", pq.Array(f.ShippingLineScacs))
		need = append(need, "shipping_line_scac")
	}
	if len(f.PortOfDischargeIDs) > 0 {
		c.add("r.port_of_discharge_id = ANY(%s)", rollupIDs(f.PortOfDischargeIDs))
		need = append(need, "port_of_discharge_id")
	}
	if len(f.PodTerminalIDs) > 0 {
		c.add("r.pod_terminal_id = ANY(%s)", rollupIDs(f.PodTerminalIDs))
		need = append(need, "pod_terminal_id")
	}
	r := pickRollup(shipmentRollups, rollupNeed(specs, need...))
	if r == nil {
		return nil, nil
	}
	return r, c
}

// rollupStats sums rollup r's rows that filter keeps (its first clause
// the account), grouped by specs, as of now.
func rollupStats(ctx context.Context, e ext, r *rollup, filter *conds, specs []statKey, now time.Time) ([]*model.Group, error) {
	if err := checkStatKeys(specs); err != nil {
		return nil, err
	}
	c := &conds{args: append([]any(nil), filter.args...), where: filter.where}
	from := r.table + " r"
	exprs := map[string]string{}
	for _, k := range specs {
		exprs[k.col] = k.rexpr
		if k.rcol == "lfd_date" {
			from += fmt.Sprintf(rollupZones, c.arg(now))
			exprs[k.col] = fmt.Sprintf(k.rexpr, c.arg(now.UTC().Format(time.DateOnly)))
		}
	}
	return runStats(ctx, e, groupedQuery(c, from, exprs, specs, "coalesce(sum(r.n), 0)::bigint", " HAVING sum(r.n) > 0"), c.args)
}
