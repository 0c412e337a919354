// Package seed builds Shipgraph's deterministic demo data set: reference
// data, two accounts with a user and an API key per role, custom field
// definitions and any number of shipments with their containers, documents
// and custom field values, written with COPY in one transaction. It is
// tooling beside the store (package db), not part of it.
package seed

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/schollz/progressbar/v3"

	"shipgraph/db"
)

// Options says what data set Seed builds.
type Options struct {
	Shipments int       // shipments per data set (split across the demo accounts), default 200 if 0
	Seed      int64     // RNG seed: same seed => same ids, keys, numbers
	Force     bool      // allow seeding a non-empty database: wipe all data first (TRUNCATE … CASCADE), in the same transaction
	Progress  io.Writer // where to draw a progress bar; nil = none
	Now       time.Time // "today" for ETAs etc.; zero = time.Now() truncated to the day (UTC)
}

// Token is an API key created by Run. Account is the account slug.
type Token struct{ Account, Role, Key string }

// Stats reports what Run wrote.
type Stats struct {
	Rows     int64
	Duration time.Duration
}

// ErrNotEmpty is returned by Run when the database already has accounts
// and Options.Force is not set.
var ErrNotEmpty = errors.New("database is not empty: use --force to replace its data")

// seedChunkSize is how many shipments are generated and copied at a time:
// enough rows per COPY to amortise the statement, few enough to keep
// memory flat (a chunk is ~20 MB of rows) however large the data set.
const seedChunkSize = 5000

