package db

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"

	"github.com/lib/pq"
)

// distributeLock serialises distribution steps of concurrent starts.
const distributeLock = 0x5368_6970_4369_7475 // "ShipCitu"

// The distribution step runs after the migrations, every time: on a Citus
// coordinator with active workers it distributes each table by the kind its
// comment names (docs/scaling.md, "Distributed PostgreSQL (Citus)"):
//
//   - shipgraph:tenant tables by account_id, all colocated;
//   - shipgraph:reference and shipgraph:global tables as reference tables;
//   - unmarked tables (goose's, River's) stay local to the coordinator.
//
// It is derived from the schema, so a table a later migration adds is
// distributed on the next start. On plain PostgreSQL, or with the extension
// but no worker, it does nothing. Each step is idempotent and what it takes
// apart (foreign keys, triggers, comments) is saved first in the
// shipgraph_citus schema, so a step interrupted half-way is finished by the
// next run. It is safe on a database that holds data: Citus copies the rows
// into the shards.
//
// What Citus cannot take as it is, and how the step handles it:
//   - tables with triggers: citus.enable_unsafe_triggers, for this database
//     (later migrations create triggers on distributed tables too);
//   - foreign keys between the tables converted: dropped before and re-added
//     after (converting a table referenced by a local table would make
//     that table Citus-local, and colocate_with then fails);
//   - table comments, lost in conversions: saved and restored, and the
//     keys' comments (relation names for catalogue-driven tools) with the
//     keys;
//   - ON DELETE SET NULL (col) keys that include account_id: re-added as
//     NO ACTION (the store never deletes their parents; a manual delete of
//     a still-referenced user, party … is refused instead of nulling);
//   - user triggers firing during the copy into the shards (counting rows
//     twice): dropped before and re-created after each conversion;
//   - triggers writing other tables from a shard: the row triggers touch
//     only their row's account (a local task on the colocated shard, which
//     Citus runs in a trigger without a nested distributed query); the
//     triggers that touch every account name their tables through
//     shipgraph_shard_group() and shipgraph_local_shard_groups()
//     (migration 00036), which this step replaces by versions that return
//     the colocated shards on the node they run on (citusShardFunctions).
//
// Only this step knows the engine; the store's statements are the same on
// both.

// serverIsCitus reports whether the server of q is Citus: the citus
// extension is installed in the database. It is the one look-up of what
// the server is: OpenWith asks it once (DB.plain), and Distribute, given a
// pool that is not a store's.
func serverIsCitus(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (bool, error) {
	queriesPrimary.Inc()
	var citus bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&citus)
	return citus && err == nil, err
}

// citusWorkers reports whether the Citus coordinator q has at least one
// active primary worker to distribute onto.
func citusWorkers(ctx context.Context, q *sql.Conn) (bool, error) {
	var workers int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' AND isactive`).Scan(&workers)
	return workers > 0, err
}

type citusTable struct {
	name, kind string // kind: tenant, reference, global
	state      string // "": local, "h": distributed, "t": reference, "s": Citus-local
}

var citusKind = regexp.MustCompile(`\bshipgraph:(tenant|reference|global)\b`)

func (t citusTable) done() bool {
	if t.kind == "tenant" {
		return t.state == "h"
	}
	return t.state == "t"
}

// Distribute runs the distribution step on sdb (see above) when its
// server is Citus (serverIsCitus); Migrate calls it.
func Distribute(ctx context.Context, sdb *sql.DB) error {
	citus, err := serverIsCitus(ctx, sdb)
	if err != nil || !citus {
		return err
	}
	return distributeOnCitus(ctx, sdb)
}

// distributeOnCitus runs the distribution step on sdb, whose server is
// Citus, when the coordinator has a worker.
func distributeOnCitus(ctx context.Context, sdb *sql.DB) error {
	conn, err := sdb.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	active, err := citusWorkers(ctx, conn)
	if err != nil || !active {
		return err
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, distributeLock); err != nil {
		return err
	}
	defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, distributeLock) //nolint:errcheck
	if err := distribute(ctx, conn); err != nil {
		return fmt.Errorf("citus distribution: %w", err)
	}
	return nil
}

