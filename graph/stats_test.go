package graph_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"shipgraph/graph/gqlhttp"
	"shipgraph/load"
	"shipgraph/testkit"
)

// statsCase is one grouped count and the plain SQL that gives its answer
// ($1 the account): the key columns then the count, as text.
type statsCase struct {
	name  string
	field string // containerStats or shipmentStats
	args  string
	sel   string // the group's selection, keys in the order of sql's columns, then count
	sql   string
}

// Ground truth is written differently from db/stats.go on purpose: days
// and weeks by converting each row (the store compares with per-terminal
// boundaries), Monday by the ISO day of the week (the store truncates).
const (
	truthZoneC = `LEFT JOIN terminals t ON t.id = c.pod_terminal_id LEFT JOIN ports tp ON tp.id = t.port_id`
	truthLFD   = `CASE WHEN c.pickup_lfd IS NULL THEN 'UNKNOWN' ELSE (SELECT CASE WHEN d < 0 THEN 'OVERDUE' WHEN d = 0 THEN 'TODAY'
		WHEN d <= 3 THEN 'NEXT_3_DAYS' ELSE 'LATER' END FROM (SELECT (c.pickup_lfd AT TIME ZONE coalesce(tp.time_zone, 'UTC'))::date
		- (now() AT TIME ZONE coalesce(tp.time_zone, 'UTC'))::date AS d) x) END`
	truthWeek = `(SELECT to_char(l - (extract(isodow FROM l)::int - 1), 'YYYY-MM-DD') FROM
		(SELECT (s.pod_eta_at AT TIME ZONE coalesce(pp.time_zone, 'UTC'))::date AS l) x)`
)

var statsCases = []statsCase{
	{"containers by status", "containerStats", `groupBy: [STATUS]`, `status count`,
		`SELECT upper(current_status), count(*) FROM containers WHERE account_id = $1 GROUP BY 1`},
	{"containers by terminal", "containerStats", `groupBy: [POD_TERMINAL]`, `podTerminal { id name port { code } } count`,
		`SELECT t.id, t.name, p.code, count(*) FROM containers c LEFT JOIN terminals t ON t.id = c.pod_terminal_id
		 LEFT JOIN ports p ON p.id = t.port_id WHERE c.account_id = $1 GROUP BY 1, 2, 3`},
	{"containers by line and port", "containerStats", `groupBy: [SHIPPING_LINE, PORT_OF_DISCHARGE]`,
		`shippingLineScac portOfDischarge { code } count`,
		`SELECT s.shipping_line_scac, p.code, count(*) FROM containers c JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id
		 LEFT JOIN ports p ON p.id = s.port_of_discharge_id WHERE c.account_id = $1 GROUP BY 1, 2`},
	{"containers by last free day", "containerStats", `groupBy: [LAST_FREE_DAY]`, `lastFreeDay count`,
		`SELECT ` + truthLFD + `, count(*) FROM containers c ` + truthZoneC + ` WHERE c.account_id = $1 GROUP BY 1`},
	{"containers by terminal and last free day, filtered", "containerStats",
		`filter: {statuses: [ON_SHIP, AVAILABLE, NOT_AVAILABLE]}, groupBy: [POD_TERMINAL, LAST_FREE_DAY]`,
		`podTerminal { firmsCode } lastFreeDay count`,
		`SELECT t.firms_code, ` + truthLFD + `, count(*) FROM containers c ` + truthZoneC + `
		 WHERE c.account_id = $1 AND c.current_status IN ('on_ship', 'available', 'not_available') GROUP BY 1, 2`},
	{"containers by ETA week", "containerStats", `groupBy: [ETA_WEEK, STATUS]`, `etaWeek status count`,
		`SELECT ` + truthWeek + `, upper(c.current_status), count(*) FROM containers c JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id
		 LEFT JOIN ports pp ON pp.id = s.port_of_discharge_id WHERE c.account_id = $1 GROUP BY 1, 2`},
	{"containers, no key", "containerStats", `filter: {hasHolds: true}, groupBy: []`, `count`,
		`SELECT count(*) FROM containers WHERE account_id = $1 AND has_holds`},
	{"containers by last free day and line (no rollup holds both)", "containerStats", `groupBy: [LAST_FREE_DAY, SHIPPING_LINE]`,
		`lastFreeDay shippingLineScac count`,
		`SELECT ` + truthLFD + `, s.shipping_line_scac, count(*) FROM containers c JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id ` + truthZoneC + `
		 WHERE c.account_id = $1 GROUP BY 1, 2`},
	{"containers by port and ETA week, filtered by status", "containerStats",
		`filter: {statuses: [ON_SHIP, AVAILABLE, PICKED_UP, EMPTY_RETURNED]}, groupBy: [PORT_OF_DISCHARGE, ETA_WEEK]`,
		`portOfDischarge { code } etaWeek count`,
		`SELECT pp.code, ` + truthWeek + `, count(*) FROM containers c JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id
		 LEFT JOIN ports pp ON pp.id = s.port_of_discharge_id
		 WHERE c.account_id = $1 AND c.current_status IN ('on_ship', 'available', 'picked_up', 'empty_returned') GROUP BY 1, 2`},
	{"containers, no key, no filter", "containerStats", `groupBy: []`, `count`,
		`SELECT count(*) FROM containers WHERE account_id = $1`},
	{"shipments by terminal", "shipmentStats", `groupBy: [POD_TERMINAL]`, `podTerminal { id name } count`,
		`SELECT t.id, t.name, count(*) FROM shipments s LEFT JOIN terminals t ON t.id = s.pod_terminal_id WHERE s.account_id = $1 GROUP BY 1, 2`},
	{"shipments by line", "shipmentStats", `groupBy: [SHIPPING_LINE]`, `shippingLine { scac name } count`,
		`SELECT l.scac, l.name, count(*) FROM shipments s LEFT JOIN shipping_lines l ON l.scac = s.shipping_line_scac
		 WHERE s.account_id = $1 GROUP BY 1, 2`},
	{"shipments by port and ETA week, filtered", "shipmentStats",
		`filter: {trackingStopped: false}, groupBy: [PORT_OF_DISCHARGE, ETA_WEEK]`, `portOfDischarge { code } etaWeek count`,
		`SELECT pp.code, ` + truthWeek + `, count(*) FROM shipments s LEFT JOIN ports pp ON pp.id = s.port_of_discharge_id
		 WHERE s.account_id = $1 AND s.line_tracking_stopped_at IS NULL GROUP BY 1, 2`},
	{"shipments by port and ETA week", "shipmentStats", `groupBy: [PORT_OF_DISCHARGE, ETA_WEEK]`, `portOfDischarge { code } etaWeek count`,
		`SELECT pp.code, ` + truthWeek + `, count(*) FROM shipments s LEFT JOIN ports pp ON pp.id = s.port_of_discharge_id
		 WHERE s.account_id = $1 GROUP BY 1, 2`},
	{"shipments, no key", "shipmentStats", `groupBy: []`, `count`, `SELECT count(*) FROM shipments WHERE account_id = $1`},
}