// Run fills the database of store with a realistic, deterministic demo data set:
// the reference data, the accounts acme and globex with a user and an API
// key per role, custom field definitions, and o.Shipments shipments with
// their containers, documents and custom field values. It returns the API
// keys (by account, then admin, member, viewer), which exist nowhere else:
// the database keeps only their hashes.
//
// Everything happens in one transaction: a failure or a cancelled ctx
// leaves the database as it was (the closing ANALYZE follows the commit).
func Run(ctx context.Context, store *db.DB, o Options) ([]Token, Stats, error) {
	start := time.Now()
	if o.Shipments < 0 {
		return nil, Stats{}, fmt.Errorf("seed: shipments must not be negative, got %d", o.Shipments)
	}
	if o.Shipments == 0 {
		o.Shipments = 200
	}
	now := o.Now.UTC()
	if o.Now.IsZero() {
		now = time.Now().UTC().Truncate(seedDay)
	}

	ref, err := seedBuildReference(newSeedRand(o.Seed, seedStreamReference))
	if err != nil {
		return nil, Stats{}, err
	}
	accounts := seedBuildAccounts(newSeedRand(o.Seed, seedStreamAccounts), newSeedRand(o.Seed, seedStreamFields))
	accountRows, tokens := seedAccountRows(newSeedRand(o.Seed, seedStreamKeys), accounts, now)
	gen := newSeedGen(newSeedRand(o.Seed, seedStreamShipments), ref, accounts, now)

	// A connection of our own: COPY streams through the driver connection
	// under the transaction (see seedCopyStream).
	conn, err := sqlx.NewDb(store.SQL(), "postgres").Connx(ctx)
	if err != nil {
		return nil, Stats{}, fmt.Errorf("seed: %w", err)
	}
	defer conn.Close()
	// Whether every table is empty (see prepare), read before the
	// transaction: on a Citus coordinator a read of the distributed tables
	// in it would run in parallel, after which the reference tables'
	// COPYs are refused. A row written in between fails the seed on a
	// duplicate key; accounts are checked again under the lock.
	probes := make([]string, len(seedAllTables))
	for i, t := range seedAllTables {
		probes[i] = "NOT EXISTS (SELECT 1 FROM " + t + ")"
	}
	var empty bool
	seedCount(ctx)
	if err := conn.QueryRowContext(ctx, "SELECT "+strings.Join(probes, " AND ")).Scan(&empty); err != nil {
		return nil, Stats{}, fmt.Errorf("seed: %w", err)
	}
	// READ COMMITTED whatever the server's default: COPY FREEZE refuses
	// to run under a snapshot older than the TRUNCATE.
	seedCount(ctx) // BEGIN
	tx, err := conn.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return nil, Stats{}, fmt.Errorf("seed: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	// A bulk load is no news to live subscribers: one notification per
	// row would fill PostgreSQL's notification queue (migration 00004).
	// The counters' row triggers are off too: counters_recount counts
	// everything once at the end (migration 00024).
	seedCount(ctx)
	// SET LOCAL rather than set_config: on a Citus coordinator,
	// citus.propagate_set_commands = local sends SET LOCAL (only) on to
	// the workers, where the shards' triggers read these settings; on
	// plain PostgreSQL the citus.* setting is an inert placeholder.
	for _, set := range []string{
		"SET LOCAL citus.propagate_set_commands = 'local'",
		"SET LOCAL shipgraph.notify = 'off'",
		"SET LOCAL shipgraph.counters = 'off'",
	} {
		if _, err := tx.ExecContext(ctx, set); err != nil {
			return nil, Stats{}, fmt.Errorf("seed: %w", err)
		}
	}
	s := &seeder{ctx: ctx, conn: conn, q: counted{tx}}

	if err := s.prepare(o.Force, o.Shipments >= bulkLoadFrom, empty); err != nil {
		return nil, Stats{}, err
	}
	// Keys and indexes off for a bulk load only: a small data set (the
	// tests') goes in faster through them than the drop and rebuild take,
	// which on a Citus cluster are DDL on every shard of every table (a
	// 3-shipment seed took 22-30 s there against 1-2 s on one server).
	ddl := &seedLoadDDL{}
	if o.Shipments >= bulkLoadFrom {
		if ddl, err = s.dropForLoad(); err != nil {
			return nil, Stats{}, err
		}
	}

	for _, rows := range []map[*seedTable][][]any{seedReferenceRows(ref, now), accountRows} {
		for _, t := range []*seedTable{seedPortsTable, seedMetrosTable, seedTerminalsTable, seedRailTable, seedLinesTable,
			seedAccountsTable, seedUsersTable, seedTokensTable, seedDefsTable, seedOptionsTable} {
			if err := s.copyRows(t, rows[t]); err != nil {
				return nil, Stats{}, err
			}
		}
	}

	var bar *progressbar.ProgressBar
	if o.Progress != nil {
		bar = progressbar.NewOptions64(int64(o.Shipments),
			progressbar.OptionSetWriter(o.Progress),
			progressbar.OptionSetDescription("seeding"),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("shipments"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond))
		// Draw the empty bar now and start the rate clock, which the
		// library otherwise starts at the first chunk (showing an
		// absurd first rate).
		_ = bar.Add(0)
		// End the bar's line whatever happens, so the next output
		// doesn't land on it.
		defer fmt.Fprintln(o.Progress)
	}
	chosen, err := s.copyShipments(gen, o.Shipments, bar)
	if err != nil {
		return nil, Stats{}, err
	}

	if bar != nil {
		bar.Describe("indexing")
	}
	if err := s.restore(ddl); err != nil {
		return nil, Stats{}, err
	}
	if err := s.trackingRequests(); err != nil {
		return nil, Stats{}, err
	}
	if err := s.copyJourneys(now, chosen); err != nil {
		return nil, Stats{}, err
	}
	if _, err := s.q.ExecContext(ctx, "SELECT counters_recount()"); err != nil {
		return nil, Stats{}, fmt.Errorf("seed: counters: %w", err)
	}
	seedCount(ctx) // COMMIT
	if err := tx.Commit(); err != nil {
		return nil, Stats{}, fmt.Errorf("seed: commit: %w", err)
	}
	// Fresh statistics, so the first queries after a big seed plan as
	// well as they will once autovacuum gets to the tables. After the
	// commit: on a Citus coordinator, which holds placements of the
	// reference tables too, a transaction that has used one of them
	// locally may not ANALYZE the distributed tables (and turning local
	// execution off for the whole seed deadlocks its COPYs). The data set
	// is in either way; a failure here is still reported.
	if err := seedAnalyze(ctx, conn); err != nil {
		return nil, Stats{}, err
	}
	if bar != nil {
		bar.Describe("seeded")
		_ = bar.Finish()
	}

	slices.SortStableFunc(tokens, func(a, b Token) int {
		return cmp.Or(cmp.Compare(a.Account, b.Account),
			cmp.Compare(slices.Index(seedRoles[:], a.Role), slices.Index(seedRoles[:], b.Role)))
	})
	return tokens, Stats{Rows: s.rows, Duration: time.Since(start)}, nil
}

// seedAnalyze analyzes every table of the data set, in a transaction of
// its own: one statement, shard by shard on a Citus coordinator
// (multi_shard_modify_mode sequential; Citus refuses ANALYZE of a
// reference table after a parallel one of a distributed table that refers
// to it), where plain PostgreSQL takes the setting as an inert
// placeholder.
func seedAnalyze(ctx context.Context, conn *sqlx.Conn) error {
	seedCount(ctx) // BEGIN
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("seed: analyze: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	q := counted{tx}
	for _, stmt := range []string{
		"SET LOCAL citus.multi_shard_modify_mode = 'sequential'",
		"ANALYZE " + strings.Join(seedAllTables, ", "),
	} {
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("seed: analyze: %w", err)
		}
	}
	seedCount(ctx) // COMMIT
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("seed: analyze: %w", err)
	}
	return nil
}

