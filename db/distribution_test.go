package db_test

// The schema stays ready for a PostgreSQL distributed by account (Citus;
// docs/scaling.md, "Distributed PostgreSQL (Citus)"; migration 00010):
//
//   - TestDistributionRules holds the live migrated schema to the rules
//     (every table marked, tenant keys carry account_id …), so a later
//     migration cannot quietly break them;
//   - TestStatementsFilterByAccount runs a representative set of requests
//     through the server's chain and store calls, records every statement
//     the store sends, EXPLAINs each with a generic plan and fails on a scan
//     of a tenant table that does not name the account; on a Citus cluster
//     (make test-citus) it checks Citus' own plan instead: one task, no
//     subplans (with a data-modifying CTE, which Citus runs first: every
//     step one task), and logs its verdict on each statement.

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/graph/gqlhttp"
	"shipgraph/load"
	"shipgraph/model"
	"shipgraph/testkit"
)

// ---------------------------------------------------------------- the rules

// Table kinds, from each table's comment (COMMENT ON TABLE t IS 'shipgraph:tenant').
const (
	kindTenant    = "tenant"    // one account's rows; Citus: create_distributed_table(t, 'account_id')
	kindReference = "reference" // shared by every account; Citus: create_reference_table(t)
	kindGlobal    = "global"    // identity found without the account; Citus: reference tables
)

// globalTables are the only tables that may be shipgraph:global, and why.
var globalTables = map[string]string{
	"accounts":   "the tenants themselves: every tenant table's account_id references accounts (id)",
	"users":      "a user is found by email across accounts (users.email is unique over every account)",
	"api_tokens": "authentication finds a key by the hash of the key before the account is known",
}

// globalUniques are the keys of global tables that do not (cannot) carry
// account_id, and why. On a distributed database they hold because their
// tables are reference tables, whole on every node.
var globalUniques = map[string]string{
	"accounts_pkey":               "an account's id is the distribution value itself",
	"accounts_slug_key":           "an account's slug names it in the CLI and demo keys, over all accounts",
	"users_pkey":                  "user ids are looked up by key owners before the account is known",
	"users_email_key":             "one login per email address, over all accounts",
	"api_tokens_pkey":             "revocation is announced by token id alone (NOTIFY shipgraph_tokens)",
	"api_tokens_token_sha256_key": "authentication looks a key up by its hash alone",
}

// unmarkedTables are left out of the rules, and why.
var unmarkedTables = map[string]string{
	"goose_db_version": "goose's record of applied migrations (Citus: a table local to the coordinator)",
	// River's tables (the job engine of tracking polls, carrier/tracking; db/river.go): its queue, not
	// account data. Jobs name the account in their args only; Citus: tables local to the coordinator,
	// as River needs its SKIP LOCKED fetch and unique index on one node.
	"river_job":          "River's job queue (tracking polls): local to the coordinator",
	"river_leader":       "River's leader election (periodic scheduling): local to the coordinator",
	"river_queue":        "River's queues: local to the coordinator",
	"river_client":       "River's clients: local to the coordinator",
	"river_client_queue": "River's client queues: local to the coordinator",
	"river_migration":    "River's record of applied migrations: local to the coordinator",
	"river_notification": "River's notification outbox (unused over lib/pq: no LISTEN): local to the coordinator",
}

var kindPattern = regexp.MustCompile(`\bshipgraph:(tenant|reference|global)\b`)

type schemaConstraint struct {
	table, name, kind string // kind: p, u, f, or i (a unique index without a constraint)
	cols              []string
	refTable          string
	refCols           []string
}

// tableKinds returns every ordinary or partitioned table of the public
// schema (partitions are judged by their parent) and its kind ("" when
// unmarked).
func tableKinds(ctx context.Context, q *sql.DB) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT c.relname, coalesce(obj_description(c.oid, 'pg_class'), '')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	kinds := map[string]string{}
	for rows.Next() {
		var name, comment string
		if err := rows.Scan(&name, &comment); err != nil {
			return nil, err
		}
		kind := ""
		if m := kindPattern.FindStringSubmatch(comment); m != nil {
			kind = m[1]
		}
		kinds[name] = kind
	}
	return kinds, rows.Err()
}

// schemaViolations checks the live schema of q against the distribution
// rules and returns one message per broken rule, naming the table or
// constraint, the rule and the fix.
func schemaViolations(ctx context.Context, q *sql.DB) ([]string, error) {
	kinds, err := tableKinds(ctx, q)
	if err != nil {
		return nil, err
	}
	accountCol := map[string]bool{} // table → has account_id
	notNull := map[string]bool{}    // table → account_id NOT NULL
	rows, err := q.QueryContext(ctx, `
		SELECT c.relname, a.attnotnull
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND a.attname = 'account_id' AND NOT a.attisdropped`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var t string
		var nn bool
		if err := rows.Scan(&t, &nn); err != nil {
			rows.Close()
			return nil, err
		}
		accountCol[t], notNull[t] = true, nn
	}
	rows.Close()

	var cons []schemaConstraint
	rows, err = q.QueryContext(ctx, `
		SELECT t.relname, c.conname, c.contype::text,
			ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
				JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i)::text[],
			coalesce(r.relname, ''),
			ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
				JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i)::text[]
		FROM pg_constraint c
		JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
		LEFT JOIN pg_class r ON r.oid = c.confrelid
		WHERE n.nspname = 'public' AND c.contype IN ('p', 'u', 'f') AND NOT t.relispartition
		UNION ALL
		SELECT t.relname, i.relname, 'i',
			ARRAY(SELECT coalesce(a.attname, '(expression)') FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(n, o)
				LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n ORDER BY k.o)::text[],
			'', '{}'::text[]
		FROM pg_index x
		JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
		JOIN pg_namespace n ON n.oid = t.relnamespace
		WHERE n.nspname = 'public' AND x.indisunique AND NOT t.relispartition
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype IN ('p', 'u'))
		ORDER BY 1, 2`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var c schemaConstraint
		var cols, refCols stringArray
		if err := rows.Scan(&c.table, &c.name, &c.kind, &cols, &c.refTable, &refCols); err != nil {
			rows.Close()
			return nil, err
		}
		c.cols, c.refCols = cols, refCols
		cons = append(cons, c)
	}
	rows.Close()

	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	tables := make([]string, 0, len(kinds))
	for t := range kinds {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	hasPK := map[string]bool{}
	for _, c := range cons {
		if c.kind == "p" {
			hasPK[c.table] = true
		}
	}

	for _, t := range tables {
		if _, ok := unmarkedTables[t]; ok {
			continue
		}
		switch kinds[t] {
		case "":
			bad("table %s is not marked (rule: every table says where it goes): COMMENT ON TABLE %s IS 'shipgraph:tenant' "+
				"(one account's rows, distributed by account_id), 'shipgraph:reference' (shared by every account) "+
				"or 'shipgraph:global' (identity; allow-listed in db/distribution_test.go with the reason)", t, t)
		case kindTenant:
			if !accountCol[t] || !notNull[t] {
				bad("tenant table %s: account_id is missing or nullable (rule: every tenant table carries account_id NOT NULL): "+
					"add account_id uuid NOT NULL REFERENCES accounts (id), backfilled from its parent", t)
			}
			if !hasPK[t] {
				bad("tenant table %s has no primary key (rule: tenant keys carry account_id): add PRIMARY KEY (account_id, id)", t)
			}
		case kindReference:
			if accountCol[t] {
				bad("reference table %s has an account_id column (rule: reference data is shared by every account): "+
					"mark it shipgraph:tenant if its rows belong to an account", t)
			}
		case kindGlobal:
			if _, ok := globalTables[t]; !ok {
				bad("table %s is marked shipgraph:global but is not allow-listed (rule: global tables are the identity "+
					"tables authentication needs): mark it shipgraph:tenant, or add it to globalTables in db/distribution_test.go with the reason", t)
			}
			if t != "accounts" && (!accountCol[t] || !notNull[t]) {
				bad("global table %s: account_id is missing or nullable (rule: a global table's rows still belong to an account)", t)
			}
		}
	}

	for _, c := range cons {
		kind := kinds[c.table]
		if _, skip := unmarkedTables[c.table]; skip || kind == "" {
			continue
		}
		what := map[string]string{"p": "primary key", "u": "unique constraint", "i": "unique index", "f": "foreign key"}[c.kind]
		switch c.kind {
		case "p", "u", "i":
			if slices.Contains(c.cols, "account_id") {
				continue
			}
			switch kind {
			case kindTenant:
				bad("tenant table %s: %s %s is (%s) (rule: every primary key and unique key of a tenant table includes account_id; "+
					"a distributed table cannot enforce one that does not): make it (account_id, %s)",
					c.table, what, c.name, strings.Join(c.cols, ", "), strings.Join(c.cols, ", "))
			case kindGlobal:
				if _, ok := globalUniques[c.name]; !ok {
					bad("global table %s: %s %s is (%s), unique over every account, and not allow-listed "+
						"(rule: a global unique is a decision): include account_id, or add %s to globalUniques in db/distribution_test.go with the reason",
						c.table, what, c.name, strings.Join(c.cols, ", "), c.name)
				}
			}
		case "f":
			refKind := kinds[c.refTable]
			fk := fmt.Sprintf("foreign key %s on %s (%s) → %s (%s)", c.name, c.table, strings.Join(c.cols, ", "),
				c.refTable, strings.Join(c.refCols, ", "))
			switch {
			case kind == kindReference && refKind != kindReference:
				bad("reference table %s: %s (rule: reference tables have no foreign key to account data; "+
					"they are copied whole to every node): drop it, or mark %s shipgraph:tenant", c.table, fk, c.table)
			case kind == kindGlobal && refKind == kindTenant:
				bad("global table %s: %s (rule: a global table, copied to every node, cannot reference a distributed tenant table): drop it", c.table, fk)
			case c.refTable == "accounts":
				if !slices.Equal(c.cols, []string{"account_id"}) {
					bad("%s (rule: only account_id references accounts (id), the distribution column itself): "+
						"FOREIGN KEY (account_id) REFERENCES accounts (id)", fk)
				}
			case (kind == kindTenant || kind == kindGlobal) && (refKind == kindTenant || refKind == kindGlobal):
				if i := slices.Index(c.cols, "account_id"); i < 0 || c.refCols[i] != "account_id" {
					without := func(cols []string) string {
						return strings.Join(slices.DeleteFunc(slices.Clone(cols), func(s string) bool { return s == "account_id" }), ", ")
					}
					bad("%s (rule: a key between account-owned tables pairs account_id with account_id, so a row cannot point "+
						"at another account's row and both sit on one shard): FOREIGN KEY (account_id, %s) REFERENCES %s (account_id, %s)",
						fk, without(c.cols), c.refTable, without(c.refCols))
				}
			}
		}
	}
	return out, nil
}

// stringArray scans a PostgreSQL text[] of plain identifiers.
type stringArray []string

func (a *stringArray) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case []byte:
		s = string(v)
	case string:
		s = v
	default:
		return fmt.Errorf("stringArray: %T", src)
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	*a = nil
	if s == "" {
		return nil
	}
	for _, p := range strings.Split(s, ",") {
		*a = append(*a, strings.Trim(p, `"`))
	}
	return nil
}

func TestDistributionRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := dbtest.Open(t, dbtest.NewDB(t))

	t.Run("migrated schema", func(t *testing.T) {
		out, err := schemaViolations(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range out {
			t.Error(v)
		}
		kinds, err := tableKinds(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		// The tables of migration 00010, by kind: a table that changes kind
		// is a decision the document (docs/scaling.md) must follow.
		want := map[string]string{
			"accounts": kindGlobal, "users": kindGlobal, "api_tokens": kindGlobal,
			"ports": kindReference, "metro_areas": kindReference, "terminals": kindReference,
			"rail_terminals": kindReference, "shipping_lines": kindReference,
			"shipments": kindTenant, "containers": kindTenant, "email_submissions": kindTenant, "documents": kindTenant,
			"document_representations": kindTenant, "document_shipments": kindTenant, "document_containers": kindTenant,
			"custom_field_definitions": kindTenant, "custom_field_options": kindTenant, "custom_fields": kindTenant,
			"list_counts": kindTenant, "uploads": kindTenant,
		}
		for table, kind := range want {
			if kinds[table] != kind {
				t.Errorf("table %s is %q, want shipgraph:%s", table, kinds[table], kind)
			}
		}
	})

	// The keys' relation names (migration 00012's comments, which the peer
	// benchmark's PostGraphile reads: without them it names the dashboard's
	// relations containersByAccountIdAndShipmentId …) survive distribution,
	// which drops and re-adds every key between converted tables.
	t.Run("relation names kept", func(t *testing.T) {
		for key, want := range map[string]string{
			"containers_shipment_id_fkey":            "@fieldName shipment\n@foreignFieldName containers",
			"custom_fields_shipment_id_fkey":         "@fieldName shipment\n@foreignFieldName customFields",
			"custom_fields_definition_id_fkey":       "@fieldName definition\n@foreignFieldName customFields",
			"custom_fields_tracking_request_id_fkey": "@fieldName trackingRequest\n@foreignFieldName customFields",
		} {
			var got sql.NullString
			if err := q.QueryRowContext(ctx, `SELECT obj_description(oid, 'pg_constraint') FROM pg_constraint
				WHERE conname = $1 AND connamespace = 'public'::regnamespace`, key).Scan(&got); err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			if got.String != want {
				t.Errorf("comment of %s = %q, want %q", key, got.String, want)
			}
		}
	})

	// The database itself refuses a row pointing at another account's row.
	t.Run("cross-account references refused", func(t *testing.T) {
		var a, b, ship, doc string
		must := func(dest *string, query string, args ...any) {
			t.Helper()
			if err := q.QueryRowContext(ctx, query, args...).Scan(dest); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
		}
		must(&a, `INSERT INTO accounts (slug, company_name) VALUES ('dist-a', 'A') RETURNING id`)
		must(&b, `INSERT INTO accounts (slug, company_name) VALUES ('dist-b', 'B') RETURNING id`)
		must(&ship, `INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, shipping_line_scac,
			shipping_line_name, shipping_line_short_name) VALUES ($1, 'B1', 'B1', 'MAEU', 'Maersk', 'Maersk') RETURNING id`, a)
		must(&doc, `INSERT INTO documents (account_id, name, document_type, source, file_name)
			VALUES ($1, 'd', 'other', 'upload', 'd.pdf') RETURNING id`, b)
		for _, c := range []struct{ what, query string }{
			{"a container of another account's shipment",
				`INSERT INTO containers (account_id, shipment_id, number) VALUES ('` + b + `', '` + ship + `', 'MSCU1234567')`},
			{"a link between accounts",
				`INSERT INTO document_shipments (account_id, document_id, shipment_id) VALUES ('` + b + `', '` + doc + `', '` + ship + `')`},
		} {
			_, err := q.ExecContext(ctx, c.query)
			if err == nil || !strings.Contains(err.Error(), "foreign key") {
				t.Errorf("%s: err = %v, want a foreign key violation", c.what, err)
			}
		}
	})

	// The check fails, naming table, constraint and rule, on a schema that
	// breaks each rule.
	t.Run("a schema breaking the rules fails", func(t *testing.T) {
		if dbtest.Citus(t) {
			t.Skip("on a distributed database Citus itself refuses these tables (a local table with a key to a distributed one); the check is proved on plain PostgreSQL")
		}
		bq := dbtest.Open(t, dbtest.NewDB(t))
		for _, ddl := range []string{
			`CREATE TABLE bad_unmarked (id uuid PRIMARY KEY)`,
			`CREATE TABLE bad_no_account (id uuid PRIMARY KEY)`,
			`COMMENT ON TABLE bad_no_account IS 'shipgraph:tenant'`,
			`CREATE TABLE bad_keys (id uuid PRIMARY KEY, account_id uuid NOT NULL REFERENCES accounts (id),
				shipment_id uuid REFERENCES shipments (account_id, id), code text UNIQUE,
				FOREIGN KEY (account_id, shipment_id) REFERENCES shipments (account_id, id))`,
			`ALTER TABLE bad_keys ADD CONSTRAINT bad_keys_ship_fk FOREIGN KEY (shipment_id, account_id) REFERENCES shipments (account_id, id)`,
			`COMMENT ON TABLE bad_keys IS 'shipgraph:tenant'`,
			`CREATE TABLE bad_reference (id uuid PRIMARY KEY, shipment_id uuid, account_id uuid,
				FOREIGN KEY (account_id, shipment_id) REFERENCES shipments (account_id, id))`,
			`COMMENT ON TABLE bad_reference IS 'shipgraph:reference'`,
			`CREATE TABLE bad_global (id uuid PRIMARY KEY, account_id uuid NOT NULL REFERENCES accounts (id))`,
			`COMMENT ON TABLE bad_global IS 'shipgraph:global'`,
		} {
			if _, err := bq.ExecContext(ctx, ddl); err != nil {
				// shipment_id uuid REFERENCES shipments (account_id, id) is
				// refused by PostgreSQL itself; keep the rest.
				if strings.Contains(ddl, "CREATE TABLE bad_keys") {
					ddl = strings.Replace(ddl, "REFERENCES shipments (account_id, id), code", ", code", 1)
					if _, err := bq.ExecContext(ctx, ddl); err != nil {
						t.Fatalf("%s: %v", ddl, err)
					}
					continue
				}
				t.Fatalf("%s: %v", ddl, err)
			}
		}
		all, err := schemaViolations(ctx, bq)
		if err != nil {
			t.Fatal(err)
		}
		// This test's tables only: the migrated ones are judged above.
		out := slices.DeleteFunc(all, func(v string) bool { return !strings.Contains(v, " bad_") })
		joined := strings.Join(out, "\n")
		for _, want := range []string{
			"table bad_unmarked is not marked",
			"tenant table bad_no_account: account_id is missing",
			"tenant table bad_keys: primary key bad_keys_pkey is (id)",
			"tenant table bad_keys: unique constraint bad_keys_code_key is (code)",
			"foreign key bad_keys_ship_fk on bad_keys (shipment_id, account_id) → shipments (account_id, id) (rule: a key between account-owned tables",
			"reference table bad_reference has an account_id column",
			"reference table bad_reference: foreign key bad_reference_account_id_shipment_id_fkey",
			"table bad_global is marked shipgraph:global but is not allow-listed",
			"global table bad_global: primary key bad_global_pkey is (id), unique over every account, and not allow-listed",
			"tenant table bad_no_account: primary key bad_no_account_pkey is (id)",
		} {
			if !strings.Contains(joined, want) {
				t.Errorf("no violation %q in:\n%s", want, joined)
			}
		}
		if n := len(out); n != 10 {
			t.Errorf("%d violations, want 10:\n%s", n, joined)
		}
	})
}

// ---------------------------------------------------------------- statements

// crossTenant are the statements that read tenant data across accounts by
// design, matched by a fragment of their text, and why. Anything else that
// scans a tenant table without naming the account fails the check.
var crossTenant = []struct{ fragment, reason string }{
	{"WHERE u.created_at < $1", "the upload sweep (the serve loop's) removes every account's unused uploads by age: " +
		"an operator job, a fan-out to every shard on a distributed database"},
	{"SELECT account_id::text, pos FROM change_log_heads", "the heads of every account's log (ChangeLogHeads): " +
		"how readers of every account (the response cache's feed) find the accounts whose log moved"},
	{"FROM change_log_heads h LEFT JOIN webhook_log_cursors c ON c.account_id = h.account_id", "the webhook fan-out's " +
		"backlog and lag over every account: its position per account beside each account's head"},
	{"FROM change_log l LEFT JOIN webhook_log_cursors c ON c.account_id = l.account_id", "pruning every account's log by age: an operator job"},
	{"extract(epoch FROM now() - min(l.logged_at))", "the webhook fan-out's lag gauge: the oldest change not yet fanned out, over every account"},
	{"SELECT min(created_at) FROM webhooks", "pruning every account's log by age: the oldest webhook of any account bounds what is owed"},
	{"DELETE FROM change_log WHERE account_id = ANY($1::uuid[]) AND id = ANY($2::bigint[])", "pruning: the rows of a batch, of any account"},
	{"GROUP BY account_id ORDER BY account_id > $2::uuid DESC", "the webhook dispatcher finds the accounts with due " +
		"notifications, without locks (it then claims one account's at a time)"},
	{"SELECT count(*) FROM webhook_notifications WHERE delivery_status = 'pending'", "the queue-depth gauge over every account"},
	{"WHERE next_poll_at <= now() AND status IN", "the tracking schedule claims due polls of every account (carrier/tracking)"},
	// Also cross-tenant by design, not run here: the seeder's bulk loads,
	// migrations and the demo tools' reads of every account.
}

var (
	scanNodes   = map[string]bool{"Seq Scan": true, "Index Scan": true, "Index Only Scan": true, "Bitmap Heap Scan": true, "Tid Scan": true, "Tid Range Scan": true, "Sample Scan": true}
	unqualified = regexp.MustCompile(`(^|[^\w.])account_id\b`)
)

// planViolations explains one statement with a generic plan (parameters
// unknown, as a prepared statement runs) and returns one message per scan
// of a tenant table that carries no account_id condition: in its own index
// condition or filter, or in a join condition above it that names its
// alias's account_id.
func planViolations(ctx context.Context, conn *sql.Conn, tenant map[string]bool, stmt string) ([]string, error) {
	if _, err := conn.ExecContext(ctx, `PREPARE dist_check AS `+stmt); err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	defer conn.ExecContext(ctx, `DEALLOCATE dist_check`) //nolint:errcheck
	var n int
	if err := conn.QueryRowContext(ctx,
		`SELECT coalesce(array_length(parameter_types, 1), 0) FROM pg_prepared_statements WHERE name = 'dist_check'`).Scan(&n); err != nil {
		return nil, err
	}
	nulls := make([]string, n)
	for i := range nulls {
		nulls[i] = "NULL"
	}
	exec := "EXECUTE dist_check"
	if n > 0 {
		exec += "(" + strings.Join(nulls, ", ") + ")"
	}
	var raw []byte
	if err := conn.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) `+exec).Scan(&raw); err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	var plans []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &plans); err != nil {
		return nil, err
	}
	var out []string
	var walk func(node map[string]any, ancestors []map[string]any)
	walk = func(node map[string]any, ancestors []map[string]any) {
		typ, _ := node["Node Type"].(string)
		rel, _ := node["Relation Name"].(string)
		if scanNodes[typ] && tenant[rel] {
			alias, _ := node["Alias"].(string)
			qualified := regexp.MustCompile(`\b` + regexp.QuoteMeta(alias) + `\.account_id\b`)
			own := conditions(node, "Index Cond", "Recheck Cond", "Filter", "TID Cond")
			if typ == "Bitmap Heap Scan" {
				own = append(own, bitmapConditions(node)...)
			}
			ok := false
			for _, c := range own {
				if unqualified.MatchString(c) || qualified.MatchString(c) {
					ok = true
				}
			}
			for _, a := range ancestors {
				for _, c := range conditions(a, "Hash Cond", "Merge Cond", "Join Filter") {
					if qualified.MatchString(c) {
						ok = true
					}
				}
			}
			if !ok {
				out = append(out, fmt.Sprintf("%s of tenant table %s (as %s) has no account_id condition (conditions: %q)",
					typ, rel, alias, own))
			}
		}
		children, _ := node["Plans"].([]any)
		for _, c := range children {
			if m, ok := c.(map[string]any); ok {
				walk(m, append(slices.Clip(ancestors), node))
			}
		}
	}
	for _, p := range plans {
		walk(p.Plan, nil)
	}
	return out, nil
}

// The cluster's check fails on a statement that forgets the account, and
// passes one that names it or reads reference data only.
func TestRouterCheckOnCitus(t *testing.T) {
	if !dbtest.Citus(t) {
		t.Skip("needs a Citus cluster: make test-citus (the plain check is TestStatementsFilterByAccount's)")
	}
	t.Parallel()
	ctx := context.Background()
	q := dbtest.Open(t, dbtest.NewDB(t))
	conn, err := q.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	const account = "7d2f4b8e-1c3a-4e5f-9a0b-2c4d6e8f0a1b"
	for _, c := range []struct {
		stmt string
		want string // "" passes
	}{
		{`SELECT c.id FROM containers c WHERE c.shipment_id = ANY($1::uuid[])`, "tasks"},
		{`SELECT c.id FROM containers c WHERE c.shipment_id = ANY($1::uuid[]) AND c.account_id = $2`, ""},
		{`SELECT d.id FROM document_shipments ds JOIN documents d ON d.account_id = ds.account_id AND d.id = ds.document_id WHERE ds.account_id = $1`, ""},
		{`UPDATE custom_fields SET value = '1' WHERE id = $1`, "tasks"},
		{`UPDATE custom_fields SET value = '1' WHERE id = $1 AND account_id = $2`, ""},
		{`SELECT count(*) FROM ports`, ""},
		{`WITH s AS (SELECT id FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 5)
		  SELECT c.id FROM containers c JOIN s ON c.shipment_id = s.id WHERE c.account_id <> $1`, "subplans"},
		// A data-modifying CTE runs as a step of its own on the account's
		// shard: allowed when every step is one task, not otherwise.
		{`WITH u AS (UPDATE custom_fields SET value = '1' WHERE account_id = $1 AND id = $2 RETURNING id) SELECT id FROM u`, ""},
		{`WITH u AS (UPDATE custom_fields SET value = '1' WHERE id = $1 RETURNING id) SELECT id FROM u`, "tasks"},
	} {
		out, _, err := routerViolations(ctx, conn, account, c.stmt)
		if err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		got := strings.Join(out, "\n")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s:\ngot  %q\nwant %q", c.stmt, got, c.want)
		}
	}
}

// routerPlan is what Citus' plan of one statement says about its routing.
type routerPlan struct {
	maxTasks int  // the most tasks (shards) of any distributed step
	subplans int  // steps run first, their results passed on through the coordinator
	pulled   bool // INSERT … SELECT whose rows go through the coordinator
}

// verdict names the plan: a single router task, or one shard in steps
// (every step one task), or what makes it more.
func (p routerPlan) verdict() string {
	switch {
	case p.maxTasks > 1:
		return fmt.Sprintf("%d shards", p.maxTasks)
	case p.subplans > 0:
		return fmt.Sprintf("one shard in %d steps", p.subplans+1)
	case p.pulled:
		return "values via coordinator"
	}
	return "router"
}

// modifyingCTE matches a statement with a data-modifying CTE (WITH x AS
// (INSERT|UPDATE|DELETE …)): Citus (13.2) always runs such a CTE as a step
// of its own (a subplan) before the rest of the statement, whatever the
// statement's shards, so the best such a statement can be is one shard in
// steps (measured against two statements in docs/scaling.md).
var modifyingCTE = regexp.MustCompile(`(?is)\bAS\s+(NOT\s+)?(MATERIALIZED\s+)?\(\s*(INSERT|UPDATE|DELETE)\b`)

// routerViolations explains one statement on a Citus coordinator, with
// account as every uuid parameter (and neutral values for the others), and
// returns what makes it more than a single-shard router plan: a distributed
// step of more than one task, or subplans (recursive planning: results
// pulled to the coordinator and pushed back) in a statement that has no
// data-modifying CTE; and the plan's verdict, for the log.
func routerViolations(ctx context.Context, conn *sql.Conn, account, stmt string) ([]string, string, error) {
	p, err := explainRouter(ctx, conn, account, stmt)
	if err != nil {
		return nil, "", err
	}
	var out []string
	if p.maxTasks > 1 {
		out = append(out, fmt.Sprintf("a distributed step of %d tasks (shards)", p.maxTasks))
	}
	// An INSERT … SELECT of the statement's own values (unnest of its
	// arrays: no distributed table read, hence no subplan) is evaluated on
	// the coordinator and its rows are copied to their account's shard:
	// one shard for one account's rows, as a multi-row VALUES would be.
	if p.subplans > 0 && !modifyingCTE.MatchString(stmt) {
		out = append(out, fmt.Sprintf("%d subplans run first (recursive planning)", p.subplans))
	}
	return out, p.verdict(), nil
}

// explainRouter explains stmt as a prepared statement with the account's
// arguments. Citus refuses to explain a few prepared statements ("could not
// create distributed plan": an INSERT … SELECT with CTEs, planned from the
// bound values only when it runs); those are explained again with the same
// arguments written into the text.
func explainRouter(ctx context.Context, conn *sql.Conn, account, stmt string) (routerPlan, error) {
	if _, err := conn.ExecContext(ctx, `PREPARE dist_route AS `+stmt); err != nil {
		return routerPlan{}, fmt.Errorf("prepare: %w", err)
	}
	defer conn.ExecContext(ctx, `DEALLOCATE dist_route`) //nolint:errcheck
	var types []string
	var raw sql.NullString
	if err := conn.QueryRowContext(ctx,
		`SELECT array_to_string(parameter_types::text[], ',') FROM pg_prepared_statements WHERE name = 'dist_route'`).Scan(&raw); err != nil {
		return routerPlan{}, err
	}
	if raw.String != "" {
		types = strings.Split(raw.String, ",")
	}
	args := make([]string, len(types))
	for i, typ := range types {
		switch typ {
		case "uuid":
			args[i] = "'" + account + "'::uuid"
		case "uuid[]":
			args[i] = "ARRAY['" + account + "']::uuid[]"
		case "text", "character varying":
			args[i] = "''"
		case "text[]":
			args[i] = "'{}'::text[]"
		case "integer", "bigint", "smallint", "numeric", "double precision", "real":
			args[i] = "0"
		case "boolean":
			args[i] = "false"
		case "timestamp with time zone", "timestamp without time zone", "date":
			args[i] = "now()"
		case "jsonb", "json":
			args[i] = "'null'"
		default:
			args[i] = "NULL::" + typ
		}
	}
	exec := "EXECUTE dist_route"
	if len(args) > 0 {
		exec += "(" + strings.Join(args, ", ") + ")"
	}
	var plan []byte
	err := conn.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) `+exec).Scan(&plan)
	if err != nil && strings.Contains(err.Error(), "could not create distributed plan") {
		literal := regexp.MustCompile(`\$([0-9]+)\b`).ReplaceAllStringFunc(stmt, func(m string) string {
			n, _ := strconv.Atoi(m[1:])
			if n < 1 || n > len(args) {
				return m
			}
			return "(" + args[n-1] + ")::" + types[n-1]
		})
		err = conn.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) `+literal).Scan(&plan)
	}
	if err != nil {
		return routerPlan{}, fmt.Errorf("explain: %w", err)
	}
	var doc any
	if err := json.Unmarshal(plan, &doc); err != nil {
		return routerPlan{}, err
	}
	var p routerPlan
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				switch k {
				case "Task Count":
					if n, _ := c.(float64); int(n) > p.maxTasks {
						p.maxTasks = int(n)
					}
				case "Subplans":
					if l, _ := c.([]any); len(l) > 0 {
						p.subplans += len(l)
					}
				case "INSERT/SELECT method":
					if m, _ := c.(string); m == "pull to coordinator" {
						p.pulled = true
					}
				}
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	return p, nil
}

// firstLine is a statement's text on one line, cut short, for the log.
func firstLine(stmt string) string {
	s := strings.Join(strings.Fields(stmt), " ")
	if len(s) > 160 {
		s = s[:160] + " …"
	}
	return s
}

func conditions(node map[string]any, keys ...string) []string {
	var out []string
	for _, k := range keys {
		if s, ok := node[k].(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// bitmapConditions are the index conditions of the bitmap index scans
// under a bitmap heap scan (through BitmapAnd/BitmapOr).
func bitmapConditions(node map[string]any) []string {
	var out []string
	children, _ := node["Plans"].([]any)
	for _, c := range children {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		switch m["Node Type"] {
		case "Bitmap Index Scan":
			out = append(out, conditions(m, "Index Cond")...)
		case "BitmapAnd", "BitmapOr":
			out = append(out, bitmapConditions(m)...)
		}
	}
	return out
}

// tenantTables returns the tables marked shipgraph:tenant.
func tenantTables(t *testing.T, q *sql.DB) map[string]bool {
	t.Helper()
	kinds, err := tableKinds(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for name, k := range kinds {
		if k == kindTenant {
			out[name] = true
		}
	}
	return out
}

// explainConn is a connection planning every statement generically.
func explainConn(t *testing.T, q *sql.DB) *sql.Conn {
	t.Helper()
	conn, err := q.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(context.Background(), `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	return conn
}

func TestStatementsFilterByAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testkit.New(t, testkit.Options{})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(ctx) })
	c := testkit.Config(gqlhttp.DefaultHandlerConfig, load.DefaultLoaderConfig)
	c.Tracing = tp
	c.Resolver.Webhooks.AllowPrivate = true // a receiver URL on loopback, no lookup
	h := testkit.Start(t, env.Store, c)

	one := func(query string, args ...any) string {
		t.Helper()
		var s string
		env.SQL(t, &s, query, args...)
		return s
	}
	acme := one(`SELECT id FROM accounts WHERE slug = 'acme'`)
	ship := one(`SELECT id FROM shipments WHERE account_id = $1 ORDER BY created_at, id LIMIT 1`, acme)
	box := one(`SELECT id FROM containers WHERE account_id = $1 ORDER BY created_at, id LIMIT 1`, acme)
	doc := one(`SELECT document_id FROM document_shipments WHERE account_id = $1 ORDER BY document_id LIMIT 1`, acme)
	email := one(`SELECT id FROM email_submissions WHERE account_id = $1 ORDER BY id LIMIT 1`, acme)
	enumDef := one(`SELECT d.id FROM custom_field_definitions d WHERE d.account_id = $1 AND d.entity_type = 'Shipment'
		AND d.data_type = 'enum' ORDER BY d.id LIMIT 1`, acme)
	enumSlug := one(`SELECT api_slug FROM custom_field_definitions WHERE id = $1`, enumDef)
	optValue := one(`SELECT value FROM custom_field_options WHERE definition_id = $1 ORDER BY position LIMIT 1`, enumDef)
	textDef := one(`SELECT d.id FROM custom_field_definitions d WHERE d.account_id = $1 AND d.entity_type = 'Shipment'
		AND d.data_type = 'short_text' ORDER BY d.id LIMIT 1`, acme)
	textSlug := one(`SELECT api_slug FROM custom_field_definitions WHERE id = $1`, textDef)
	field := one(`SELECT id FROM custom_fields WHERE account_id = $1 ORDER BY id LIMIT 1`, acme)
	terminal := one(`SELECT id FROM terminals ORDER BY id LIMIT 1`)
	port := one(`SELECT id FROM ports ORDER BY id LIMIT 1`)
	key := env.Key(t, "acme/admin")

	do := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd *bytes.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		} else {
			rd = bytes.NewReader(nil)
		}
		req := httptest.NewRequest(method, path, rd)
		req.Header.Set("Authorization", "Token "+key)
		if body != nil {
			req.Header.Set("Content-Type", "application/vnd.api+json")
			if path == "/graphql" {
				req.Header.Set("Content-Type", "application/json")
			}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var out map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &out)
		if w.Code >= 300 || out["errors"] != nil {
			t.Errorf("%s %s: %d %s", method, path, w.Code, w.Body.String())
		}
		return w.Code, out
	}
	gql := func(query string, vars map[string]any) {
		t.Helper()
		do(http.MethodPost, "/graphql", map[string]any{"query": query, "variables": vars})
	}
	attrs := func(typ string, a map[string]any) map[string]any {
		return map[string]any{"data": map[string]any{"type": typ, "attributes": a}}
	}

	// Reads: the dashboard, every relationship, lists with filters, counts,
	// pages, node lookups.
	gql(`{ shipments(first: 50) { totalCount nodes { id billOfLadingNumber createdAt
		containers { number currentStatus equipmentType podTerminal { name firmsCode port { name code } }
			documents { id } customFields { apiSlug value } }
		customFields { apiSlug value definition { id options { value label } } }
		documents { id name shipments { id } cargos { id } emailSubmission { id } user { id } lastDocumentRepresentation { id } } } } }`, nil)
	gql(`{ documents(first: 20, orderBy: {field: ADDED_BY}) { totalCount nodes { id shipments { id containers { id } } cargos { id shipment { id } } } } }`, nil)
	gql(`query($id: ID!) { node(id: $id) { id } shipment(id: $id) { id } }`, map[string]any{"id": ship})
	gql(`query($id: ID!) { container(id: $id) { id shipment { id } } }`, map[string]any{"id": box})
	gql(`{ containers(first: 5, after: null, filter: {statuses: [ON_SHIP, AVAILABLE]}) { totalCount pageInfo { hasNextPage } } }`, nil)
	gql(`{ viewer { account { id } } customFieldDefinitions(first: 10) { totalCount nodes { id options { id } } } }`, nil)
	// Grouped counts, every key (issue 27).
	gql(`{ containerStats(filter: {statuses: [ON_SHIP]}, groupBy: [POD_TERMINAL, LAST_FREE_DAY]) { count podTerminal { name port { code } } } }`, nil)
	gql(`{ containerStats(groupBy: [SHIPPING_LINE, PORT_OF_DISCHARGE, STATUS]) { count } }`, nil)
	gql(`{ containerStats(groupBy: [ETA_WEEK]) { count } }`, nil)
	gql(`{ shipmentStats(filter: {search: "MAEU"}, groupBy: [POD_TERMINAL, ETA_WEEK]) { count portOfDischarge { code } shippingLine { scac } } }`, nil)
	for _, p := range []string{
		"/v2/shipments?include=containers,pod_terminal,port_of_lading&page[size]=10",
		"/v2/shipments?number=X&page[size]=10",
		"/v2/shipments?q=MAEU&page[number]=2&page[size]=5",
		"/v2/shipments/" + ship + "?include=containers",
		"/v2/containers?include=shipment,pod_terminal&page[size]=10",
		"/v2/containers/" + box + "?include=shipment",
		"/v2/documents?include=shipments,cargos,email_submission&page[size]=10",
		"/v2/documents?filter[reference]=MSCU1234567",
		"/v2/documents/" + doc + "?include=shipments,cargos",
		"/v2/email_submissions?include=documents",
		// Search and parties (issue 28): the three search statements (words
		// only, with trigrams, a number), the party list, count and by-id read.
		"/v2/search?query=ms", "/v2/search?query=MSCU%201234", "/v2/search?query=MSCU%20123456",
		"/v2/parties?page[size]=5", "/v2/tracking_requests?include=customer&page[size]=5",
		"/v2/email_submissions/" + email,
		"/v2/custom_field_definitions",
		"/v2/custom_field_definitions/" + enumDef,
		"/v2/custom_field_definitions/" + enumDef + "/options",
		"/v2/custom_fields?page[size]=10",
		"/v2/custom_fields/" + field,
		"/v2/shipments/" + ship + "/custom_fields",
		"/v2/terminals/" + terminal,
		"/v2/ports/" + port,
		"/v2/shipping_lines",
		"/v2/shipping_lines?page[number]=2&page[size]=3",
		"/v2/custom_fields?page[number]=2&page[size]=3",
		"/v2/documents?page[number]=2&page[size]=3&sort=-created_at",
	} {
		do(http.MethodGet, p, nil)
	}

	// Writes and their read-backs.
	do(http.MethodPatch, "/v2/shipments/"+ship+"/custom_fields/"+textSlug, attrs("custom_field", map[string]any{"value": "dist"}))
	do(http.MethodPatch, "/v2/shipments/"+ship+"/custom_fields/"+enumSlug, attrs("custom_field", map[string]any{"value": optValue}))
	do(http.MethodDelete, "/v2/shipments/"+ship+"/custom_fields/"+textSlug, nil)
	do(http.MethodPatch, "/v2/shipments/"+ship+"/stop_tracking", nil)
	do(http.MethodPatch, "/v2/shipments/"+ship+"/resume_tracking", nil)
	do(http.MethodPatch, "/v2/documents/"+doc, attrs("document", map[string]any{"document_type_manual": "other"}))
	_, created := do(http.MethodPost, "/v2/custom_field_definitions/"+enumDef+"/options",
		attrs("custom_field_option", map[string]any{"label": "Dist", "value": "dist"}))
	optID, _ := created["data"].(map[string]any)["id"].(string)
	do(http.MethodPatch, "/v2/custom_field_definitions/"+enumDef+"/options/"+optID,
		attrs("custom_field_option", map[string]any{"value": "dist2"}))
	do(http.MethodDelete, "/v2/custom_field_definitions/"+enumDef+"/options/"+optID, nil)
	_, def := do(http.MethodPost, "/v2/custom_field_definitions", attrs("custom_field_definition", map[string]any{
		"entity_type": "Shipment", "api_slug": "dist_check", "display_name": "Dist", "data_type": "short_text"}))
	defID, _ := def["data"].(map[string]any)["id"].(string)
	do(http.MethodPatch, "/v2/custom_field_definitions/"+defID, attrs("custom_field_definition", map[string]any{"display_name": "Dist 2"}))
	do(http.MethodDelete, "/v2/custom_field_definitions/"+defID, nil)
	gql(`mutation($s: ID!, $slug: String!) { updateShipmentCustomField(shipmentId: $s, apiSlug: $slug, value: "g") { id } }`,
		map[string]any{"s": ship, "slug": textSlug})

	// Tracking requests through both APIs (issue 27).
	_, tr := do(http.MethodPost, "/v2/tracking_requests", attrs("tracking_request", map[string]any{
		"request_type": "bill_of_lading", "request_number": "MEDUDIST01", "scac": "MSCU"}))
	trID, _ := tr["data"].(map[string]any)["id"].(string)
	do(http.MethodGet, "/v2/tracking_requests?include=tracked_object&filter[status]=pending,created&filter[scac]=MSCU&q=MEDU&page[size]=5", nil)
	do(http.MethodGet, "/v2/tracking_requests/"+trID+"?include=tracked_object", nil)
	do(http.MethodPatch, "/v2/tracking_requests/"+trID, attrs("tracking_request", map[string]any{"tags": []string{"dist"}}))
	do(http.MethodPost, "/v2/tracking_requests/infer_number", map[string]any{"number": "MSCU1234566"})
	gql(`query($id: ID!, $s: ID!) { trackingRequests(first: 5, filter: {statuses: [PENDING]}) { totalCount nodes { id trackedObject { id } } }
		node(id: $id) { id } shipment(id: $s) { trackingRequests { id } } }`, map[string]any{"id": trID, "s": ship})
	// Their custom fields (migration 00016).
	do(http.MethodPost, "/v2/custom_field_definitions", attrs("custom_field_definition", map[string]any{
		"entity_type": "TrackingRequest", "api_slug": "dist_tr", "display_name": "Dist TR", "data_type": "short_text"}))
	trFields := "/v2/tracking_requests/" + trID + "/custom_fields"
	do(http.MethodPost, trFields, attrs("custom_field", map[string]any{"api_slug": "dist_tr", "value": "a"}))
	do(http.MethodGet, trFields, nil)
	do(http.MethodPatch, trFields+"/dist_tr", attrs("custom_field", map[string]any{"value": "b"}))
	do(http.MethodGet, "/v2/custom_fields?filter[entity_type]=tracking_request", nil)
	gql(`query($id: ID!) { trackingRequest(id: $id) { customFields { id entity { __typename } } customField(apiSlug: "dist_tr") { value } } }`,
		map[string]any{"id": trID})
	gql(`mutation($id: ID!) { updateTrackingRequestCustomField(trackingRequestId: $id, apiSlug: "dist_tr", value: "c") { id } }`,
		map[string]any{"id": trID})
	do(http.MethodDelete, trFields+"/dist_tr", nil)

	// Webhooks through both APIs.
	_, hook := do(http.MethodPost, "/v2/webhooks", attrs("webhook", map[string]any{
		"url": "http://127.0.0.1:9/hook", "events": []string{"container.updated"}}))
	hookID, _ := hook["data"].(map[string]any)["id"].(string)
	do(http.MethodGet, "/v2/webhooks", nil)
	do(http.MethodGet, "/v2/webhooks/"+hookID, nil)
	do(http.MethodPatch, "/v2/webhooks/"+hookID, attrs("webhook", map[string]any{"active": true}))
	gql(`{ webhooks(first: 5) { totalCount nodes { id url } } }`, nil)

	// Store calls no request above makes: files, the demo tools, the change
	// log's readers and the webhook engine.
	root, span := tp.Tracer("distribution").Start(ctx, "store calls")
	store := env.Store
	changes, _, err := store.ReadAccountChangeLog(root, acme, 0, 5)
	if err != nil || len(changes) == 0 {
		t.Fatalf("the account's change log: %d rows, %v", len(changes), err)
	}
	from, err := store.WebhookCursor(root, acme)
	if err != nil {
		t.Fatal(err)
	}
	to, err := store.AccountChangeLogHead(root, acme)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.WebhookBacklogs(root, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := store.RaiseWebhookNotifications(root, acme, from, to, []db.WebhookEvent{{AccountID: acme, ChangeID: changes[0].ID,
		LoggedAt: time.Now(), Event: "container.updated", ReferenceType: "container", ReferenceID: box,
		Payload: []byte(`{"changeset":{}}`)}}, 10); err != nil {
		t.Fatal(err)
	}
	due, err := store.WebhookDueAccounts(root, 10, "00000000-0000-0000-0000-000000000000")
	if err != nil || !slices.Contains(due, acme) {
		t.Fatalf("accounts with due notifications: %v, %v; want %s among them", due, err, acme)
	}
	claimed, err := store.ClaimWebhookDeliveries(root, acme, "dist", 10, 2, time.Minute, "00000000-0000-0000-0000-000000000000")
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %d notifications, %v; want the one raised", len(claimed), err)
	}
	if _, err := store.RecordWebhookAttempt(root, db.WebhookAttempt{AccountID: acme, NotificationID: claimed[0].ID,
		Owner: "dist", StatusCode: 200, Status: db.WebhookSucceeded}); err != nil {
		t.Fatal(err)
	}
	u, err := store.CreateUpload(root, model.Upload{AccountID: acme, Key: "dist/" + acme, Filename: "d.pdf",
		ContentType: "application/pdf", ByteSize: 3, Checksum: "abc="})
	if err != nil {
		t.Fatal(err)
	}
	trShip := "" // the shipment the tracking batch below creates
	steps := []func() error{
		func() error { _, err := store.UnusedUpload(root, acme, u.ID); return err },
		func() error {
			_, err := store.CreateDocument(root, db.NewDocument{AccountID: acme, Name: "d", DocumentType: "other",
				Source: "upload", Upload: u, ShipmentIDs: []string{ship}, ContainerIDs: []string{box}})
			return err
		},
		func() error { _, _, err := store.DocumentWithFile(root, acme, "abc=", 3); return err },
		func() error { _, err := store.DocumentFile(root, acme, doc); return err },
		func() error { _, err := store.DocumentFiles(root, acme, []string{doc}); return err },
		func() error { _, err := store.DeleteUpload(root, acme, u.ID); return err },
		func() error { _, err := store.StaleUploads(root, time.Now(), 10); return err },
		func() error { _, err := store.DemoDocumentsWithoutFile(root, 2); return err },
		func() error { _, err := store.DemoActivity(root, 2); return err },
		func() error { _, err := store.CustomFieldOptionsByIDs(root, acme, []string{optID, field}); return err },
		func() error { _, err := store.NodeType(root, acme, field); return err },
		func() error { _, err := store.ChangeLogHeads(root); return err },
		func() error { _, err := store.AccountChangeLogHeads(root, []string{acme}); return err },
		func() error { _, _, err := store.AccountChangeLogPos(root, acme, changes[0].ID); return err },
		func() error {
			_, _, err := store.PruneChangeLog(root, time.Now().Add(-time.Hour), time.Time{}, 100)
			return err
		},
		func() error { _, err := store.WebhookQueueDepth(root); return err },
		func() error { _, err := store.ChangeLogLag(root); return err },
		// The data sync's statements (datasync, migration 00043).
		func() error {
			d, err := store.CreateSyncDestination(root, model.SyncDestination{AccountID: acme, Kind: "postgres", URL: "postgres://h/db",
				Tables: []string{db.SyncShipments}}, []byte{1})
			if err != nil {
				return err
			}
			now := time.Now()
			for _, step := range []func() error{
				func() error { _, err := store.SyncDestinations(root, acme); return err },
				func() error { _, err := store.SyncDestinationSecret(root, acme, d.ID); return err },
				func() error { _, err := store.SyncStatuses(root, acme, d.ID, d.Tables); return err },
				func() error { return store.SyncBackfillStarted(root, acme, d.ID, db.SyncShipments, 0) },
				func() error { return store.SyncBackfillPage(root, acme, d.ID, db.SyncShipments, ship, 1, false, now) },
				func() error { return store.SyncBackfillPage(root, acme, d.ID, db.SyncShipments, ship, 1, true, now) },
				func() error {
					_, err := store.SyncAdvance(root, acme, d.ID, db.SyncShipments, 0, 1, 1, now)
					return err
				},
				func() error { _, err := store.SyncFailed(root, acme, d.ID, d.Tables, "x", now); return err },
				func() error { return store.SyncSucceeded(root, acme, d.ID) },
				func() error { _, err := store.SyncLease(root, acme, d.ID, acme, now, now.Add(time.Minute)); return err },
				func() error { return store.SyncRelease(root, acme, d.ID, acme) },
				func() error { _, err := store.SyncLogHead(root, acme); return err },
				func() error { _, err := store.SyncLogPage(root, acme, 0, 10); return err },
				func() error { _, err := store.PauseSyncDestination(root, acme, d.ID, true); return err },
				func() error { _, err := store.ResyncSyncDestination(root, acme, d.ID); return err },
			} {
				if err := step(); err != nil {
					return err
				}
			}
			for _, tb := range db.SyncTables() {
				if _, err := store.SyncPage(root, acme, tb, "", 5); err != nil {
					return err
				}
				if _, err := store.SyncRows(root, acme, tb, []string{ship}, map[string][]string{"shipment": {ship}, "container": {box}}); err != nil {
					return err
				}
			}
			return store.DeleteSyncDestination(root, acme, d.ID)
		},
		// The document jobs (issue 28, migration 00020).
		func() error { _, err := store.DocumentTarget(root, acme, doc); return err },
		func() error { _, err := store.DocumentText(root, acme, doc); return err },
		func() error {
			_, err := store.SaveExtraction(root, db.Extraction{AccountID: acme, DocumentID: doc, Text: "BILL OF LADING", Extractor: "plain",
				Classified: db.Classified{DocumentType: "bill_of_lading", Notes: "rules", SchemaVersion: "bill_of_lading@2026-03-23", Payload: map[string]any{}},
				Links:      db.DocumentLinks{Numbers: []string{"MEDUDIST01"}, Containers: []string{"MSCU1234566"}}})
			return err
		},
		func() error {
			return store.SaveClassification(root, acme, doc, db.Classified{DocumentType: "other", SchemaVersion: "other@2026-03-23"})
		},
		func() error {
			_, err := store.LinkDocument(root, acme, doc, db.DocumentLinks{Numbers: []string{"X1234"}})
			return err
		},
		func() error { return store.RecordExtractionFailed(root, acme, doc, "needs_ocr: test") },
		func() error {
			return store.ResetExtraction(root, acme, doc, func(context.Context, *sql.Tx) error { return nil })
		},
		func() error {
			_, err := store.ReplaceDocumentFile(root, acme, doc, "dist/rotated", 3, "abc=")
			return err
		},
		// The tracking engine (carrier/tracking): a batch of polls of the
		// account in one TrackingTx, every statement of it, then a retry,
		// the schedule's claim (its per-account statement runs only for an
		// account with a due request: the outcome makes this one due) and
		// a refresh's lookup.
		func() error { _, err := store.TrackingPollTarget(root, acme, trID); return err },
		func() error {
			return store.InTrackingTx(root, acme, func(tx *db.TrackingTx) error {
				live := []string{"pending", "awaiting_manifest", "created"}
				// An id no row has takes Lock's second statement (busy or gone).
				if _, _, err := tx.Lock(nil, []string{trID, acme}); err != nil {
					return err
				}
				usnyc, facility, status, loaded := "USNYC", "E005", "on_ship", "container.transport.vessel_loaded"
				next := time.Now().Add(time.Hour)
				poll := db.PollWrite{RequestID: trID, Status: "created", NextPollAt: &next,
					Shipment:   &db.PolledShipment{BillOfLadingNumber: "MEDUDIST01", PodLocode: &usnyc, PodFacility: &facility},
					Containers: []db.PolledContainer{{Number: "MSCU1234566", CurrentStatus: &status}},
					Events: []db.PolledEvent{{ContainerNumber: "MSCU1234566", CarrierEventID: "dist-1", Event: "Loaded",
						OriginalEvent: "Loaded", Locode: &usnyc, Payload: []byte(`{}`), TransportEvent: &loaded}}}
				// A poll that creates the shipment, and one of an id no row has.
				got, err := tx.ApplyPolls(live, []db.PollWrite{poll, {RequestID: acme, Status: "failed"}})
				if err != nil {
					return err
				}
				if got[trID].ShipmentID == nil {
					return fmt.Errorf("no shipment for the request: %+v", got)
				}
				sid := *got[trID].ShipmentID
				trShip = sid
				// The same poll with the ETA moved: the shipment's
				// milestones are left to UpdateShipments.
				eta := time.Now().Add(72 * time.Hour)
				poll.Shipment.PodEtaAt = &eta
				if got, err = tx.ApplyPolls(live, []db.PollWrite{poll}); err != nil {
					return err
				}
				if !got[trID].Moved {
					return fmt.Errorf("the ETA's move was not reported: %+v", got[trID])
				}
				if err := tx.UpdateShipments([]db.ShipmentUpdate{{ShipmentID: sid, RequestID: trID, PolledShipment: *poll.Shipment}}); err != nil {
					return err
				}
				created := []db.RequestShipment{{RequestID: trID, ShipmentID: sid}}
				if err := tx.ApplyInitialCustomFields(created); err != nil {
					return err
				}
				if err := tx.StopShipments([]db.ShipmentStop{{ShipmentID: sid, Reason: "cancelled_by_user"}}); err != nil {
					return err
				}
				if err := tx.StopRequests(live, []string{trID}); err != nil {
					return err
				}
				// The request live and due again, for the schedule's claim below.
				past := time.Now().Add(-time.Hour)
				poll.NextPollAt = &past
				_, err = tx.ApplyPolls(append(live, "tracking_stopped"), []db.PollWrite{poll})
				return err
			})
		},
		func() error {
			past := time.Now().Add(-time.Hour)
			_, _, err := store.RecordTrackingRetry(root, db.TrackingRetry{AccountID: acme, RequestID: trID, NextPollAt: past,
				MaxRetries: 5, FailReason: "retries_exhausted", Regular: past})
			return err
		},
		func() error {
			claimed := 0
			_, err := store.ClaimDueTrackingRequests(root, 10, time.Minute, time.Second, func(_ context.Context, _ *sql.Tx, due []db.DueTracking) ([]db.DueTracking, error) {
				claimed = len(due)
				return nil, nil
			})
			if err == nil && claimed == 0 {
				err = fmt.Errorf("the due request was not claimed: the per-account claim did not run")
			}
			return err
		},
		func() error { _, _, err := store.TrackingRequestsOfContainer(root, acme, box); return err },
		// A container's journey (GraphQL's events and vessels), the
		// status history, parties, key management, and the writes the
		// requests above do not reach.
		func() error { _, err := store.TransportEventsByContainerIDs(root, acme, []string{box}); return err },
		func() error { _, err := store.TransportEventIDsByContainerIDs(root, acme, []string{box}); return err },
		func() error { _, err := store.TransportEventsByIDs(root, acme, []string{box}); return err },
		func() error { _, err := store.RawEventsByContainerIDs(root, acme, []string{box}); return err },
		func() error { _, err := store.RawEventIDsByContainerIDs(root, acme, []string{box}); return err },
		func() error { _, err := store.VesselFuturePortCalls(root, acme, acme, time.Now()); return err },
		func() error {
			_, err := store.ContainerStatusHistory(root, acme, time.Now().AddDate(0, 0, -7), time.Now(), 7)
			return err
		},
		func() error {
			p := &model.Party{CompanyName: "Dist Party"}
			if err := store.CreateParty(root, acme, p); err != nil {
				return err
			}
			if _, err := store.PartiesByIDs(root, acme, []string{p.ID}); err != nil {
				return err
			}
			_, err := store.RenameParty(root, acme, p.ID, "Dist Party 2")
			return err
		},
		func() error {
			u, err := store.FirstUserWithRole(root, acme, "admin")
			if err != nil {
				return err
			}
			k, err := db.NewAPIKey(rand.Reader)
			if err != nil {
				return err
			}
			tok, err := store.CreateToken(root, db.TokenInput{AccountID: acme, UserID: &u.ID, Role: "viewer", Name: "dist", Key: k})
			if err != nil {
				return err
			}
			if err := store.TouchTokens(root, []string{tok.ID}); err != nil {
				return err
			}
			if _, err := store.ActiveTokens(root, []string{tok.ID}); err != nil {
				return err
			}
			return store.RevokeToken(root, acme, tok.ID)
		},
		func() error {
			_, err := store.UpdateContainerRefNumbers(root, acme, box, []string{"DIST-REF"})
			return err
		},
		func() error {
			_, err := store.UpdateShipment(root, acme, ship, db.ShipmentPatch{Tags: []string{"dist"}, SetTags: true})
			return err
		},
		func() error {
			defs, err := store.CustomFieldDefinitionsByIDs(root, acme, []string{textDef})
			if err != nil || len(defs) != 1 {
				return fmt.Errorf("definition %s: %d, %v", textDef, len(defs), err)
			}
			// The tracking batch's new shipment has no value yet.
			cf, err := store.CreateCustomField(root, acme, defs[0], trShip, model.JSON(`"dist"`))
			if err != nil {
				return err
			}
			_, err = store.DeleteCustomFieldByID(root, acme, cf.ID)
			return err
		},
		func() error {
			u, err := store.CreateUpload(root, model.Upload{AccountID: acme, Key: "dist/attach/" + acme, Filename: "a.pdf",
				ContentType: "application/pdf", ByteSize: 3, Checksum: "abd="})
			if err != nil {
				return err
			}
			d, err := store.CreateDocument(root, db.NewDocument{AccountID: acme, Name: "d2", DocumentType: "other",
				Source: "upload", Upload: u})
			if err != nil {
				return err
			}
			if err := store.AttachUpload(root, d.ID, model.Upload{AccountID: acme, Key: "dist/attach2/" + acme, Filename: "b.pdf",
				ContentType: "application/pdf", ByteSize: 4, Checksum: "abe="}); err != nil {
				return err
			}
			_, _, err = store.DeleteDocumentWithFile(root, acme, d.ID)
			return err
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Errorf("store call %d: %v", i, err)
		}
	}
	span.End()
	do(http.MethodGet, "/v2/webhook_notifications?include=webhook,reference_object", nil)
	do(http.MethodGet, "/v2/webhook_notifications/"+claimed[0].ID+"?include=webhook,reference_object", nil)
	gql(`{ webhookNotifications(first: 5) { totalCount nodes { id event deliveryStatus } } }`, nil)
	do(http.MethodDelete, "/v2/webhooks/"+hookID, nil)

	// Every statement the store sent, once.
	seen := map[string]bool{}
	var stmts []string
	for _, s := range rec.Ended() {
		for _, a := range s.Attributes() {
			if a.Key == "db.query.text" && !seen[a.Value.AsString()] {
				seen[a.Value.AsString()] = true
				stmts = append(stmts, a.Value.AsString())
			}
		}
	}
	if len(stmts) < 40 {
		t.Fatalf("only %d statements recorded: the run did not reach the store", len(stmts))
	}
	tenant := tenantTables(t, env.Store.SQL())
	conn := explainConn(t, env.Store.SQL())
	check := func(stmt string) ([]string, string, error) {
		out, err := planViolations(ctx, conn, tenant, stmt)
		return out, "", err
	}
	citus := dbtest.Citus(t)
	if citus {
		// On the cluster the proof is Citus' own plan: one task, on the
		// account's shard, with the test account for every uuid parameter.
		rconn, err := env.Store.SQL().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rconn.Close() })
		check = func(stmt string) ([]string, string, error) { return routerViolations(ctx, rconn, acme, stmt) }
	}
	scanned := map[string]bool{}
	allowed := 0
	verdicts := map[string]int{} // on the cluster: statements by how Citus runs them
	var stepped, failed []string // on the cluster: one shard in steps; failures (first line)
	for _, stmt := range stmts {
		for table := range tenant {
			if regexp.MustCompile(`\b` + table + `\b`).MatchString(stmt) {
				scanned[table] = true
			}
		}
		out, verdict, err := check(stmt)
		if err != nil {
			failed = append(failed, "explain refused: "+firstLine(stmt))
			t.Errorf("%v\n%s", err, stmt)
			continue
		}
		if citus {
			// One line per statement: how Citus runs it.
			t.Logf("citus: %-22s %s", verdict, firstLine(stmt))
		}
		if len(out) == 0 {
			verdicts[verdict]++
			if verdict != "router" && verdict != "" {
				stepped = append(stepped, verdict+": "+firstLine(stmt))
			}
			continue
		}
		reason := ""
		for _, a := range crossTenant {
			if strings.Contains(stmt, a.fragment) {
				reason = a.reason
			}
		}
		if reason != "" {
			allowed++
			t.Logf("cross-tenant by design (%s):\n%s", reason, stmt)
			continue
		}
		failed = append(failed, strings.Join(out, "; ")+": "+firstLine(stmt))
		t.Errorf("a statement reads tenant data without naming the account (rule: every statement that reads tenant "+
			"data filters by account_id; on a distributed database it would go to every shard):\n  %s\nstatement:\n%s",
			strings.Join(out, "\n  "), stmt)
	}
	t.Logf("%d statements explained, %d cross-tenant by design", len(stmts), allowed)
	if citus {
		sort.Strings(stepped)
		t.Logf("citus: %d router (one task), %d on one shard in steps (a data-modifying CTE, run first) or with values "+
			"copied from the coordinator, %d cross-tenant by design, %d failing", verdicts["router"], len(stepped), allowed, len(failed))
		for _, s := range stepped {
			t.Logf("citus: not one task: %s", s)
		}
		for _, f := range failed {
			t.Logf("citus: FAILS: %s", f)
		}
	}
	for _, table := range []string{"shipments", "containers", "documents", "document_shipments", "document_containers",
		"document_representations", "email_submissions", "custom_field_definitions", "custom_field_options",
		"custom_fields", "list_counts", "uploads", "change_log", "webhooks", "webhook_notifications"} {
		if !scanned[table] {
			t.Errorf("no statement of the run reads %s: the check did not cover it", table)
		}
	}
	if allowed == 0 {
		t.Error("the upload sweep's statement was not recognised as cross-tenant")
	}

	// The check fails on a statement that forgets the account.
	t.Run("a statement without the account fails", func(t *testing.T) {
		if dbtest.Citus(t) {
			t.Skip("TestRouterCheckOnCitus checks the cluster's check")
		}
		for _, c := range []struct {
			stmt string
			want string // "" passes
		}{
			{`SELECT c.id FROM containers c WHERE c.shipment_id = ANY($1::uuid[])`, "of tenant table containers (as c) has no account_id condition"},
			{`SELECT c.id FROM containers c WHERE c.shipment_id = ANY($1::uuid[]) AND c.account_id = $2`, ""},
			{`SELECT d.id FROM document_shipments ds JOIN documents d ON d.id = ds.document_id WHERE ds.account_id = $1`,
				"of tenant table documents (as d) has no account_id condition"},
			{`SELECT d.id FROM document_shipments ds JOIN documents d ON d.account_id = ds.account_id AND d.id = ds.document_id WHERE ds.account_id = $1`, ""},
			{`UPDATE custom_fields SET value = '1' WHERE id = $1`, "of tenant table custom_fields (as custom_fields) has no account_id condition"},
			{`SELECT count(*) FROM ports`, ""},
		} {
			out, err := planViolations(ctx, conn, tenant, c.stmt)
			if err != nil {
				t.Fatalf("%s: %v", c.stmt, err)
			}
			got := strings.Join(out, "\n")
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("%s:\ngot  %q\nwant %q", c.stmt, got, c.want)
			}
		}
	})
}

