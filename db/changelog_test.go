package db_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/db/seed"
	"shipgraph/testkit"
)

// logFixture is a seeded database (the seeder logs nothing) and a few of
// its containers, all of one account.
type logFixture struct {
	store      *db.DB
	sql        *sql.DB
	account    string
	other      string // another account
	containers []string
}

func newLogFixture(t *testing.T) *logFixture {
	t.Helper()
	store := openDB(t)
	ctx := context.Background()
	if _, _, err := seed.Run(ctx, store, seed.Options{Shipments: 6, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	f := &logFixture{store: store, sql: store.SQL()}
	if err := f.sql.QueryRowContext(ctx, `SELECT id FROM accounts ORDER BY slug LIMIT 1`).Scan(&f.account); err != nil {
		t.Fatal(err)
	}
	if err := f.sql.QueryRowContext(ctx, `SELECT id FROM accounts WHERE id <> $1 ORDER BY slug LIMIT 1`, f.account).Scan(&f.other); err != nil {
		t.Fatal(err)
	}
	rows, err := f.sql.QueryContext(ctx, `SELECT id FROM containers WHERE account_id = $1 ORDER BY id LIMIT 4`, f.account)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		f.containers = append(f.containers, id)
	}
	if len(f.containers) < 3 {
		t.Fatalf("fixture: %d containers", len(f.containers))
	}
	var n int
	if err := f.sql.QueryRowContext(ctx, `SELECT count(*) FROM change_log`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the seeder logged %d changes (%v)", n, err)
	}
	return f
}

// readAll reads the account's log after position c until nothing is
// left.
func (f *logFixture) readAll(t *testing.T, account string, c int64) ([]db.LoggedChange, int64) {
	t.Helper()
	var all []db.LoggedChange
	for {
		got, next, err := f.store.ReadAccountChangeLog(context.Background(), account, c, 2)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, got...)
		if len(got) == 0 {
			return all, next
		}
		c = next
	}
}

func recordIDs(cs []db.LoggedChange) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.RecordID
	}
	return out
}

