package db

import (
	"context"
	"strings"

	"github.com/jmoiron/sqlx"
)

// AnalyzeUnanalyzed analyzes the tables of the store's schema that hold
// rows but have no statistics (a database that autovacuum has not reached
// yet: a new one in its first minute, one just restored), and returns
// their names; nothing on Citus.
//
// Why: the tracking transactions run under generic plans, which a backend
// keeps until its tables' statistics change, and so do PostgreSQL's own
// foreign-key checks. Made over tables without statistics they take
// account-wide indexes (`account_id = $1` estimated at a row) and read
// every row of the account per poll, so one account's first polls cost
// more as the account grows (docs/tracking.md, "Why one account's first
// poll cost twice"). ANALYZE writes the statistics and so invalidates
// those plans: each backend plans again at its next execution.
//
// Which tables: no row in pg_stats (a table analyzed with rows has some,
// in the catalogue, which a crash does not reset as it resets
// pg_stat_user_tables' last_analyze), pages on disk (pg_relation_size,
// not the cumulative statistics, which lag), and not analyzed empty
// since (reltuples 0). So a database whose tables were ever analyzed with
// rows, however large, costs the look-up only, at every start; a table
// is analyzed here at most once while it holds rows. ANALYZE samples
// (300 × default_statistics_target rows a table): a large table never
// analyzed (a restore) costs its sample once.
//
// On Citus the coordinator's distributed tables are shells without rows
// (their shards, on the workers, are analyzed by the workers'
// autovacuum), and ANALYZE of a distributed table would analyze every
// shard: nothing is done there (docs/decisions.md).
func (db *DB) AnalyzeUnanalyzed(ctx context.Context) ([]string, error) {
	if !db.plain {
		return nil, nil
	}
	var tables []string
	if err := sqlx.SelectContext(ctx, db.write(""), &tables, `SELECT format('%I.%I', n.nspname, c.relname)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'r' AND n.nspname = current_schema() AND c.reltuples <> 0
		  AND pg_has_role(c.relowner, 'USAGE') AND pg_relation_size(c.oid) > 0
		  AND NOT EXISTS (SELECT FROM pg_stats s WHERE s.schemaname = n.nspname AND s.tablename = c.relname)
		ORDER BY 1`); err != nil {
		return nil, err
	}
	if len(tables) == 0 {
		return nil, nil
	}
	// One statement; PostgreSQL analyzes each table in a transaction of
	// its own, taking only SHARE UPDATE EXCLUSIVE (writes go on).
	if _, err := db.write("").ExecContext(ctx, "ANALYZE "+strings.Join(tables, ", ")); err != nil {
		return nil, err
	}
	return tables, nil
}
