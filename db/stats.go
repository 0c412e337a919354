package db

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"shipgraph/model"
)

// Grouped counts (containerStats, shipmentStats): the records a list's
// filter keeps, counted per combination of allow-listed keys with one
// GROUP BY. Every statement selects the same columns (model.Group's), NULL
// for the keys not grouped by, so one scan plan serves all.
//
// Time zones. "Today" for a last free day is the day in the time zone of
// the container's terminal at the port of discharge (its port's zone, from
// the reference data: what a user looking at that terminal's gate expects);
// UTC when the container has no terminal. The boundaries of today, tomorrow
// and four days on are computed once per terminal (the zones sub-select),
// so each row is compared with three instants and never converted. An ETA's
// week is the ISO week (Monday first) of the ETA in the port of discharge's
// zone, UTC when the port is unknown.

// statKey is one allow-listed grouping: the column it fills, the SQL
// expression that computes it, the expression that orders its groups
// (NULLs last), and which joins it needs.
type statKey struct {
	col   string
	expr  string
	order string
	// needs: "s" the container's shipment; "tz" the zones of the
	// container's terminal; "pz" the shipment's port of discharge.
	needs []string
	// rcol is the rollup column the key is read from (stats_rollups.go),
	// rexpr the expression over it (alias r; %[1]s the start of today
	// where the key needs it).
	rcol, rexpr string
}

// groupCols are the columns every stats statement selects, in model.Group.
var groupCols = []string{"status", "pod_terminal_id", "shipping_line_scac", "port_of_discharge_id", "last_free_day", "eta_week"}

// lfdBucket maps the last free day to its bucket against the boundaries of
// the container's terminal (tz) or, without one, UTC ($now-derived
// parameters bound by the statement: %[1]s today, %[2]s tomorrow, %[3]s the
// fourth day from today, all at 00:00 UTC).
const lfdBucket = `CASE WHEN c.pickup_lfd IS NULL THEN 'unknown'
	WHEN c.pickup_lfd < coalesce(tz.today, %[1]s::timestamptz) THEN 'overdue'
	WHEN c.pickup_lfd < coalesce(tz.tomorrow, %[2]s::timestamptz) THEN 'today'
	WHEN c.pickup_lfd < coalesce(tz.day4, %[3]s::timestamptz) THEN 'next_3_days'
	ELSE 'later' END`

// lfdOrder orders the buckets by time, unknown last.
const lfdOrder = `array_position(ARRAY['overdue','today','next_3_days','later','unknown'], %s)`

// etaWeek is the Monday of the ETA's week in the port of discharge's zone.
const etaWeek = `to_char(date_trunc('week', s.pod_eta_at AT TIME ZONE coalesce(pz.time_zone, 'UTC')), 'YYYY-MM-DD')`

var containerStatKeys = map[model.ContainerGroupBy]statKey{
	model.ContainerGroupByStatus: {col: "status", expr: "c.current_status", rcol: "status", rexpr: "r.status"},
	model.ContainerGroupByPodTerminal: {col: "pod_terminal_id", expr: "c.pod_terminal_id",
		rcol: "pod_terminal_id", rexpr: rollupTerminal},
	model.ContainerGroupByShippingLine: {col: "shipping_line_scac", expr: "s.shipping_line_scac", needs: []string{"s"},
		rcol: "shipping_line_scac", rexpr: "r.shipping_line_scac"},
	model.ContainerGroupByPortOfDischarge: {col: "port_of_discharge_id", expr: "s.port_of_discharge_id", needs: []string{"s"},
		rcol: "port_of_discharge_id", rexpr: rollupPort},
	model.ContainerGroupByLastFreeDay: {col: "last_free_day", expr: lfdBucket, order: lfdOrder, needs: []string{"tz"},
		rcol: "lfd_date", rexpr: rollupLFDBucket},
	model.ContainerGroupByEtaWeek: {col: "eta_week", expr: etaWeek, needs: []string{"s", "pz"},
		rcol: "eta_week", rexpr: rollupWeek},
}