func begin(t *testing.T, s *sql.DB) *sql.Tx {
	t.Helper()
	tx, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

func exec(t *testing.T, q interface {
	Exec(string, ...any) (sql.Result, error)
}, stmt string, args ...any) {
	t.Helper()
	if _, err := q.Exec(stmt, args...); err != nil {
		t.Fatal(err)
	}
}

// touch changes container $2 of account $1 (by its key, a single-shard
// write on Citus: by id alone it would lock every shard, and a writer of
// another account would wait for it).
const touch = `UPDATE containers SET seal_number = coalesce(seal_number, '') || 'x' WHERE account_id = $1 AND id = $2`

// waitBlocked returns once a backend runs a statement containing q and
// waits for a lock. On Citus the wait is on the worker that holds the
// shard, under the shard's statement; citus_lock_waits shows it with the
// coordinator's statement.
func waitBlocked(t *testing.T, s *sql.DB, q string) {
	t.Helper()
	waits := `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND strpos(query, $1) > 0`
	var citus bool
	if err := s.QueryRow(`SELECT to_regclass('pg_catalog.citus_lock_waits') IS NOT NULL`).Scan(&citus); err != nil {
		t.Fatal(err)
	}
	if citus {
		waits = `SELECT count(*) FROM citus_lock_waits WHERE strpos(blocked_statement, $1) > 0`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := s.QueryRow(waits, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no backend waits for a lock running %q", q)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// head is the account's change log head.
func (f *logFixture) head(t *testing.T) int64 {
	t.Helper()
	h, err := f.store.AccountChangeLogHead(context.Background(), f.account)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The hard part: ids are taken at INSERT, not at commit, and transactions
// commit in any order. Positions are the account's and given at commit
// under its head row (migration 00056): writers of one account write side
// by side, and the positions commit in the order they were given; a reader
// never sees position n+1 before n. Read by id alone (WHERE id > last) this
// test loses A's change; writers of another account never wait.
func TestChangeLogInterleaved(t *testing.T) {
	f := newLogFixture(t)
	ctx := context.Background()
	head := f.head(t)

	// A writes first and stays open; B writes the same account after A and
	// commits first, without waiting for A.
	a, b := begin(t, f.sql), begin(t, f.sql)
	exec(t, a, touch, f.account, f.containers[0])
	exec(t, b, touch, f.account, f.containers[1])
	if got, _ := f.readAll(t, f.account, head); len(got) != 0 {
		t.Fatalf("with A and B open, read %v", recordIDs(got))
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	got, c := f.readAll(t, f.account, head)
	if !slices.Equal(recordIDs(got), []string{f.containers[1]}) || got[0].Pos != head+1 {
		t.Fatalf("with A open read %+v, want B's alone at %d", got, head+1)
	}
	// Another account's writer does not wait for A.
	var otherContainer string
	if err := f.sql.QueryRow(`SELECT id FROM containers WHERE account_id = $1 LIMIT 1`, f.other).Scan(&otherContainer); err != nil {
		t.Fatal(err)
	}
	exec(t, f.sql, touch, f.other, otherContainer)
	if got, _ := f.readAll(t, f.other, 0); len(got) != 1 || got[0].Pos != 1 {
		t.Fatalf("the other account's log: %+v", got)
	}
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
	got, c = f.readAll(t, f.account, c)
	if !slices.Equal(recordIDs(got), []string{f.containers[0]}) || got[0].Pos != head+2 {
		t.Fatalf("after A committed read %+v, want A's at %d", got, head+2)
	}
	if h, err := f.store.AccountChangeLogHead(ctx, f.account); err != nil || h != c {
		t.Fatalf("head %d (%v), want %d", h, err, c)
	}

	// A transaction whose rows are numbered (here early, by SET
	// CONSTRAINTS … IMMEDIATE) holds the head to its end: B's numbering at
	// its commit waits for A, so B's positions come after A's, as they
	// commit. A's later rows are numbered at its commit. On Citus the
	// setting stays on the coordinator (the numbering runs on the worker at
	// PREPARE, where the wait is not under B's COMMIT): plain PostgreSQL
	// only.
	var citus bool
	if err := f.sql.QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&citus); err != nil {
		t.Fatal(err)
	}
	if !citus {
		a, b = begin(t, f.sql), begin(t, f.sql)
		exec(t, b, touch, f.account, f.containers[1])
		exec(t, a, touch, f.account, f.containers[0])
		exec(t, a, `SET CONSTRAINTS ALL IMMEDIATE`)
		exec(t, a, `SET CONSTRAINTS ALL DEFERRED`)
		bDone := make(chan error, 1)
		go func() {
			_, err := b.Exec(`COMMIT -- writer B`)
			bDone <- err
		}()
		waitBlocked(t, f.sql, "-- writer B")
		exec(t, a, touch, f.account, f.containers[2])
		if got, _ := f.readAll(t, f.account, c); len(got) != 0 {
			t.Fatalf("with A open, read %v", recordIDs(got))
		}
		if err := a.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := <-bDone; err != nil {
			t.Fatal(err)
		}
		got, c2 := f.readAll(t, f.account, c)
		if !slices.Equal(recordIDs(got), []string{f.containers[0], f.containers[2], f.containers[1]}) ||
			got[0].Pos != c+1 || got[2].Pos != c+3 {
			t.Fatalf("after A and B read %+v, want A's two then B's from %d", got, c+1)
		}
		c = c2
	}

	// A rollback gives its positions back: no hole.
	tx := begin(t, f.sql)
	exec(t, tx, touch, f.account, f.containers[2])
	exec(t, tx, touch, f.account, f.containers[2])
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	exec(t, f.sql, touch, f.account, f.containers[2])
	page, err := f.store.ReadAccountChangeLogPage(ctx, f.account, c, 10)
	if err != nil || len(page.Changes) != 1 || page.Changes[0].Pos != c+1 || page.Gap {
		t.Fatalf("after a rollback: %+v (%v), want one change at %d", page, err, c+1)
	}
	// No synchronous standby (the test servers have none): no barrier
	// to wait for (standby.go), so the readers send no statement more.
	if page.Barrier != 0 {
		t.Errorf("a page read without a synchronous standby says barrier %d, want 0", page.Barrier)
	}
}

// What a row says: plain SQL writes are logged with the changed columns'
// old and new values; no-op updates, rollbacks and notify=off log nothing.
func TestChangeLogRows(t *testing.T) {
	f := newLogFixture(t)
	ctx := context.Background()
	head := f.head(t)
	c0 := f.containers[0]
	var status string
	if err := f.sql.QueryRow(`SELECT current_status FROM containers WHERE id = $1`, c0).Scan(&status); err != nil {
		t.Fatal(err)
	}
	next := "picked_up"
	if status == next {
		next = "delivered"
	}
	exec(t, f.sql, `UPDATE containers SET current_status = $2, updated_at = $3 WHERE id = $1`, c0, next, time.Now())
	exec(t, f.sql, `UPDATE containers SET current_status = current_status WHERE id = $1`, c0) // no change

	tx := begin(t, f.sql)
	exec(t, tx, touch, f.account, c0)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// The bulk loader's switch (on Citus SET LOCAL reaches the workers,
	// where the shards' triggers run, with propagate_set_commands).
	tx = begin(t, f.sql)
	exec(t, tx, `SET LOCAL citus.propagate_set_commands = 'local'`)
	exec(t, tx, `SET LOCAL shipgraph.notify = 'off'`)
	exec(t, tx, touch, f.account, c0)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	got, _ := f.readAll(t, f.account, head)
	if len(got) != 1 {
		t.Fatalf("logged %d changes, want the one status change: %+v", len(got), got)
	}
	g := got[0]
	var shipment string
	if err := f.sql.QueryRow(`SELECT shipment_id FROM containers WHERE id = $1`, c0).Scan(&shipment); err != nil {
		t.Fatal(err)
	}
	if g.Type != "container" || g.Op != "UPDATE" || g.RecordID != c0 || g.AccountID != f.account || g.Parent != shipment || g.LoggedAt.IsZero() {
		t.Fatalf("row %+v", g)
	}
	if !slices.Equal(g.Changed, []string{"current_status", "updated_at"}) {
		t.Fatalf("changed %v", g.Changed)
	}
	var old, cur map[string]any
	if err := json.Unmarshal(g.Old, &old); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(g.New, &cur); err != nil {
		t.Fatal(err)
	}
	if old["current_status"] != status || cur["current_status"] != next || len(old) != 2 || len(cur) != 2 || old["updated_at"] == cur["updated_at"] {
		t.Fatalf("old %v new %v", old, cur)
	}

	// INSERT and DELETE rows carry no values; another account's log is
	// its own.
	var doc string
	if err := f.sql.QueryRow(`INSERT INTO documents (account_id, name, document_type, source, file_name) VALUES ($1, 'n', 'other', 'api', 'f.pdf') RETURNING id`, f.account).Scan(&doc); err != nil {
		t.Fatal(err)
	}
	exec(t, f.sql, `DELETE FROM documents WHERE id = $1`, doc)
	got, _ = f.readAll(t, f.account, g.Pos)
	if len(got) != 2 || got[0].Op != "INSERT" || got[1].Op != "DELETE" || got[0].RecordID != doc || got[0].Type != "document" ||
		got[0].Old != nil || got[0].New != nil || got[0].Changed != nil {
		t.Fatalf("insert and delete: %+v", got)
	}
	if others, _ := f.readAll(t, f.other, 0); len(others) != 0 {
		t.Fatalf("the other account's log has %+v", others)
	}
	heads, err := f.store.ChangeLogHeads(ctx)
	if err != nil || len(heads) != 1 || heads[f.account] != got[1].Pos || got[1].Pos != got[0].Pos+1 || got[0].Pos != g.Pos+1 {
		t.Fatalf("heads %v (%v), positions %d %d %d", heads, err, g.Pos, got[0].Pos, got[1].Pos)
	}

	// Positions of public ids, within their account.
	pos, ok, err := f.store.AccountChangeLogPos(ctx, f.account, got[1].ID)
	if err != nil || !ok || pos != got[1].Pos {
		t.Fatalf("AccountChangeLogPos(%d) = %v %v %v, want %v", got[1].ID, pos, ok, err, got[1].Pos)
	}
	if _, ok, err := f.store.AccountChangeLogPos(ctx, f.other, got[1].ID); ok || err != nil {
		t.Fatalf("another account's id is known (%v)", err)
	}
	if _, ok, err := f.store.AccountChangeLogPos(ctx, f.account, got[1].ID+1000); ok || err != nil {
		t.Fatalf("an unknown id is known (%v)", err)
	}
}

// logChanges logs n changes of container of account the store's own way
// (n writes of the row, logged by its trigger at the account's next
// positions), then dates them age ago.
func (f *logFixture) logChanges(t *testing.T, account, container string, age time.Duration, n int) {
	t.Helper()
	head, err := f.store.AccountChangeLogHead(context.Background(), account)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		exec(t, f.sql, touch, account, container)
	}
	exec(t, f.sql, `UPDATE change_log SET logged_at = $3 WHERE account_id = $1 AND pos > $2`, account, head, time.Now().Add(-age))
}

// otherContainer is a container of the fixture's other account.
func (f *logFixture) otherContainer(t *testing.T) string {
	t.Helper()
	var id string
	if err := f.sql.QueryRow(`SELECT id FROM containers WHERE account_id = $1 ORDER BY id LIMIT 1`, f.other).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// The schedule and poll times that change on every tracking poll are
// quiet: an update of them alone is not logged, with no setting, on every
// engine (the trigger on a Citus worker's shard decides it too); one that
// changes them with anything else is logged with every changed column.
func TestChangeLogQuietColumns(t *testing.T) {
	f := newLogFixture(t)
	var shipment, request string
	if err := f.sql.QueryRow(`SELECT shipment_id FROM containers WHERE account_id = $1 AND id = $2`, f.account, f.containers[0]).Scan(&shipment); err != nil {
		t.Fatal(err)
	}
	if err := f.sql.QueryRow(`INSERT INTO tracking_requests (account_id, request_type, request_number, scac, next_poll_at)
		VALUES ($1, 'bill_of_lading', 'QUIET1', 'MAEU', now()) RETURNING id`, f.account).Scan(&request); err != nil {
		t.Fatal(err)
	}
	head := f.head(t)
	exec(t, f.sql, `UPDATE tracking_requests SET last_polled_at = now(), next_poll_at = now() + interval '1 hour'
		WHERE account_id = $1 AND id = $2`, f.account, request)
	exec(t, f.sql, `UPDATE shipments SET line_tracking_last_attempted_at = now(), line_tracking_last_succeeded_at = now()
		WHERE account_id = $1 AND id = $2`, f.account, shipment)
	if got, _ := f.readAll(t, f.account, head); len(got) != 0 {
		t.Fatalf("quiet updates logged: %+v", got)
	}

	exec(t, f.sql, `UPDATE tracking_requests SET next_poll_at = now() + interval '2 hours', retry_count = retry_count + 1
		WHERE account_id = $1 AND id = $2`, f.account, request)
	exec(t, f.sql, `UPDATE shipments SET line_tracking_last_attempted_at = now() + interval '1 minute', pod_voyage_number = 'Q1'
		WHERE account_id = $1 AND id = $2`, f.account, shipment)
	got, _ := f.readAll(t, f.account, head)
	if len(got) != 2 || got[0].RecordID != request || got[0].Type != "tracking_request" || got[1].RecordID != shipment || got[1].Type != "shipment" {
		t.Fatalf("logged %+v, want the request's and the shipment's changes", got)
	}
	if !slices.Equal(got[0].Changed, []string{"next_poll_at", "retry_count"}) ||
		!slices.Equal(got[1].Changed, []string{"line_tracking_last_attempted_at", "pod_voyage_number"}) {
		t.Fatalf("changed %v and %v", got[0].Changed, got[1].Changed)
	}
}

// Pruning removes the rows older than the retention, oldest first, a batch
// at a time; one instance prunes at a time. A reader finds what was pruned
// before it read it as a hole in the positions (Gap), never a silent skip.
func TestChangeLogPrune(t *testing.T) {
	f := newLogFixture(t)
	ctx := context.Background()
	// 12 old rows, then 2 recent ones of the account; 3 recent ones of
	// another.
	f.logChanges(t, f.account, f.containers[0], 10*24*time.Hour, 12)
	f.logChanges(t, f.account, f.containers[2], time.Hour, 2)
	f.logChanges(t, f.other, f.otherContainer(t), time.Hour, 3)
	all, _ := f.readAll(t, f.account, 0)
	if len(all) != 14 {
		t.Fatalf("%d rows", len(all))
	}

	// Another instance prunes: this one does nothing.
	tx := begin(t, f.sql)
	exec(t, tx, `SELECT pg_advisory_xact_lock(8315734462695502453)`)
	if p, locked, err := f.store.PruneChangeLog(ctx, time.Now().Add(-168*time.Hour), time.Time{}, 5); err != nil || locked || p.Pruned != 0 {
		t.Fatalf("under another's lock: %d %v %v", p.Pruned, locked, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	for _, want := range []int64{5, 5, 2, 0} {
		p, locked, err := f.store.PruneChangeLog(ctx, time.Now().Add(-168*time.Hour), time.Time{}, 5)
		if err != nil || !locked || p.Pruned != want || p.Unread != 0 || p.HeldBack {
			t.Fatalf("a batch pruned %+v (%v %v), want %d", p, locked, err, want)
		}
	}
	page, err := f.store.ReadAccountChangeLogPage(ctx, f.account, 0, 100)
	if err != nil || len(page.Changes) != 2 || page.Changes[0].ID != all[12].ID || !page.Gap {
		t.Fatalf("left %+v (%v), want the 2 recent rows after a gap", page, err)
	}
	if page, err := f.store.ReadAccountChangeLogPage(ctx, f.account, 12, 100); err != nil || len(page.Changes) != 2 || page.Gap {
		t.Fatalf("from the last pruned position: %+v (%v), want no gap", page, err)
	}
	if others, _ := f.readAll(t, f.other, 0); len(others) != 3 {
		t.Fatalf("the other account kept %d rows, want 3", len(others))
	}
	if _, ok, err := f.store.AccountChangeLogPos(ctx, f.account, all[3].ID); ok || err != nil {
		t.Fatalf("a pruned id is known (%v)", err)
	}

	// The loop prunes what has aged past the retention, and stops with
	// its context.
	if p := f.firstPruning(t, 30*time.Minute, 0, time.Hour); p.Err != nil || p.Pruned != 5 {
		t.Fatalf("the loop: %+v, want the 5 rows an hour old pruned", p)
	}
}

// firstPruning runs the change log's prune loop (retention, ceiling, every
// as PruneChangeLogLoop takes them) until its first round, which it
// returns; the loop stops with it.
func (f *logFixture) firstPruning(t *testing.T, retention, ceiling, every time.Duration) db.ChangeLogPruning {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	rounds := make(chan db.ChangeLogPruning, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.store.PruneChangeLogLoop(ctx, retention, ceiling, every, func(p db.ChangeLogPruning) { rounds <- p })
	}()
	defer func() { cancel(); <-done }()
	return testkit.Recv(t, rounds, 10*time.Second, "the prune loop's first round")
}

// Pruning holds back at the webhook cursor: rows older than the retention
// that the fan-out has not read are kept while a webhook could be owed
// them, up to the ceiling; past it they go, counted by account. Without
// the hold, the first prune takes every old row.
func TestChangeLogPruneHoldsForWebhookCursor(t *testing.T) {
	f := newLogFixture(t)
	ctx := context.Background()
	f.logChanges(t, f.account, f.containers[0], 40*24*time.Hour, 3)   // past the ceiling
	f.logChanges(t, f.other, f.otherContainer(t), 40*24*time.Hour, 2) // past the ceiling
	f.logChanges(t, f.account, f.containers[2], 10*24*time.Hour, 4)   // past the retention
	f.logChanges(t, f.account, f.containers[2], time.Hour, 2)         // recent
	var n int
	if err := f.sql.QueryRow(`SELECT count(*) FROM change_log`).Scan(&n); err != nil || n != 11 {
		t.Fatalf("%d rows (%v)", n, err)
	}
	// A webhook older than every row, and the fan-out has read one row.
	exec(t, f.sql, `INSERT INTO webhooks (account_id, url, events, secret, created_at)
		VALUES ($1, 'https://hooks.example.com/', '{container.updated}', 's', now() - interval '60 days')`, f.other)
	setCursor := func(account string, pos int64) {
		t.Helper()
		exec(t, f.sql, `INSERT INTO webhook_log_cursors (account_id, pos) VALUES ($1, $2)
			ON CONFLICT (account_id) DO UPDATE SET pos = excluded.pos`, account, pos)
	}
	setCursor(f.account, 1)
	retention := time.Now().Add(-168 * time.Hour)
	ceiling := time.Now().Add(-30 * 24 * time.Hour)
	left := func() int {
		t.Helper()
		var n int
		if err := f.sql.QueryRowContext(ctx, `SELECT count(*) FROM change_log`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	prune := func(ceiling time.Time) db.ChangeLogPruning {
		t.Helper()
		p, locked, err := f.store.PruneChangeLog(ctx, retention, ceiling, 100)
		if err != nil || !locked {
			t.Fatalf("prune: %v %v", locked, err)
		}
		return p
	}

	// No ceiling: only the row the cursor passed goes.
	if p := prune(time.Time{}); p.Pruned != 1 || p.Unread != 0 || !p.HeldBack {
		t.Fatalf("with a lagging cursor: %+v, want 1 pruned, held back", p)
	}
	if n := left(); n != 10 {
		t.Fatalf("%d rows left, want the 10 the fan-out has not read", n)
	}
	if p := prune(time.Time{}); p.Pruned != 0 || !p.HeldBack {
		t.Fatalf("again: %+v, want nothing pruned", p)
	}

	// The ceiling: the unread rows older than it go, counted by account;
	// the ones younger stay.
	p := prune(ceiling)
	if p.Pruned != 4 || p.Unread != 4 || !p.HeldBack ||
		p.UnreadAccounts[f.account] != 2 || p.UnreadAccounts[f.other] != 2 || len(p.UnreadAccounts) != 2 {
		t.Fatalf("past the ceiling: %+v, want 4 unread pruned (2 of each account), held back after", p)
	}

	// The fan-out moves on: what it passed goes, no more.
	setCursor(f.account, 6)
	if p := prune(ceiling); p.Pruned != 3 || p.Unread != 0 || !p.HeldBack {
		t.Fatalf("after the cursor moved: %+v, want 3 read rows pruned", p)
	}

	// A row logged before the oldest webhook was created is owed to none:
	// not held back (nor is any row with no webhook at all).
	exec(t, f.sql, `UPDATE webhooks SET created_at = now()`)
	if p := prune(ceiling); p.Pruned != 1 || p.Unread != 0 || p.HeldBack {
		t.Fatalf("rows older than every webhook: %+v, want the old one pruned, not held back", p)
	}
	if n := left(); n != 2 {
		t.Fatalf("%d rows left, want the 2 recent ones", n)
	}

	// The loop passes the ceiling on: a row past it goes and is reported.
	exec(t, f.sql, `UPDATE webhooks SET created_at = now() - interval '60 days'`)
	f.logChanges(t, f.account, f.containers[0], 40*24*time.Hour, 1)
	exec(t, f.sql, `DELETE FROM change_log WHERE logged_at > now() - interval '1 day'`)
	if p := f.firstPruning(t, 168*time.Hour, 720*time.Hour, time.Hour); p.Err != nil || p.Pruned != 1 || p.Unread != 1 || p.UnreadAccounts[f.account] != 1 {
		t.Fatalf("the loop: %+v, want the one unread row past the ceiling", p)
	}
}

// Each change read carries a WAL position at or past its commit: the
// primary's insert position after the commit, before the read.
func TestChangeLogWAL(t *testing.T) {
	f := newLogFixture(t)
	ctx := context.Background()
	head := f.head(t)
	if _, err := f.sql.Exec(touch, f.account, f.containers[0]); err != nil {
		t.Fatal(err)
	}
	var committed int64
	if err := f.sql.QueryRow(`SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::int8`).Scan(&committed); err != nil {
		t.Fatal(err)
	}
	page, err := f.store.ReadAccountChangeLogPage(ctx, f.account, head, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Changes) == 0 {
		t.Fatal("no change read")
	}
	for _, c := range page.Changes {
		if c.WAL < uint64(committed) {
			t.Fatalf("change %d: WAL %d, before the position %d its commit had reached", c.ID, c.WAL, committed)
		}
		if got := db.ChangeOf(&c).WAL; got != c.WAL {
			t.Fatalf("ChangeOf: WAL %d, want %d", got, c.WAL)
		}
	}
}

// The demo activity moves containers along their journey: the account's
// channel wakes its readers once per transaction, and the log has each
// move (the seeder's bulk load, on the other hand, is silent).
func TestDemoActivityAndFeed(t *testing.T) {
	store := openDB(t)
	ctx := context.Background()
	if _, _, err := seed.Run(ctx, store, seed.Options{Shipments: 3, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	feed := store.Listen(time.Second)
	defer feed.Close()
	events := feed.Subscribe(16, db.FeedChange).Events()
	select {
	case e := <-events:
		if e.Kind != db.FeedListening {
			t.Fatalf("first event %v", e.Kind)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the feed did not listen")
	}
	var account string
	if err := store.SQL().QueryRowContext(ctx, `SELECT id FROM accounts ORDER BY slug LIMIT 1`).Scan(&account); err != nil {
		t.Fatal(err)
	}
	if err := feed.Listen(account); err != nil {
		t.Fatal(err)
	}
	if err := feed.ListenAll(); err != nil {
		t.Fatal(err)
	}
	head, err := store.AccountChangeLogHead(ctx, account)
	if err != nil {
		t.Fatal(err)
	}
	moved, err := store.DemoActivity(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) == 0 {
		t.Fatal("nothing moved")
	}
	// One wake-up on the account's channel, one on every account's (which
	// names the account).
	woken := map[string]int{}
	for range 2 {
		select {
		case e := <-events:
			if e.Kind != db.FeedChange || e.Change.ID != "" {
				t.Fatalf("event %+v %+v", e, e.Change)
			}
			woken[e.Change.AccountID]++
		case <-time.After(30 * time.Second):
			t.Fatal("no wake-up heard")
		}
	}
	if woken[account] != 2 {
		t.Fatalf("wake-ups %v", woken)
	}
	select {
	case e := <-events:
		t.Fatalf("a third wake-up %+v", e)
	case <-time.After(200 * time.Millisecond):
	}
	logged, _, err := store.ReadAccountChangeLog(ctx, account, head, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) != len(moved) {
		t.Fatalf("%d moved, %d logged", len(moved), len(logged))
	}
	for i := range logged {
		c := db.ChangeOf(&logged[i])
		if c.Type != "container" || c.Op != "UPDATE" || c.AccountID != account || c.Parent == "" || len(c.Columns) == 0 || c.Log == 0 {
			t.Fatalf("change %+v", c)
		}
		if _, ok := c.Was["current_status"]; !ok {
			t.Errorf("no previous status in %+v", c)
		}
	}
}

// A transaction that logs changes of several accounts numbers each
// account's rows at commit, and a backend keeps no setting per account it
// wrote: the pending accounts are one setting (migration 00061), where a
// setting per account stayed in the backend for its life and PostgreSQL
// sorted all of them for each new one (PostgreSQL 15). On Citus the
// triggers run on the workers: there the coordinator's backend has none
// either way.
func TestChangeLogPendingAccountsOneSetting(t *testing.T) {
	f := newLogFixture(t)
	ctx := context.Background()
	rows, err := f.sql.QueryContext(ctx, `SELECT DISTINCT ON (account_id) account_id, id FROM containers ORDER BY account_id, id`)
	if err != nil {
		t.Fatal(err)
	}
	var accounts, boxes []string
	for rows.Next() {
		var a, c string
		if err := rows.Scan(&a, &c); err != nil {
			t.Fatal(err)
		}
		accounts, boxes = append(accounts, a), append(boxes, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(accounts) < 2 {
		t.Fatalf("fixture: %d accounts with containers", len(accounts))
	}
	conn, err := f.sql.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A setting the backend ever set stays, as '' after its transaction
	// (current_setting's missing_ok gives NULL only for a name never set);
	// placeholders are not listed in pg_settings, so each account's old name
	// is asked.
	perAccount := func() (names []string) {
		for _, a := range accounts {
			var v sql.NullString
			if err := conn.QueryRowContext(ctx, `SELECT current_setting('shipgraph.log_pos_' || replace($1::text, '-', ''), true)`, a).Scan(&v); err != nil {
				t.Fatal(err)
			}
			if v.Valid {
				names = append(names, a)
			}
		}
		return names
	}
	heads := make([]int64, len(accounts))
	for i, a := range accounts {
		if heads[i], err = f.store.AccountChangeLogHead(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if kept := perAccount(); len(kept) > 0 {
		t.Fatalf("settings of accounts %v before the test wrote", kept)
	}
	// Every account in one transaction, twice each (the second write finds
	// its account pending), then each account in one of its own.
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for i, a := range accounts {
			exec(t, tx, touch, a, boxes[i])
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for i, a := range accounts {
		if _, err := conn.ExecContext(ctx, touch, a, boxes[i]); err != nil {
			t.Fatal(err)
		}
	}
	if kept := perAccount(); len(kept) > 0 {
		t.Errorf("the backend keeps a setting for each of accounts %v after writing them", kept)
	}
	for i, a := range accounts {
		var n, unnumbered int
		var lo, hi int64
		if err := f.sql.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE pos IS NULL), coalesce(min(pos), 0), coalesce(max(pos), 0)
			FROM change_log WHERE account_id = $1 AND (pos IS NULL OR pos > $2)`, a, heads[i]).Scan(&n, &unnumbered, &lo, &hi); err != nil {
			t.Fatal(err)
		}
		if n != 3 || unnumbered != 0 || lo != heads[i]+1 || hi != heads[i]+3 {
			t.Errorf("account %s: %d rows after head %d, %d unnumbered, positions %d–%d; want 3 numbered %d–%d",
				a, n, heads[i], unnumbered, lo, hi, heads[i]+1, heads[i]+3)
		}
	}
}

// The deferred numbering trigger is queued once per account and
// transaction (00062: the account's first row marks it pending in the
// trigger's WHEN), not once per logged row; a row logged after the
// account's rows were numbered mid-transaction (SET CONSTRAINTS …
// IMMEDIATE) queues it again, and a savepoint rolled back with an
// account's first row takes its marking too. Every account's rows are
// numbered densely at commit. The calls are counted on plain PostgreSQL
// (on Citus the trigger runs on the worker that holds the shard).
func TestChangeLogHeadOncePerAccount(t *testing.T) {
	f := newLogFixture(t)
	ctx := context.Background()
	var citus bool
	if err := f.sql.QueryRowContext(ctx, `SELECT to_regclass('pg_catalog.citus_lock_waits') IS NOT NULL`).Scan(&citus); err != nil {
		t.Fatal(err)
	}
	var other string
	if err := f.sql.QueryRowContext(ctx, `SELECT id FROM containers WHERE account_id = $1 ORDER BY id LIMIT 1`, f.other).Scan(&other); err != nil {
		t.Fatal(err)
	}
	heads := map[string]int64{}
	for _, a := range []string{f.account, f.other} {
		h, err := f.store.AccountChangeLogHead(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		heads[a] = h
	}
	tx := begin(t, f.sql)
	calls := func() int64 {
		t.Helper()
		var n int64
		if err := tx.QueryRow(`SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions
			WHERE funcname = 'shipgraph_change_log_head'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if !citus {
		exec(t, tx, `SET LOCAL track_functions = 'all'`)
	}
	// A savepoint rolled back with the account's first row: its next row
	// marks it again.
	exec(t, tx, `SAVEPOINT s`)
	exec(t, tx, touch, f.account, f.containers[0])
	exec(t, tx, `ROLLBACK TO SAVEPOINT s`)
	for range 3 {
		exec(t, tx, touch, f.account, f.containers[0])
		exec(t, tx, touch, f.account, f.containers[1])
		exec(t, tx, touch, f.other, other)
	}
	exec(t, tx, `SET CONSTRAINTS change_log_head IMMEDIATE`)
	if n := calls(); !citus && n != 2 {
		t.Errorf("9 rows of 2 accounts numbered by %d calls of the trigger; want 2", n)
	}
	exec(t, tx, `SET CONSTRAINTS change_log_head DEFERRED`)
	exec(t, tx, touch, f.account, f.containers[2])
	exec(t, tx, touch, f.account, f.containers[2])
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for a, want := range map[string]int64{f.account: 8, f.other: 3} {
		var n, unnumbered, lo, hi int64
		if err := f.sql.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE pos IS NULL), coalesce(min(pos), 0), coalesce(max(pos), 0)
			FROM change_log WHERE account_id = $1 AND (pos IS NULL OR pos > $2)`, a, heads[a]).Scan(&n, &unnumbered, &lo, &hi); err != nil {
			t.Fatal(err)
		}
		if n != want || unnumbered != 0 || lo != heads[a]+1 || hi != heads[a]+want {
			t.Errorf("account %s: %d rows after head %d, %d unnumbered, positions %d–%d; want %d numbered %d–%d",
				a, n, heads[a], unnumbered, lo, hi, want, heads[a]+1, heads[a]+want)
		}
	}
}

// TestChangeLogQueuedByItsInsert: a logged row marks its account pending
// in its own INSERT (migration 00068): the numbering trigger's WHEN is one
// column of the row, not a condition the executor reads from its text and
// plans again for every logged row's statement. The account's first row
// since it was last numbered is queued (true), its later rows are not
// (false); a row after SET CONSTRAINTS … IMMEDIATE is queued again; a row
// written without the column (any other writer) is queued too, its column
// NULL (00070: told from a row that marked its account), and every row is
// numbered, densely, at commit.
func TestChangeLogQueuedByItsInsert(t *testing.T) {
	f := newLogFixture(t)
	ctx := context.Background()
	var def string
	if err := f.sql.QueryRowContext(ctx, `SELECT pg_get_triggerdef(oid) FROM pg_trigger
		WHERE tgrelid = 'change_log'::regclass AND tgname = 'change_log_head'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def, "WHEN ((new.queued IS NOT FALSE))") {
		t.Errorf("change_log_head: %s; want WHEN ((new.queued IS NOT FALSE))", def)
	}
	head, err := f.store.AccountChangeLogHead(ctx, f.account)
	if err != nil {
		t.Fatal(err)
	}
	var shipment, container string
	if err := f.sql.QueryRowContext(ctx, `SELECT shipment_id, id FROM containers WHERE account_id = $1 AND id = $2`,
		f.account, f.containers[0]).Scan(&shipment, &container); err != nil {
		t.Fatal(err)
	}
	tx := begin(t, f.sql)
	queued := func() []string {
		t.Helper()
		var q []string
		rows, err := tx.Query(`SELECT record_type || ':' || coalesce(queued::text, 'null') FROM change_log
			WHERE account_id = $1 AND pos IS NULL ORDER BY id`, f.account)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			q = append(q, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return q
	}
	event := func(id string) {
		t.Helper()
		exec(t, tx, `INSERT INTO transport_events (account_id, container_id, shipment_id, scac, carrier_event_id, event, event_at)
			VALUES ($1, $2, $3, 'MSCU', $4, 'container.transport.vessel_departed', now())`, f.account, container, shipment, id)
	}
	exec(t, tx, touch, f.account, f.containers[0])
	event("queued-1")
	exec(t, tx, touch, f.account, f.containers[1])
	event("queued-2")
	if got, want := strings.Join(queued(), " "),
		"container:true transport_event:false container:false transport_event:false"; got != want {
		t.Errorf("before the numbering: %s; want %s", got, want)
	}
	// On Citus the coordinator's SET CONSTRAINTS does not reach the
	// worker's transaction (the rows stay pending until the commit, as in
	// TestChangeLogHeadOncePerAccount): the account stays marked.
	var citus bool
	if err := tx.QueryRow(`SELECT to_regclass('pg_catalog.citus_lock_waits') IS NOT NULL`).Scan(&citus); err != nil {
		t.Fatal(err)
	}
	exec(t, tx, `SET CONSTRAINTS change_log_head IMMEDIATE`)
	exec(t, tx, `SET CONSTRAINTS change_log_head DEFERRED`)
	event("queued-3")
	exec(t, tx, touch, f.account, f.containers[2])
	want := "transport_event:true container:false"
	if citus {
		want = "container:true transport_event:false container:false transport_event:false transport_event:false container:false"
	}
	if got := strings.Join(queued(), " "); got != want {
		t.Errorf("after SET CONSTRAINTS … IMMEDIATE: %s; want %s", got, want)
	}
	// Another writer, without the column: queued (NULL), and numbered.
	exec(t, tx, `INSERT INTO change_log (account_id, record_type, record_id, op) VALUES ($1, 'container', $2, 'UPDATE')`,
		f.account, f.containers[2])
	exec(t, tx, `INSERT INTO change_log (account_id, record_type, record_id, op) VALUES ($1, 'container', $2, 'UPDATE')`,
		f.account, f.containers[2])
	// (On Citus a statement's own insert takes its id from the
	// coordinator's sequence, the triggers' from the worker's: compared
	// without their order.)
	got, all := queued(), strings.Fields(want+" container:null container:null")
	if citus {
		slices.Sort(got)
		slices.Sort(all)
	}
	if g, w := strings.Join(got, " "), strings.Join(all, " "); g != w {
		t.Errorf("with another writer's rows: %s; want %s", g, w)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var n, unnumbered, lo, hi int64
	if err := f.sql.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE pos IS NULL), coalesce(min(pos), 0), coalesce(max(pos), 0)
		FROM change_log WHERE account_id = $1 AND (pos IS NULL OR pos > $2)`, f.account, head).Scan(&n, &unnumbered, &lo, &hi); err != nil {
		t.Fatal(err)
	}
	if n != 8 || unnumbered != 0 || lo != head+1 || hi != head+8 {
		t.Errorf("%d rows after head %d, %d unnumbered, positions %d–%d; want 8 numbered %d–%d", n, head, unnumbered, lo, hi, head+1, head+8)
	}
}