// flatten turns the groups of the answer into rows of text: the values at
// paths (dotted, e.g. "podTerminal.name"; null as "") in order.
func flatten(t *testing.T, raw json.RawMessage, paths []string) [][]string {
	t.Helper()
	var groups []map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&groups); err != nil {
		t.Fatalf("groups: %v: %s", err, raw)
	}
	rows := make([][]string, len(groups))
	for i, g := range groups {
		for _, p := range paths {
			var v any = g
			for _, name := range strings.Split(p, ".") {
				if m, ok := v.(map[string]any); ok {
					v = m[name]
				} else {
					v = nil
				}
			}
			s := ""
			if v != nil {
				s = fmt.Sprint(v)
			}
			rows[i] = append(rows[i], s)
		}
	}
	return rows
}

// paths lists the scalar leaves of a selection such as
// "podTerminal { name port { code } } count", in order.
func paths(sel string) []string {
	var out, stack []string
	prev := ""
	for _, tok := range strings.Fields(strings.NewReplacer("{", " { ", "}", " } ").Replace(sel)) {
		switch tok {
		case "{":
			out = out[:len(out)-1]      // prev named an object, not a leaf
			stack = append(stack, prev) // the object's own name
		case "}":
			stack = stack[:len(stack)-1]
		default:
			prev = tok
			out = append(out, strings.Join(append(slices.Clone(stack), tok), "."))
		}
	}
	return out
}

