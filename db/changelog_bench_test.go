package db_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/db/seed"
	"shipgraph/testkit/pg"

	"github.com/pressly/goose/v3"
)

// The cost of the change log, measured, never asserted:
//
//	go test ./db -run '^$' -bench ChangeLog -benchtime 1x
//
// (docs/live.md has the numbers.)

func benchStore(b *testing.B, shipments int) (*db.DB, *sql.DB) {
	store, _, s := benchStoreURL(b, shipments)
	return store, s
}

func benchStoreURL(b *testing.B, shipments int) (*db.DB, string, *sql.DB) {
	b.Helper()
	url := dbtest.NewDB(b)
	store := pg.At(b, url).Store
	if shipments > 0 {
		if _, _, err := seed.Run(context.Background(), store, seed.Options{Shipments: shipments, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	return store, url, store.SQL()
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// A bulk UPDATE of 10,000 containers in one statement, with the log and
// with the log off, interleaved: 5 rounds per b.N.
func BenchmarkChangeLogBulkUpdate(b *testing.B) {
	_, s := benchStore(b, 6000)
	var n int
	if err := s.QueryRow(`SELECT count(*) FROM containers`).Scan(&n); err != nil || n < 10000 {
		b.Fatalf("%d containers (%v), want 10,000", n, err)
	}
	// The trigger as migrated against the log switched off for the
	// transaction, as the bulk loader does. (The trigger before the log,
	// which only notified, is gone: pg_notify left the triggers.)
	variants := []struct {
		name string
		off  bool
	}{{"log", false}, {"off", true}}
	took := map[string][]time.Duration{}
	round := 0
	for b.Loop() {
		for range 5 {
			for _, v := range variants {
				round++
				tx, err := s.Begin()
				if err != nil {
					b.Fatal(err)
				}
				if v.off {
					if _, err := tx.Exec(`SET LOCAL shipgraph.notify = 'off'`); err != nil {
						b.Fatal(err)
					}
				}
				start := time.Now()
				if _, err := tx.Exec(`UPDATE containers SET seal_number = $1 WHERE id IN (SELECT id FROM containers ORDER BY id LIMIT 10000)`, fmt.Sprint("bulk ", round)); err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				took[v.name] = append(took[v.name], time.Since(start))
			}
		}
	}
	for _, v := range variants {
		b.ReportMetric(float64(median(took[v.name]).Milliseconds()), "ms/"+v.name)
	}
	b.ReportMetric(float64(median(took["log"]))/float64(median(took["off"])), "log/off")
}

// Pruning 1,000,000 rows older than the retention, in batches, under a
// concurrent write load (single-container UPDATEs in a loop, each logged):
// rows pruned per second, and the writers' throughput before and during.
func BenchmarkChangeLogPrune(b *testing.B) {
	store, url, _ := benchStoreURL(b, 20)
	ctx := context.Background()
	// Without the store's statement timeout: the load takes a while.
	s := dbtest.Open(b, url)
	var account, container string
	if err := s.QueryRow(`SELECT account_id, id FROM containers ORDER BY id LIMIT 1`).Scan(&account, &container); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for range 10 {
			if _, err := s.Exec(`INSERT INTO change_log (account_id, pos, record_type, record_id, op, parent_id, changed, old, new, logged_at)
			SELECT $1, shipgraph_change_log_pos($1), 'container', gen_random_uuid(), 'UPDATE', gen_random_uuid(), '{current_status,updated_at}',
			  '{"current_status":"on_ship","updated_at":"2026-01-01T00:00:00+00:00"}', '{"current_status":"available","updated_at":"2026-01-02T00:00:00+00:00"}',
			  now() - interval '8 days' FROM generate_series(1, 100000)`, account); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := s.Exec(`VACUUM ANALYZE change_log`); err != nil {
			b.Fatal(err)
		}
		var writes atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s.Exec(`UPDATE containers SET seal_number = $2 WHERE id = $1`, container, fmt.Sprint(w, "-", i)); err != nil {
						b.Error(err)
						return
					}
					writes.Add(1)
				}
			})
		}
		time.Sleep(3 * time.Second)
		before := writes.Load()
		start := time.Now()
		var pruned int64
		for {
			p, _, err := store.PruneChangeLog(ctx, time.Now().Add(-168*time.Hour), time.Time{}, db.DefaultChangeLogPruneBatch)
			n := p.Pruned
			if err != nil {
				b.Fatal(err)
			}
			pruned += n
			if n < db.DefaultChangeLogPruneBatch {
				break
			}
		}
		took := time.Since(start)
		during := writes.Load() - before
		time.Sleep(3 * time.Second)
		after := writes.Load() - before - during
		close(stop)
		wg.Wait()
		if pruned != 1000000 {
			b.Fatalf("pruned %d rows", pruned)
		}
		b.ReportMetric(float64(pruned)/took.Seconds(), "rows-pruned/s")
		b.ReportMetric(took.Seconds(), "s-to-prune-1M")
		b.ReportMetric(float64(before)/3, "writes/s-before")
		b.ReportMetric(float64(during)/took.Seconds(), "writes/s-during")
		b.ReportMetric(float64(after)/3, "writes/s-after")
	}
}