func distribute(ctx context.Context, c *sql.Conn) error {
	exec := func(query string, args ...any) error {
		queriesPrimary.Inc()
		if _, err := c.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("%s: %w", firstLine(query), err)
		}
		return nil
	}
	// The database's settings reach every later session (Citus propagates
	// ALTER DATABASE … SET to the workers, where shard triggers run).
	for _, s := range []string{
		`SET citus.enable_unsafe_triggers = on`,
		// Nested distributed execution was once turned on here: no
		// trigger needs it (and with it a worker crashed at COMMIT
		// PREPARED), so a database that has it loses it.
		`DO $$ BEGIN
		   EXECUTE format('ALTER DATABASE %I SET citus.enable_unsafe_triggers = on', current_database());
		   EXECUTE format('ALTER DATABASE %I RESET citus.allow_nested_distributed_execution', current_database());
		 END $$`,
		`CREATE SCHEMA IF NOT EXISTS shipgraph_citus`,
		`CREATE TABLE IF NOT EXISTS shipgraph_citus.saved_fkeys (tbl text, name text, def text, PRIMARY KEY (tbl, name))`,
		// A key's comment (the relation names of migration 00012, smart
		// tags for tools that build an API from the catalogue) goes with
		// the key when it is dropped.
		`ALTER TABLE shipgraph_citus.saved_fkeys ADD COLUMN IF NOT EXISTS comment text`,
		`CREATE TABLE IF NOT EXISTS shipgraph_citus.saved_triggers (tbl text, name text, def text, enabled "char", PRIMARY KEY (tbl, name))`,
		`CREATE TABLE IF NOT EXISTS shipgraph_citus.saved_comments (tbl text PRIMARY KEY, comment text)`,
	} {
		if err := exec(s); err != nil {
			return err
		}
	}

	tables, err := citusTables(ctx, c)
	if err != nil {
		return err
	}
	var todo []citusTable
	for _, t := range tables {
		if !t.done() {
			todo = append(todo, t)
		}
	}
	if len(todo) > 0 {
		names := make([]string, len(tables))
		for i, t := range tables {
			names[i] = t.name
		}
		// Save what a conversion loses or cannot take, then take it apart.
		if err := exec(`
INSERT INTO shipgraph_citus.saved_comments (tbl, comment)
SELECT c.relname, obj_description(c.oid, 'pg_class')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relname = ANY ($1)
ON CONFLICT (tbl) DO NOTHING`, pq.Array(names)); err != nil {
			return err
		}
		if err := exec(`
INSERT INTO shipgraph_citus.saved_fkeys (tbl, name, def, comment)
SELECT k.conrelid::regclass::text, k.conname, pg_get_constraintdef(k.oid), obj_description(k.oid, 'pg_constraint')
FROM pg_constraint k
WHERE k.contype = 'f' AND (k.conrelid::regclass::text = ANY ($1) OR k.confrelid::regclass::text = ANY ($1))
ON CONFLICT (tbl, name) DO NOTHING`, pq.Array(names)); err != nil {
			return err
		}
		if err := exec(`
INSERT INTO shipgraph_citus.saved_triggers (tbl, name, def, enabled)
SELECT t.tgrelid::regclass::text, t.tgname, pg_get_triggerdef(t.oid), t.tgenabled
FROM pg_trigger t
WHERE NOT t.tgisinternal AND t.tgrelid::regclass::text = ANY ($1)
ON CONFLICT (tbl, name) DO NOTHING`, pq.Array(names)); err != nil {
			return err
		}
		saved, err := savedRows(ctx, c, `SELECT tbl, name FROM shipgraph_citus.saved_fkeys ORDER BY 1, 2`)
		if err != nil {
			return err
		}
		for _, r := range saved {
			if err := exec(`ALTER TABLE ` + pq.QuoteIdentifier(r[0]) + ` DROP CONSTRAINT IF EXISTS ` + pq.QuoteIdentifier(r[1])); err != nil {
				return err
			}
		}
		trig, err := savedRows(ctx, c, `SELECT tbl, name FROM shipgraph_citus.saved_triggers ORDER BY 1, 2`)
		if err != nil {
			return err
		}
		for _, r := range trig {
			if err := exec(`DROP TRIGGER IF EXISTS ` + pq.QuoteIdentifier(r[1]) + ` ON ` + pq.QuoteIdentifier(r[0])); err != nil {
				return err
			}
		}

		// Reference tables first, then the tenant tables, colocated with
		// the first that is distributed.
		anchor := ""
		for _, t := range tables {
			if t.kind == "tenant" && t.state == "h" && anchor == "" {
				anchor = t.name
			}
		}
		for _, pass := range []bool{false, true} {
			for _, t := range todo {
				if (t.kind == "tenant") != pass {
					continue
				}
				if t.state == "s" || (t.state != "" && t.kind == "tenant") {
					// Citus-local (or distributed another way): back to a
					// plain table first. A table a migration created on a
					// running cluster with a key to a reference table was
					// made Citus-local by that key, and Citus undid that
					// itself when the key was dropped above: nothing to undo.
					if err := exec(`SELECT undistribute_table(logicalrelid) FROM pg_dist_partition WHERE logicalrelid = $1::regclass`, t.name); err != nil {
						return err
					}
				}
				if t.kind != "tenant" {
					if err := exec(`SELECT create_reference_table($1)`, t.name); err != nil {
						return err
					}
					continue
				}
				with := anchor
				if with == "" {
					with = "default"
				}
				if err := exec(`SELECT create_distributed_table($1, 'account_id', colocate_with => $2)`, t.name, with); err != nil {
					return err
				}
				if anchor == "" {
					anchor = t.name
				}
			}
		}
	}

	// Put back what was taken apart (on a resumed run, what is left).
	fkeys, err := savedRows(ctx, c, `SELECT tbl, name, def, coalesce(comment, '') FROM shipgraph_citus.saved_fkeys ORDER BY 1, 2`)
	if err != nil {
		return err
	}
	for _, r := range fkeys {
		var exists bool
		if err := c.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass($1) AND conname = $2)`, r[0], r[1]).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if err := exec(`ALTER TABLE ` + pq.QuoteIdentifier(r[0]) + ` ADD CONSTRAINT ` + pq.QuoteIdentifier(r[1]) + ` ` + citusForeignKey(r[2])); err != nil {
				return err
			}
			if r[3] != "" {
				if err := exec(`COMMENT ON CONSTRAINT ` + pq.QuoteIdentifier(r[1]) + ` ON ` + pq.QuoteIdentifier(r[0]) + ` IS ` + pq.QuoteLiteral(r[3])); err != nil {
					return err
				}
			}
		}
		if err := exec(`DELETE FROM shipgraph_citus.saved_fkeys WHERE tbl = $1 AND name = $2`, r[0], r[1]); err != nil {
			return err
		}
	}
	trigs, err := savedRows(ctx, c, `SELECT tbl, name, def, enabled FROM shipgraph_citus.saved_triggers ORDER BY 1, 2`)
	if err != nil {
		return err
	}
	for _, r := range trigs {
		var exists bool
		if err := c.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass($1) AND tgname = $2)`, r[0], r[1]).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if err := exec(r[2]); err != nil {
				return err
			}
			if r[3] == "D" {
				if err := exec(`ALTER TABLE ` + pq.QuoteIdentifier(r[0]) + ` DISABLE TRIGGER ` + pq.QuoteIdentifier(r[1])); err != nil {
					return err
				}
			}
		}
		if err := exec(`DELETE FROM shipgraph_citus.saved_triggers WHERE tbl = $1 AND name = $2`, r[0], r[1]); err != nil {
			return err
		}
	}
	for _, f := range citusShardFunctions {
		if err := exec(f); err != nil {
			return err
		}
	}
	comments, err := savedRows(ctx, c, `SELECT tbl, coalesce(comment, '') FROM shipgraph_citus.saved_comments ORDER BY 1`)
	if err != nil {
		return err
	}
	for _, r := range comments {
		if err := exec(`COMMENT ON TABLE ` + pq.QuoteIdentifier(r[0]) + ` IS ` + pq.QuoteLiteral(r[1])); err != nil {
			return err
		}
		if err := exec(`DELETE FROM shipgraph_citus.saved_comments WHERE tbl = $1`, r[0]); err != nil {
			return err
		}
	}
	return nil
}

