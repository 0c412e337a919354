package db_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"shipgraph/db"
)

// Every reader of the change log, and the numbering at commit, reach the
// rows through an index under the generic plans they run with: the
// account's positions index (partial since 00066: numbered rows only; a
// strict comparison of pos implies pos IS NOT NULL), the primary key, the
// logged_at index. Sequential scans are switched off, so a statement the
// partial index does not serve shows a Seq Scan and fails. The positions
// index holds no entry for a row not numbered yet: a query for unnumbered
// rows cannot use it (with the full index of before 00066 it did). Plain
// PostgreSQL (on Citus the plans are the workers').
func TestChangeLogReadersUseTheirIndexes(t *testing.T) {
	f := newLogFixture(t)
	ctx := context.Background()
	var citus bool
	if err := f.sql.QueryRowContext(ctx, `SELECT to_regclass('pg_catalog.citus_lock_waits') IS NOT NULL`).Scan(&citus); err != nil {
		t.Fatal(err)
	}
	if citus {
		t.Skip("plans of a Citus cluster are its workers'")
	}
	f.logChanges(t, f.account, f.containers[0], 10*24*time.Hour, 5)
	f.logChanges(t, f.account, f.containers[1], time.Hour, 5)
	exec(t, f.sql, `ANALYZE change_log`)

	conn, err := f.sql.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range []string{`SET enable_seqscan = off`, `SET plan_cache_mode = force_generic_plan`} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// The numbering's statements, as the live function has them, with
	// its variables as parameters.
	var src string
	if err := conn.QueryRowContext(ctx, `SELECT prosrc FROM pg_proc WHERE proname = 'shipgraph_change_log_head'`).Scan(&src); err != nil {
		t.Fatal(err)
	}
	numbering := func(re string) string {
		t.Helper()
		m := regexp.MustCompile(`(?s)` + re + `[^;]*`).FindString(src)
		if m == "" {
			t.Fatalf("shipgraph_change_log_head has no %q", re)
		}
		r := strings.NewReplacer(" INTO ids", "", "NEW.account_id", "$1::uuid", "NEW.id", "$2::bigint",
			"head - n", "$2::bigint", "ids[1]", "$3::bigint", "ids[n]", "$4::bigint", "(l.id, ids)", "(l.id, $5::bigint[])",
			"= acct", "= $1::uuid")
		return r.Replace(m)
	}
	now := time.Now()
	for _, c := range []struct {
		name, query string
		args        []any
		index       string
	}{
		{"a page of the account's log", `SELECT l.id` + db.ChangeLogPageFrom, []any{f.account, 3, 100}, "change_log_account_pos_idx"},
		{"a public id's position", db.ChangeLogPosSQL, []any{f.account, 1}, "change_log_pkey"},
		{"the fan-out's lag", db.ChangeLogLagSQL, nil, "change_log_account_pos_idx"},
		{"a pruning batch", db.ChangeLogPruneSQL, []any{now.Add(-7 * 24 * time.Hour), now, nil, 10}, "change_log_logged_at_idx"},
		{"pruning held back", db.ChangeLogHeldBackSQL, []any{now.Add(-7 * 24 * time.Hour), now, nil}, "change_log_logged_at_idx"},
		{"the numbering's rows", numbering(`SELECT array_agg\(c\.id ORDER BY c\.id\) INTO ids FROM change_log c`),
			[]any{f.account, 1}, "change_log_pkey"},
		{"the numbering's update", numbering(`UPDATE change_log l SET pos`),
			[]any{f.account, 1, 1, 9, "{1,9}"}, "change_log_pkey"},
	} {
		scans := changeLogScans(t, conn, c.query, c.args)
		if len(scans) == 0 {
			t.Errorf("%s: no scan of change_log in its plan", c.name)
		}
		for _, s := range scans {
			if s != c.index {
				t.Errorf("%s: change_log scanned by %q, want %s\n%s", c.name, s, c.index, c.query)
			}
		}
	}
	// Unnumbered rows have no entry in the positions index.
	if scans := changeLogScans(t, conn, `SELECT count(*) FROM change_log WHERE account_id = $1 AND pos IS NULL`, []any{f.account}); len(scans) != 1 || scans[0] == "change_log_account_pos_idx" {
		t.Errorf("unnumbered rows found by %v: the positions index holds them", scans)
	}
}

// changeLogScans is how the generic plan of query reaches change_log:
// each scan's index name, or its node type when it reads no index.
func changeLogScans(t *testing.T, conn *sql.Conn, query string, args []any) []string {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.ExecContext(ctx, `DEALLOCATE ALL`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `PREPARE plan_check AS `+query); err != nil {
		t.Fatalf("%v\n%s", err, query)
	}
	// The numbering's statements of an older function may take fewer
	// parameters than given.
	n := 0
	for _, m := range regexp.MustCompile(`\$(\d+)`).FindAllStringSubmatch(query, -1) {
		k, _ := strconv.Atoi(m[1])
		n = max(n, k)
	}
	args = args[:min(n, len(args))]
	params := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case nil:
			params[i] = "NULL"
		case time.Time:
			params[i] = "'" + v.Format(time.RFC3339Nano) + "'"
		case int:
			params[i] = strconv.Itoa(v)
		default:
			params[i] = "'" + strings.ReplaceAll(a.(string), "'", "''") + "'"
		}
	}
	execute := "EXECUTE plan_check"
	if len(params) > 0 {
		execute += "(" + strings.Join(params, ", ") + ")"
	}
	var raw []byte
	if err := conn.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) `+execute).Scan(&raw); err != nil {
		t.Fatalf("%v\n%s", err, query)
	}
	var plans []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &plans); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(node map[string]any)
	walk = func(node map[string]any) {
		if rel, _ := node["Relation Name"].(string); rel == "change_log" {
			if idx, _ := node["Index Name"].(string); idx != "" {
				out = append(out, idx)
			} else if typ, _ := node["Node Type"].(string); typ != "Bitmap Heap Scan" && typ != "ModifyTable" {
				out = append(out, typ)
			}
		}
		if idx, _ := node["Index Name"].(string); idx != "" && node["Node Type"] == "Bitmap Index Scan" && strings.HasPrefix(idx, "change_log_") {
			out = append(out, idx)
		}
		children, _ := node["Plans"].([]any)
		for _, c := range children {
			if m, ok := c.(map[string]any); ok {
				walk(m)
			}
		}
	}
	for _, p := range plans {
		walk(p.Plan)
	}
	return out
}