// What a logged row costs PostgreSQL, measured apart: one backend runs
// transactions of a first poll's logging (5 rows as the generic trigger
// writes them, 32 transport events with their JSON, one account each,
// numbered at commit), and its CPU is read from /proc. The schema before
// migration 00066 (taken down to 00064), before without the op CHECK,
// after, and after with the CHECK put back, alternated in rounds in one
// run (docs/tracking.md has the numbers):
//
//	go test ./db -run '^$' -bench ChangeLogLoggedRows -benchtime 1x
func BenchmarkChangeLogLoggedRows(b *testing.B) {
	const perRound = 300
	const procedure = `CREATE PROCEDURE bench_log(k int) LANGUAGE plpgsql AS $$
DECLARE
    a uuid;
    c uuid;
BEGIN
    FOR i IN 1..k LOOP
        a := gen_random_uuid();
        c := gen_random_uuid();
        FOR j IN 1..5 LOOP
            INSERT INTO change_log (account_id, record_type, record_id, op, parent_id, changed, old, new)
            VALUES (a, 'container', gen_random_uuid(), 'INSERT', c, NULL, NULL, NULL);
        END LOOP;
        FOR j IN 1..32 LOOP
            INSERT INTO change_log (account_id, record_type, record_id, op, parent_id, changed, old, new)
            VALUES (a, 'transport_event', gen_random_uuid(), 'INSERT', c, NULL, NULL,
                    jsonb_build_object('event', 'container.transport.vessel_departed', 'event_at', now(), 'timezone', 'Europe/Rotterdam',
                                       'location_locode', 'NLRTM', 'voyage_number', '123W', 'data_source', 'shipping_line',
                                       'created_at', now(), 'shipment_id', c));
        END LOOP;
        COMMIT;
    END LOOP;
END $$`
	const (
		addCheck  = `ALTER TABLE change_log ADD CONSTRAINT change_log_op_check CHECK (op IN ('INSERT', 'UPDATE', 'DELETE'))`
		dropCheck = `ALTER TABLE change_log DROP CONSTRAINT change_log_op_check`
		warm      = `CALL bench_log(50)` // plans, caches, the first pages
	)
	vs := []*variant{
		openVariant(b, "before", 64, []string{procedure}, warm),
		openVariant(b, "before-check", 64, []string{dropCheck, procedure}, warm),
		openVariant(b, "after", 0, []string{procedure}, warm),
		openVariant(b, "after+check", 0, []string{addCheck, procedure}, warm),
	}
	alternateRounds(b, vs, "bench_log", perRound, "a transaction of 37 logged rows")
}