var shipmentStatKeys = map[model.ShipmentGroupBy]statKey{
	model.ShipmentGroupByPodTerminal: {col: "pod_terminal_id", expr: "s.pod_terminal_id",
		rcol: "pod_terminal_id", rexpr: rollupTerminal},
	model.ShipmentGroupByShippingLine: {col: "shipping_line_scac", expr: "s.shipping_line_scac",
		rcol: "shipping_line_scac", rexpr: "r.shipping_line_scac"},
	model.ShipmentGroupByPortOfDischarge: {col: "port_of_discharge_id", expr: "s.port_of_discharge_id",
		rcol: "port_of_discharge_id", rexpr: rollupPort},
	model.ShipmentGroupByEtaWeek: {col: "eta_week", expr: etaWeek, needs: []string{"pz"},
		rcol: "eta_week", rexpr: rollupWeek},
}

// The joins a key may need. The container's shipment carries the account
// (keys between tenant tables do); terminals and ports are reference data.
var statJoins = map[string]string{
	"s": ` JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id`,
	// One row per terminal: the instants today, tomorrow and the fourth
	// day from today begin in its port's zone (%[1]s: now).
	"tz": ` LEFT JOIN (SELECT t.id, (d.day::timestamp AT TIME ZONE p.time_zone) AS today,
		((d.day + 1)::timestamp AT TIME ZONE p.time_zone) AS tomorrow, ((d.day + 4)::timestamp AT TIME ZONE p.time_zone) AS day4
		FROM terminals t JOIN ports p ON p.id = t.port_id,
		LATERAL (SELECT (%[1]s::timestamptz AT TIME ZONE p.time_zone)::date AS day) d) tz ON tz.id = c.pod_terminal_id`,
	"pz": ` LEFT JOIN ports pz ON pz.id = s.port_of_discharge_id`,
}

// ContainerStats counts the account's containers that f keeps, grouped by
// keys (each at most once), as of now.
func (db *DB) ContainerStats(ctx context.Context, accountID string, f model.ContainerFilter, keys []model.ContainerGroupBy, now time.Time) ([]*model.Group, error) {
	specs := make([]statKey, len(keys))
	for i, k := range keys {
		spec, ok := containerStatKeys[k]
		if !ok {
			return nil, model.Errorf(model.EINVALID, "containers cannot be grouped by %q", k).AtParameter("groupBy")
		}
		specs[i] = spec
	}
	if r, filter := containerRollup(accountID, f, specs); r != nil && !db.noRollups {
		return rollupStats(ctx, db.read(accountID), r, filter, specs, now)
	}
	return stats(ctx, db.read(accountID), containerList, containerFilter(accountID, f), specs, now)
}

// ShipmentStats counts the account's shipments that f keeps, grouped by
// keys (each at most once).
func (db *DB) ShipmentStats(ctx context.Context, accountID string, f model.ShipmentFilter, keys []model.ShipmentGroupBy, now time.Time) ([]*model.Group, error) {
	specs := make([]statKey, len(keys))
	for i, k := range keys {
		spec, ok := shipmentStatKeys[k]
		if !ok {
			return nil, model.Errorf(model.EINVALID, "shipments cannot be grouped by %q", k).AtParameter("groupBy")
		}
		specs[i] = spec
	}
	if r, filter := shipmentRollup(accountID, f, specs); r != nil && !db.noRollups {
		return rollupStats(ctx, db.read(accountID), r, filter, specs, now)
	}
	return stats(ctx, db.read(accountID), shipmentList, shipmentFilter(accountID, f), specs, now)
}

// checkStatKeys refuses too many keys, or one key twice.
func checkStatKeys(specs []statKey) error {
	if len(specs) > model.MaxGroupKeys {
		return model.Errorf(model.EINVALID, "at most %d keys can be grouped by", model.MaxGroupKeys).AtParameter("groupBy")
	}
	seen := map[string]bool{}
	for _, k := range specs {
		if seen[k.col] {
			return model.Errorf(model.EINVALID, "a key can be grouped by only once").AtParameter("groupBy")
		}
		seen[k.col] = true
	}
	return nil
}