// setNullColumns matches PostgreSQL 15's ON DELETE SET NULL (columns), which
// Citus refuses on keys that include the distribution column.
var setNullColumns = regexp.MustCompile(`\s+ON DELETE SET NULL \([^)]*\)`)

// citusForeignKey returns a key definition Citus accepts: ON DELETE SET
// NULL (col) becomes NO ACTION.
func citusForeignKey(def string) string {
	return setNullColumns.ReplaceAllString(def, "")
}

// citusTables returns every marked table of the public schema with its
// kind and Citus state, in name order.
func citusTables(ctx context.Context, c *sql.Conn) ([]citusTable, error) {
	queriesPrimary.Inc()
	rows, err := c.QueryContext(ctx, `
SELECT c.relname, coalesce(obj_description(c.oid, 'pg_class'), ''),
       coalesce((SELECT CASE WHEN p.partmethod = 'h' THEN 'h' WHEN p.repmodel = 't' THEN 't' ELSE 's' END
                 FROM pg_dist_partition p WHERE p.logicalrelid = c.oid), ''),
       coalesce((SELECT s.comment FROM shipgraph_citus.saved_comments s WHERE s.tbl = c.relname), '')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
ORDER BY c.relname`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []citusTable
	for rows.Next() {
		var t citusTable
		var comment, saved string
		if err := rows.Scan(&t.name, &comment, &t.state, &saved); err != nil {
			return nil, err
		}
		// A comment lost by an interrupted conversion is in saved_comments.
		m := citusKind.FindStringSubmatch(comment)
		if m == nil {
			m = citusKind.FindStringSubmatch(saved)
		}
		if m == nil {
			continue
		}
		t.kind = m[1]
		out = append(out, t)
	}
	return out, rows.Err()
}

func savedRows(ctx context.Context, c *sql.Conn, query string) ([][]string, error) {
	queriesPrimary.Inc()
	rows, err := c.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		r := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range r {
			ptrs[i] = &r[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// citusShardFunctions are the Citus definitions of migration 00036's
// shipgraph_shard_group and shipgraph_local_shard_groups (plain PostgreSQL
// keeps the migration's, which return the tables themselves), made
// distributed functions so that every node has them. On a node they read
// only its Citus metadata (pg_dist_shard, pg_dist_placement): nothing
// they return starts a distributed query.
//
// shipgraph_shard_group(tg_table, tables): tg_table is a shard (name_<shard
// id>); each distributed table of tables becomes its shard of the same hash
// range (colocated: on the same node), a reference table its one shard
// (a copy on every node), a local table itself. When tg_table is not a
// shard, the tables themselves: Citus creates no TRUNCATE trigger on
// shards, so a TRUNCATE trigger fires once, on the table standing for the
// shards on the node the TRUNCATE ran on, and its statements run over
// every shard from there (distributed, not nested in a shard's).
//
// shipgraph_local_shard_groups(tables): the group of every shard of the
// first distributed table of tables placed on this node.
var citusShardFunctions = []string{
	`CREATE OR REPLACE FUNCTION shipgraph_shard_group(tg_table text, tables text[]) RETURNS text[] LANGUAGE sql STABLE AS $$
    SELECT array_agg(CASE
            WHEN me.shardid IS NULL THEN u.t
            WHEN p.partmethod = 'h' THEN (SELECT shard_name(p.logicalrelid, s.shardid) FROM pg_dist_shard s
                                          WHERE s.logicalrelid = p.logicalrelid AND s.shardminvalue = me.shardminvalue)
            WHEN p.partmethod = 'n' THEN (SELECT shard_name(p.logicalrelid, s.shardid) FROM pg_dist_shard s
                                          WHERE s.logicalrelid = p.logicalrelid)
            ELSE u.t END ORDER BY u.i)
    FROM unnest(tables) WITH ORDINALITY u(t, i)
    LEFT JOIN (SELECT s.shardid, s.shardminvalue FROM pg_dist_shard s
               WHERE s.shardid = substring(tg_table FROM '_([0-9]+)$')::bigint) me ON true
    LEFT JOIN pg_dist_partition p ON p.logicalrelid = u.t::regclass
$$`,
	`SELECT create_distributed_function('shipgraph_shard_group(text, text[])')`,
	`CREATE OR REPLACE FUNCTION shipgraph_local_shard_groups(tables text[]) RETURNS SETOF text[] LANGUAGE sql STABLE AS $$
    SELECT shipgraph_shard_group(shard_name(s.logicalrelid, s.shardid), tables)
    FROM pg_dist_shard s JOIN pg_dist_placement pl ON pl.shardid = s.shardid
    WHERE s.logicalrelid = (SELECT p.logicalrelid FROM unnest(tables) WITH ORDINALITY u(t, i)
                            JOIN pg_dist_partition p ON p.logicalrelid = u.t::regclass
                            WHERE p.partmethod = 'h' ORDER BY u.i LIMIT 1)
      AND pl.groupid = (SELECT groupid FROM pg_dist_local_group)
    ORDER BY s.shardid
$$`,
	`SELECT create_distributed_function('shipgraph_local_shard_groups(text[])')`,
}