// variant is one schema version's backend in a benchmark that alternates
// them (alternateRounds).
type variant struct {
	name string
	conn *sql.Conn
	pid  int
	cpu  []float64 // ms a transaction, by round
}

// alternateRounds calls procedure(perRound) on each variant's backend in
// six rounds, the order reversed every other round, and reports each
// variant's mean backend CPU a transaction (what is logged as what).
func alternateRounds(b *testing.B, vs []*variant, procedure string, perRound int, what string) {
	ctx := context.Background()
	for b.Loop() {
		for round := range 6 {
			order := slices.Clone(vs)
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, v := range order {
				t0 := backendCPU(b, v.pid)
				if _, err := v.conn.ExecContext(ctx, fmt.Sprintf(`CALL %s(%d)`, procedure, perRound)); err != nil {
					b.Fatal(err)
				}
				v.cpu = append(v.cpu, (backendCPU(b, v.pid)-t0)/float64(perRound))
			}
		}
	}
	for _, v := range vs {
		b.Logf("%s: CPU ms %s, by round: %.3f", v.name, what, v.cpu)
		sum := 0.0
		for _, c := range v.cpu {
			sum += c
		}
		b.ReportMetric(sum/float64(len(v.cpu)), "ms/tx-"+v.name)
	}
}

// openVariant is a schema of its own for a benchmark's variant: a new
// database taken down to migration to (0: as migrated), the statements of
// setup run on it, and a connection (its backend's CPU is what the
// benchmark reads) that has run each of warm once.
func openVariant(b *testing.B, name string, to int64, setup []string, warm ...string) *variant {
	ctx := context.Background()
	url := dbtest.NewDB(b)
	s := pg.At(b, url).Store.SQL()
	if to > 0 {
		fsys, err := fs.Sub(db.Migrations, "migrations")
		if err != nil {
			b.Fatal(err)
		}
		p, err := goose.NewProvider(goose.DialectPostgres, s, fsys, goose.WithDisableGlobalRegistry(true))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.DownTo(ctx, to); err != nil {
			b.Fatal(err)
		}
	}
	for _, q := range setup {
		if _, err := s.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	conn, err := dbtest.Open(b, url).Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	v := &variant{name: name, conn: conn}
	if err := conn.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&v.pid); err != nil {
		b.Fatal(err)
	}
	for _, q := range warm {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	return v
}

// backendCPU is the user and system CPU a backend of the local server has
// used, in ms (/proc: clock ticks of 10 ms).
func backendCPU(b *testing.B, pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("the backend's CPU is not readable here (%v)", err)
	}
	// Fields after the command's closing parenthesis: state is 3rd, utime
	// the 14th and stime the 15th of the whole line.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) * 10
}

// BenchmarkFirstPollTriggers: PostgreSQL's CPU a transaction of a first
// poll's row-trigger work that migrations 00068 and 00069 change, in one
// backend per schema: 37 transport events inserted one statement each
// (each logged by its row trigger, the account's first row queueing the
// numbering at commit) and 11 folds (a row inserted with its folded
// number in an index expression and its search text folded in the
// statement), a new account each transaction. Schemas: taken down to
// 00067, to 00068, and as migrated; alternated in rounds in one run
// (docs/tracking.md has the numbers):
//
//	go test ./db -run '^$' -bench FirstPollTriggers -benchtime 1x
func BenchmarkFirstPollTriggers(b *testing.B) {
	const perRound = 200
	open := func(name string, to int64) *variant {
		return openVariant(b, name, to, []string{
			`CREATE TABLE bench_fold (account_id uuid, number text, doc text)`,
			`CREATE INDEX ON bench_fold (account_id, shipgraph_fold(number))`,
			`CREATE PROCEDURE bench_poll(k int) LANGUAGE plpgsql AS $$
DECLARE
    a uuid;
    c uuid;
    s uuid;
BEGIN
    FOR i IN 1..k LOOP
        a := gen_random_uuid();
        c := gen_random_uuid();
        s := gen_random_uuid();
        FOR j IN 1..37 LOOP
            INSERT INTO transport_events (account_id, container_id, shipment_id, scac, carrier_event_id, event, event_at,
                location_locode, voyage_number)
            VALUES (a, c, s, 'MSCU', 'e' || j, 'container.transport.vessel_departed', now(), 'NLRTM', '123W');
        END LOOP;
        FOR j IN 1..11 LOOP
            INSERT INTO bench_fold (account_id, number, doc)
            VALUES (a, 'MEDU12345' || j, shipgraph_search_doc(ARRAY['MEDU12345' || j, 'Müller Straße', NULL]));
        END LOOP;
        COMMIT;
    END LOOP;
END $$`,
		}, `CALL bench_poll(30)`)
	}
	vs := []*variant{open("00067", 67), open("00068", 68), open("00069", 0)}
	alternateRounds(b, vs, "bench_poll", perRound, "a transaction")
}