// Migration 00010 runs in place on existing data: a seeded database taken
// back below it (its Down) and migrated again keeps every row, gives the
// link tables and options their parent's account, and passes the rules; a
// row pointing across accounts stops it with the key that names it.
func TestDistributionMigrationOnSeededData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, p := seededMigrations(t, 120, 7)
	q := store.SQL()
	// What the rows say, by table: counts, and who owns each link and option.
	snapshot := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for name, query := range map[string]string{
			"counts": `SELECT (SELECT count(*) FROM shipments) || '/' || (SELECT count(*) FROM containers) || '/' ||
				(SELECT count(*) FROM documents) || '/' || (SELECT count(*) FROM document_shipments) || '/' ||
				(SELECT count(*) FROM document_containers) || '/' || (SELECT count(*) FROM custom_field_options) || '/' ||
				(SELECT count(*) FROM custom_fields) || '/' || (SELECT string_agg(account_id::text || list || n, ',' ORDER BY account_id, list)
					FROM (SELECT account_id, list, sum(n) AS n FROM list_counts GROUP BY 1, 2) c)`,
			"links": `SELECT md5(string_agg(d.account_id::text || ds.document_id::text || ds.shipment_id::text, ',' ORDER BY ds.document_id, ds.shipment_id))
				FROM document_shipments ds JOIN documents d ON d.id = ds.document_id`,
			"cargos": `SELECT md5(string_agg(d.account_id::text || dc.document_id::text || dc.container_id::text, ',' ORDER BY dc.document_id, dc.container_id))
				FROM document_containers dc JOIN documents d ON d.id = dc.document_id`,
			"options": `SELECT md5(string_agg(d.account_id::text || o.id::text || o.value, ',' ORDER BY o.id))
				FROM custom_field_options o JOIN custom_field_definitions d ON d.id = o.definition_id`,
		} {
			var s string
			if err := q.QueryRowContext(ctx, query).Scan(&s); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out[name] = s
		}
		return out
	}
	before := snapshot()
	if _, err := p.DownTo(ctx, 9); err != nil {
		t.Fatalf("down: %v", err)
	}
	var has bool
	if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns
		WHERE table_name = 'document_shipments' AND column_name = 'account_id')`).Scan(&has); err != nil || has {
		t.Fatalf("after the down migration document_shipments.account_id exists = %v (%v)", has, err)
	}
	if got := snapshot(); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("the down migration changed the data:\n%v\n%v", got, before)
	}

	// A link from one account's document to another's shipment (plain SQL
	// could write one before 00010) stops the migration, named.
	var bad string
	if err := q.QueryRowContext(ctx, `INSERT INTO document_shipments (document_id, shipment_id)
		SELECT d.id, s.id FROM documents d JOIN shipments s ON s.account_id <> d.account_id LIMIT 1
		RETURNING document_id`).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err == nil || !strings.Contains(err.Error(), "document_shipments_shipment_id_fkey") {
		t.Fatalf("up over a cross-account link: err = %v, want the violated document_shipments_shipment_id_fkey", err)
	}
	if _, err := q.ExecContext(ctx, `DELETE FROM document_shipments ds USING documents d, shipments s
		WHERE d.id = ds.document_id AND s.id = ds.shipment_id AND s.account_id <> d.account_id`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	if got := snapshot(); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("the migration changed the data:\n%v\n%v", got, before)
	}
	for _, query := range []string{
		`SELECT count(*) FROM document_shipments ds JOIN documents d ON d.id = ds.document_id WHERE d.account_id <> ds.account_id`,
		`SELECT count(*) FROM document_containers dc JOIN documents d ON d.id = dc.document_id WHERE d.account_id <> dc.account_id`,
		`SELECT count(*) FROM custom_field_options o JOIN custom_field_definitions d ON d.id = o.definition_id WHERE d.account_id <> o.account_id`,
	} {
		var n int
		if err := q.QueryRowContext(ctx, query).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s = %d (%v), want 0", query, n, err)
		}
	}
	out, err := schemaViolations(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range out {
		t.Error(v)
	}
}