// seeder runs the statements of one seed in its transaction.
type seeder struct {
	ctx  context.Context
	conn *sqlx.Conn // the transaction's connection, for COPY
	q    counted    // the transaction, for everything else
	rows int64
	// freeze: the tables were truncated in this transaction, so COPY
	// may write the rows frozen.
	freeze bool
}

// seedCount counts a statement that does not go through counted (BEGIN,
// COMMIT, COPY), as inTx does.
func seedCount(ctx context.Context) { db.CountStatement(ctx) }

// counted wraps the transaction and counts every statement, as the
// store's own methods do, so /metrics and a context's counter see the
// seed's round trips too.
type counted struct{ *sqlx.Tx }

func (c counted) QueryxContext(ctx context.Context, q string, args ...any) (*sqlx.Rows, error) {
	db.CountStatement(ctx)
	return c.Tx.QueryxContext(ctx, q, args...)
}

func (c counted) QueryRowxContext(ctx context.Context, q string, args ...any) *sqlx.Row {
	db.CountStatement(ctx)
	return c.Tx.QueryRowxContext(ctx, q, args...)
}

func (c counted) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	db.CountStatement(ctx)
	return c.Tx.ExecContext(ctx, q, args...)
}

// prepare refuses a database that has accounts (unless force), then
// empties every table, reference data included: the data set replaces
// the whole content, and COPY FREEZE needs the tables truncated in this
// transaction anyway. A small data set (not bulk) going into tables that
// are all empty skips the TRUNCATE and the FREEZE: on a Citus cluster the
// TRUNCATE of every shard took most of a test's 3-shipment seed.
func (s *seeder) prepare(force, bulk, empty bool) error {
	// The lock makes the emptiness check hold until commit: a concurrent
	// seed waits here, then sees our accounts and stops.
	if _, err := s.q.ExecContext(s.ctx, "LOCK TABLE accounts IN EXCLUSIVE MODE"); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	var exists bool
	if err := s.q.QueryRowxContext(s.ctx, "SELECT EXISTS (SELECT 1 FROM accounts)").Scan(&exists); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if exists && !force {
		return ErrNotEmpty
	}
	if exists || bulk || !empty {
		// CASCADE also empties tables that later migrations hang off these.
		if _, err := s.q.ExecContext(s.ctx, "TRUNCATE "+strings.Join(seedAllTables, ", ")+" CASCADE"); err != nil {
			return fmt.Errorf("seed: truncate: %w", err)
		}
		s.freeze = true
	}
	for _, set := range []string{
		// Only the final commit waits for the disk.
		"SET LOCAL synchronous_commit = off",
		// Room to sort the rebuilt indexes in memory.
		"SET LOCAL maintenance_work_mem = '256MB'",
	} {
		if _, err := s.q.ExecContext(s.ctx, set); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	return nil
}

// bulkLoadFrom is the data set size (shipments) from which Run drops the
// bulk tables' keys and indexes for the load and rebuilds them after.
const bulkLoadFrom = 1000

// seedLoadDDL is what dropForLoad removed and restore puts back, as
// ALTER TABLE and CREATE INDEX statements in the order to run them.
type seedLoadDDL struct {
	keys, indexes, fks []string
	// comments are the dropped constraints' comments (00012's relationship
	// names), set again once they are rebuilt.
	comments []string
}

// dropForLoad drops the keys, foreign keys and secondary indexes of the
// bulk tables, for restore to rebuild after the load: one sort per index
// and one join per foreign key instead of millions of random-order btree
// insertions (uuid keys) and row-by-row key checks (which also lock each
// parent row). Definitions are read from the catalog, so whatever the
// migrations say is restored exactly; it is all one transaction, so
// nobody ever sees the tables without them. CHECK and NOT NULL stay.
func (s *seeder) dropForLoad() (*seedLoadDDL, error) {
	var names []string
	for _, t := range seedBulkTables {
		names = append(names, t.name)
	}
	tables := pq.Array(names)
	ddl := &seedLoadDDL{}

	// Foreign keys from or to a bulk table first (a primary key can't go
	// while something references it), then primary keys and unique
	// constraints; rebuilt in the opposite order.
	type con struct{ table, name, def, kind, comment string }
	var cons []con
	rows, err := s.q.QueryxContext(s.ctx, `
		SELECT conrelid::regclass::text, quote_ident(conname), pg_get_constraintdef(oid), contype::text,
			coalesce(obj_description(oid, 'pg_constraint'), '')
		FROM pg_constraint
		WHERE (contype = 'f' AND (conrelid = ANY ($1::regclass[]) OR confrelid = ANY ($1::regclass[])))
		   OR (contype IN ('p', 'u') AND conrelid = ANY ($1::regclass[]))
		ORDER BY contype = 'f' DESC, 1, 2`, tables)
	if err != nil {
		return nil, fmt.Errorf("seed: reading constraints: %w", err)
	}
	for rows.Next() {
		var c con
		if err := rows.Scan(&c.table, &c.name, &c.def, &c.kind, &c.comment); err != nil {
			rows.Close()
			return nil, fmt.Errorf("seed: reading constraints: %w", err)
		}
		cons = append(cons, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("seed: reading constraints: %w", err)
	}

	var dropIdx []string
	rows, err = s.q.QueryxContext(s.ctx, `
		SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
		FROM pg_index i
		WHERE i.indrelid = ANY ($1::regclass[])
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u', 'x'))
		ORDER BY 1`, tables)
	if err != nil {
		return nil, fmt.Errorf("seed: reading indexes: %w", err)
	}
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			rows.Close()
			return nil, fmt.Errorf("seed: reading indexes: %w", err)
		}
		dropIdx = append(dropIdx, name)
		ddl.indexes = append(ddl.indexes, def)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("seed: reading indexes: %w", err)
	}

	// One ALTER TABLE per table and kind: fewer statements, and each
	// rebuilding ALTER scans its table once for all its constraints.
	for _, kind := range []string{"f", "p"} {
		var order []string
		drops, adds := map[string][]string{}, map[string][]string{}
		for _, c := range cons {
			if (c.kind == "f") != (kind == "f") {
				continue
			}
			if len(drops[c.table]) == 0 {
				order = append(order, c.table)
			}
			drops[c.table] = append(drops[c.table], "DROP CONSTRAINT "+c.name)
			if c.comment != "" {
				ddl.comments = append(ddl.comments, "COMMENT ON CONSTRAINT "+c.name+" ON "+c.table+" IS "+pq.QuoteLiteral(c.comment))
			}
			adds[c.table] = append(adds[c.table], "ADD CONSTRAINT "+c.name+" "+c.def)
		}
		for _, t := range order {
			if _, err := s.q.ExecContext(s.ctx, alterEach(t, drops[t])); err != nil {
				return nil, fmt.Errorf("seed: dropping constraints of %s: %w", t, err)
			}
			add := alterEach(t, adds[t])
			if kind == "f" {
				ddl.fks = append(ddl.fks, add)
			} else {
				ddl.keys = append(ddl.keys, add)
			}
		}
	}
	if len(dropIdx) > 0 {
		// One statement still, but one DROP INDEX per index inside it:
		// Citus refuses to drop several distributed objects in one command.
		quoted := make([]string, len(dropIdx))
		for i, name := range dropIdx {
			quoted[i] = pq.QuoteLiteral(name)
		}
		drop := "DO $seed$ DECLARE i text; BEGIN FOREACH i IN ARRAY ARRAY[" + strings.Join(quoted, ", ") +
			"]::text[] LOOP EXECUTE 'DROP INDEX ' || i; END LOOP; END $seed$"
		if _, err := s.q.ExecContext(s.ctx, drop); err != nil {
			return nil, fmt.Errorf("seed: dropping indexes: %w", err)
		}
	}
	return ddl, nil
}