// BenchmarkBatchNumbering: PostgreSQL's CPU a transaction of a batch of
// first polls as its change log sees it (37 transport events an account,
// logged by their row trigger, the accounts' rows interleaved as one
// statement for every account logs them), numbered at commit: by a firing
// per account taking its own head (the schema taken down to 00069) or by
// the first firing for every account in account order (00070, as
// migrated). Four accounts a transaction, and one account with as many
// rows. The same accounts every transaction (their heads exist, as a
// running server's). Alternated in rounds in one run:
//
//	go test ./db -run '^$' -bench BatchNumbering -benchtime 1x
func BenchmarkBatchNumbering(b *testing.B) {
	const perRound = 100
	open := func(name string, to int64) *variant {
		return openVariant(b, name, to, []string{`CREATE PROCEDURE bench_batch(k int, a uuid[]) LANGUAGE plpgsql AS $$
DECLARE
    c uuid := gen_random_uuid();
    s uuid := gen_random_uuid();
BEGIN
    FOR i IN 1..k LOOP
        FOR j IN 1..37 LOOP
            FOR x IN 1..4 LOOP
                INSERT INTO transport_events (account_id, container_id, shipment_id, scac, carrier_event_id, event, event_at,
                    location_locode, voyage_number)
                VALUES (a[1 + (x - 1) % cardinality(a)], c, s, 'MSCU', i || '-' || j || '-' || x,
                        'container.transport.vessel_departed', now(), 'NLRTM', '123W');
            END LOOP;
        END LOOP;
        COMMIT;
    END LOOP;
END $$`,
			// Four accounts, the later ones' rows first; one account.
			`CREATE PROCEDURE bench_batch4(k int) LANGUAGE plpgsql AS $$
BEGIN
    CALL bench_batch(k, ARRAY['00000000-0000-0000-0000-00000000000d', '00000000-0000-0000-0000-00000000000c',
                              '00000000-0000-0000-0000-00000000000b', '00000000-0000-0000-0000-00000000000a']::uuid[]);
END $$`,
			`CREATE PROCEDURE bench_batch1(k int) LANGUAGE plpgsql AS $$
BEGIN
    CALL bench_batch(k, ARRAY['00000000-0000-0000-0000-00000000000e']::uuid[]);
END $$`}, `CALL bench_batch4(20)`, `CALL bench_batch1(20)`)
	}
	vs := []*variant{open("00069", 69), open("00070", 0)}
	for _, c := range []struct{ name, procedure string }{{"four-accounts", "bench_batch4"}, {"one-account", "bench_batch1"}} {
		b.Run(c.name, func(b *testing.B) {
			for _, v := range vs {
				v.cpu = nil
			}
			alternateRounds(b, vs, c.procedure, perRound, "a transaction")
		})
	}
}