// statsQuery builds the statement of a grouped count over list s, filtered
// by filter (whose first clause is the account), grouped by specs.
func statsQuery(s *listSpec, filter *conds, specs []statKey, now time.Time) (string, []any, error) {
	if err := checkStatKeys(specs); err != nil {
		return "", nil, err
	}
	c := &conds{args: append([]any(nil), filter.args...), where: filter.where}
	exprs := map[string]string{}
	var needs []string
	for _, k := range specs {
		exprs[k.col] = k.expr
		needs = append(needs, k.needs...)
	}
	has := func(j string) bool {
		for _, n := range needs {
			if n == j {
				return true
			}
		}
		return false
	}
	var from strings.Builder
	from.WriteString(s.from)
	for _, j := range []string{"s", "tz", "pz"} {
		if !has(j) || (j == "s" && s.alias == "s") {
			continue
		}
		join := statJoins[j]
		if j == "tz" {
			join = fmt.Sprintf(join, c.arg(now))
		}
		from.WriteString(join)
	}
	if col, ok := exprs["last_free_day"]; ok {
		utc := now.UTC()
		day := time.Date(utc.Year(), utc.Month(), utc.Day(), 0, 0, 0, 0, time.UTC)
		exprs["last_free_day"] = fmt.Sprintf(col, c.arg(day), c.arg(day.AddDate(0, 0, 1)), c.arg(day.AddDate(0, 0, 4)))
	}
	return groupedQuery(c, from.String(), exprs, specs, "count(*)", ""), c.args, nil
}

// groupedQuery is the statement of a grouped count from from, where c,
// selecting every column of groupCols (exprs for the grouped ones, NULL
// for the others) and count (the expression that counts) as n; having
// (if any) drops groups after grouping.
func groupedQuery(c *conds, from string, exprs map[string]string, specs []statKey, count, having string) string {
	var sel, group, order []string
	for i, col := range groupCols {
		e, ok := exprs[col]
		if !ok {
			sel = append(sel, "NULL::text AS "+col)
			continue
		}
		sel = append(sel, e+" AS "+col)
		n := strconv.Itoa(i + 1)
		group = append(group, n)
		o := n + " NULLS LAST"
		for _, k := range specs {
			if k.col == col && k.order != "" {
				// An output name cannot stand inside an expression of
				// ORDER BY: the grouped expression itself can.
				o = fmt.Sprintf(k.order, e)
			}
		}
		order = append(order, o)
	}
	q := "SELECT " + strings.Join(sel, ", ") + ", " + count + " AS n FROM " + from + " WHERE " + c.sql()
	if len(group) > 0 {
		// Groups in key order; the limit tells a count with too many
		// groups from one with exactly the most.
		q += " GROUP BY " + strings.Join(group, ", ") + having + " ORDER BY " + strings.Join(order, ", ") +
			" LIMIT " + c.arg(model.MaxGroups+1)
	}
	return q
}

func stats(ctx context.Context, e ext, s *listSpec, filter *conds, specs []statKey, now time.Time) ([]*model.Group, error) {
	q, args, err := statsQuery(s, filter, specs, now)
	if err != nil {
		return nil, err
	}
	return runStats(ctx, e, q, args)
}

// runStats runs a grouped count and checks how many groups it gave.
func runStats(ctx context.Context, e ext, q string, args []any) ([]*model.Group, error) {
	groups, err := selectAll[model.Group](ctx, e, q, args...)
	if err != nil {
		return nil, err
	}
	if len(groups) > model.MaxGroups {
		return nil, model.Errorf(model.EINVALID, "more than %d groups: filter more or group by fewer keys", model.MaxGroups).AtParameter("groupBy")
	}
	if groups == nil {
		groups = []*model.Group{}
	}
	return groups, nil
}