// alterEach is one statement altering table t by each subcommand in turn:
// an ALTER TABLE, or a DO block of one ALTER TABLE per subcommand when
// there are several (Citus refuses ADD CONSTRAINT with other subcommands).
func alterEach(t string, subcommands []string) string {
	if len(subcommands) == 1 {
		return "ALTER TABLE " + t + " " + subcommands[0]
	}
	var b strings.Builder
	b.WriteString("DO $seed$ BEGIN ")
	for _, c := range subcommands {
		b.WriteString("EXECUTE " + pq.QuoteLiteral("ALTER TABLE "+t+" "+c) + "; ")
	}
	b.WriteString("END $seed$")
	return b.String()
}

// restore rebuilds what dropForLoad dropped: keys, indexes, then foreign
// keys, which check every row, so a seed with a duplicate id or a dangling
// reference fails here and leaves nothing behind; then the constraints'
// comments.
func (s *seeder) restore(ddl *seedLoadDDL) error {
	for _, list := range [][]string{ddl.keys, ddl.indexes, ddl.fks, ddl.comments} {
		for _, stmt := range list {
			if _, err := s.q.ExecContext(s.ctx, stmt); err != nil {
				return fmt.Errorf("seed: %s: %w", stmt, err)
			}
		}
	}
	return nil
}