// TestStats holds every grouped count to the same count in plain SQL,
// for both accounts, on data whose last free days fall around today in
// terminals of several time zones; each count is asked twice, of a server
// that sums the rollups where it can (migration 00021) and of one that
// always counts the rows with GROUP BY.
func TestStats(t *testing.T) {
	t.Parallel()
	env := testkit.New(t, testkit.Options{Shipments: 120})
	// Last free days from five days ago to a week ahead, a few unknown;
	// ETAs over six weeks around today.
	var n int
	// Spread by a hash of the id from a time given as a parameter (Citus
	// refuses random() and now() in an UPDATE of a distributed table).
	now := time.Now().Unix()
	env.SQL(t, &n, `WITH u AS (UPDATE containers SET pickup_lfd_rail = NULL, pickup_lfd_terminal = NULL,
		pickup_lfd_line = CASE WHEN abs(hashtext(id::text)) % 10 = 0 THEN NULL
		ELSE to_timestamp($1::float8 + abs(hashtext(id::text || 'lfd')) % 1036800 - 432000) END RETURNING 1) SELECT count(*) FROM u`, now)
	env.SQL(t, &n, `WITH u AS (UPDATE shipments SET pod_eta_at = CASE WHEN abs(hashtext(id::text)) % 10 = 0 THEN NULL
		ELSE to_timestamp($1::float8 + abs(hashtext(id::text || 'eta')) % 3628800 - 1814400) END RETURNING 1) SELECT count(*) FROM u`, now)
	var zones int
	env.SQL(t, &zones, `SELECT count(DISTINCT p.time_zone) FROM containers c JOIN terminals t ON t.id = c.pod_terminal_id
		JOIN ports p ON p.id = t.port_id`)
	if zones < 2 {
		t.Fatalf("the seeded containers' terminals are in %d time zones; the test needs several", zones)
	}

	accounts := map[string]string{}
	for _, slug := range []string{"acme", "globex"} {
		var id string
		env.SQL(t, &id, `SELECT id FROM accounts WHERE slug = $1`, slug)
		accounts[slug] = id
	}
	counted := env.With(t, testkit.Chain(t, env.Store.WithoutStatsRollups(), gqlhttp.DefaultHandlerConfig, load.DefaultLoaderConfig))
	for _, c := range statsCases {
		for _, who := range []string{acmeAdmin, globexViewer} {
			for _, path := range []struct {
				name string
				env  *testkit.Env
			}{{"rollup", env}, {"group by", counted}} {
				t.Run(c.name+"/"+who+"/"+path.name, func(t *testing.T) {
					checkStats(t, path.env, c, accounts[strings.Split(who, "/")[0]], who)
				})
			}
		}
	}
}

// checkStats holds one grouped count, asked of env by who, to its truth
// in plain SQL for account.
func checkStats(t *testing.T, env *testkit.Env, c statsCase, account, who string) {
	t.Helper()
	q := fmt.Sprintf(`{ %s(%s) { %s } }`, c.field, c.args, c.sel)
	// A day may begin somewhere between the truth and the answer: read
	// the truth on both sides and retry then.
	for try := 0; ; try++ {
		before := env.Rows(t, c.sql, account)
		var data map[string]json.RawMessage
		env.Must(t, env.Key(t, who), q, nil, &data)
		after := env.Rows(t, c.sql, account)
		if !slices.EqualFunc(sortedRows(before), sortedRows(after), slices.Equal) && try < 3 {
			continue
		}
		got := flatten(t, data[c.field], paths(c.sel))
		if len(got) == 0 {
			t.Fatalf("%s: no groups", q)
		}
		if g, w := sortedRows(got), sortedRows(after); !slices.EqualFunc(g, w, slices.Equal) {
			t.Fatalf("%s\n got %v\nwant %v", q, g, w)
		}
		return
	}
}

func sortedRows(rows [][]string) [][]string {
	out := slices.Clone(rows)
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(strings.Join(a, "\x00"), strings.Join(b, "\x00")) })
	return out
}

// TestStatsRules: keys are checked (each once, at most three), the records
// of the keys come with one statement per kind whatever the groups, and a
// count of three record keys is too complex.
func TestStatsRules(t *testing.T) {
	t.Parallel()
	env := testkit.New(t, testkit.Options{Shipments: 40})
	key := env.Key(t, acmeViewer)
	for _, q := range []string{
		`{ containerStats(groupBy: [STATUS, STATUS]) { count } }`,
		`{ containerStats(groupBy: [STATUS, LAST_FREE_DAY, ETA_WEEK, POD_TERMINAL]) { count } }`,
	} {
		res := env.Do(t, key, q, nil)
		if !testkit.CodesEqual(res.Codes(), "BAD_USER_INPUT") {
			t.Errorf("%s: %s; want BAD_USER_INPUT", q, res)
		}
	}
	// Every group's terminal and its port: the count, then at most one
	// statement for the terminals and one for their ports.
	var groups int
	env.SQL(t, &groups, `SELECT count(DISTINCT pod_terminal_id) FROM containers c JOIN accounts a ON a.id = c.account_id WHERE a.slug = 'acme'`)
	res := env.Must(t, key, `{ containerStats(groupBy: [POD_TERMINAL, STATUS]) { podTerminal { name port { code } } status count } }`, nil, nil)
	if res.AfterAuth < 1 || res.AfterAuth > 3 {
		t.Errorf("grouped count with %d terminals: %d statements; want at most 3 (count, terminals, ports)", groups, res.AfterAuth)
	}
	res = env.Do(t, key, `{ containerStats(groupBy: [POD_TERMINAL, SHIPPING_LINE, PORT_OF_DISCHARGE]) {
		podTerminal { name } shippingLine { name } portOfDischarge { name } count } }`, nil)
	testkit.Refused(t, "three record keys", res, "COMPLEXITY_LIMIT_EXCEEDED")
	res = env.Do(t, "", `{ containerStats(groupBy: [STATUS]) { count } }`, nil)
	if !testkit.CodesEqual(res.Codes(), "UNAUTHENTICATED") {
		t.Errorf("no key: %s; want UNAUTHENTICATED", res)
	}
}