// copyRows writes rows into t with one COPY statement.
func (s *seeder) copyRows(t *seedTable, rows [][]any) error {
	var buf seedBuf
	for _, r := range rows {
		buf.row(r)
	}
	return s.copyBuf(t, &buf)
}

// copyBuf writes encoded rows into t with one COPY statement.
func (s *seeder) copyBuf(t *seedTable, buf *seedBuf) error {
	if buf.rows == 0 {
		return nil
	}
	seedCount(s.ctx)
	if err := seedCopyStream(s.ctx, s.conn, t, buf, s.freeze); err != nil {
		if s.ctx.Err() != nil {
			// pq reports the server's "canceling statement due to
			// user request"; the caller wants to know it was ctx.
			return fmt.Errorf("seed: copy %s: %w", t.name, s.ctx.Err())
		}
		return err
	}
	s.rows += buf.rows
	return nil
}

// copyShipments generates the shipments chunk by chunk in a goroutine and
// copies each chunk, table by table (one connection runs one COPY at a
// time), while the next chunk is being generated and encoded: the Go side
// and PostgreSQL's parsing then each have a core. It returns the ids of
// the shipments that get journeys (seedJourneyChoice).
func (s *seeder) copyShipments(gen *seedGen, total int, bar *progressbar.ProgressBar) ([]string, error) {
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	chunks := make(chan *seedChunk, 1)
	go func() {
		defer close(chunks)
		for done := 0; done < total && ctx.Err() == nil; {
			n := min(seedChunkSize, total-done)
			select {
			case chunks <- gen.chunk(n):
			case <-ctx.Done():
				return
			}
			done += n
		}
	}()
	var chosen []string
	for c := range chunks {
		for t := range c.rows {
			if err := s.copyBuf(seedBulkTables[t], &c.rows[t]); err != nil {
				return nil, err
			}
		}
		chosen = seedJourneyChoice(chosen, c.ids)
		if bar != nil {
			_ = bar.Add(c.shipments)
		}
	}
	// The generator stops early only when ctx is done.
	return chosen, s.ctx.Err()
}

// trackingRequests writes one tracking request per seeded shipment (issue
// 27), as migration 00013's backfill does for shipments that existed
// before requests were records: created, or tracking_stopped as its
// shipment, under the id webhook payloads give it
// (model.TrackingRequestID). One statement, after the shipments' keys are
// back.
func (s *seeder) trackingRequests() error {
	res, err := s.q.ExecContext(s.ctx, `
		INSERT INTO tracking_requests (account_id, id, request_type, request_number, scac, ref_numbers, tags, status,
		                               shipment_id, created_at, updated_at)
		SELECT s.account_id,
		       (lpad(to_hex(('x' || substr(h, 1, 16))::bit(64)::bigint # ('x' || '3be471c9520d0a8e')::bit(64)::bigint), 16, '0') ||
		        lpad(to_hex(('x' || substr(h, 17, 16))::bit(64)::bigint # ('x' || '0f26d8936c174fa2')::bit(64)::bigint), 16, '0'))::uuid,
		       'bill_of_lading', upper(replace(replace(s.bill_of_lading_number, ' ', ''), '-', '')), s.shipping_line_scac,
		       coalesce(s.ref_numbers, '{}'), s.tags,
		       CASE WHEN s.line_tracking_stopped_at IS NULL THEN 'created' ELSE 'tracking_stopped' END,
		       s.id, s.created_at, coalesce(s.line_tracking_stopped_at, s.updated_at)
		FROM (SELECT x.account_id, x.id, x.bill_of_lading_number, x.shipping_line_scac, x.ref_numbers, x.tags,
		             x.line_tracking_stopped_at, x.created_at, x.updated_at, replace(x.id::text, '-', '') AS h
		      FROM shipments x JOIN accounts a ON a.id = x.account_id) s
		WHERE length(s.shipping_line_scac) = 4
		ON CONFLICT DO NOTHING`)
	if err != nil {
		return fmt.Errorf("seed: tracking requests: %w", err)
	}
	n, _ := res.RowsAffected()
	s.rows += n
	return nil
}
