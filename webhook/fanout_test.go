package webhook_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
	"shipgraph/webhook"
)

// drain steps the fan-out until it has nothing more to do at once.
func drain(t testing.TB, f *webhook.FanOut) {
	t.Helper()
	for range 100 {
		more, err := f.Step(context.Background())
		if err != nil {
			t.Fatalf("step: %v", err)
		}
		if !more {
			return
		}
	}
	t.Fatal("the fan-out never finished")
}

// logChange logs a change of the container the store's own way (a write
// of it, at the account's next position on either engine), then rewrites
// the logged row as another system's bad write, a restore or a bug would
// leave it: old and new are JSON.
func (e *env) logChange(t testing.TB, account, container, old, new string) int64 {
	t.Helper()
	head := e.logAged(t, account, container, 0, 1)
	var id int64
	if err := e.Store.SQL().QueryRow(`UPDATE change_log SET changed = '{available_for_pickup}', old = $3::jsonb, new = $4::jsonb
		WHERE account_id = $1 AND pos = $2 RETURNING id`, account, head+1, old, new).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// logAged logs n changes of the container (n writes of it) dated age ago
// (0: as logged), and returns the account's log head before them.
func (e *env) logAged(t testing.TB, account, container string, age time.Duration, n int) int64 {
	t.Helper()
	head, err := e.Store.AccountChangeLogHead(context.Background(), account)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		e.Exec(t, `UPDATE containers SET available_for_pickup = NOT coalesce(available_for_pickup, false) WHERE account_id = $1 AND id = $2`,
			account, container)
	}
	if age > 0 {
		e.Exec(t, `UPDATE change_log SET logged_at = $3 WHERE account_id = $1 AND pos > $2`, account, head, time.Now().Add(-age))
	}
	return head
}

// notified are the change ids of the container.updated notifications of
// the webhook, in order.
func (e *env) notified(t testing.TB, hook string) []int64 {
	t.Helper()
	return pg.Column[int64](t, e.Store.SQL(), `SELECT change_id FROM webhook_notifications WHERE webhook_id = $1 AND event = $2 ORDER BY change_id`,
		hook, webhook.EventContainerUpdated)
}

func (e *env) lastChange(t testing.TB) int64 {
	t.Helper()
	var id int64
	e.one(t, `SELECT id FROM change_log ORDER BY id DESC LIMIT 1`, &id)
	return id
}

// wantSkipped checks what a drained fan-out did with skipped changes:
// hook notified for exactly the changes notified, the cursor at last,
// skipped poison rows counted since before and one ERROR record each,
// which it returns.
func (e *env) wantSkipped(t *testing.T, l *testkit.Log, hook string, notified []int64, last int64, before float64, skipped int) []map[string]any {
	t.Helper()
	if got := e.notified(t, hook); !slices.Equal(got, notified) {
		t.Errorf("notified for changes %v, want %v", got, notified)
	}
	if c := e.cursorID(t); c != last {
		t.Errorf("cursor at change %d, want %d (the last)", c, last)
	}
	if d := testkit.Metric(t, "shipgraph_webhook_changes_lost_total", "reason", "poison_row") - before; d != float64(skipped) {
		t.Errorf("poison_row counted %v, want %d", d, skipped)
	}
	recs := l.Find(t, "ERROR", "skipped a change")
	if len(recs) != skipped {
		t.Fatalf("%d ERROR records of a skipped change, want %d: %s", len(recs), skipped, l.String())
	}
	return recs
}

// cursorID is the log id of the change at the fan-out's position in acme's
// log (0: none read).
func (e *env) cursorID(t testing.TB) int64 {
	t.Helper()
	pos, err := e.Store.WebhookCursor(context.Background(), e.acme)
	if err != nil {
		t.Fatal(err)
	}
	if pos == 0 {
		return 0
	}
	var id int64
	if err := e.Store.SQL().QueryRow(`SELECT id FROM change_log WHERE account_id = $1 AND pos = $2`, e.acme, pos).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// A row whose old/new JSON does not decode into the change's attributes
// is skipped and recorded; the changes around it, in the same page and in
// the next, are raised. Before, Step failed on it for ever.
func TestPoisonRowDoesNotStopTheFanOut(t *testing.T) {
	e := newEnv(t)
	c1, _ := e.containerOf(t, e.acme, 0)
	hook := e.webhook(t, e.acme, "https://hooks.example.com/", webhook.EventContainerUpdated)
	var l testkit.Log
	f := webhook.NewFanOut(e.Store, e.config(webhook.Config{Logger: l.Logger(slog.LevelDebug), Batch: 3}), nil)
	before := testkit.Metric(t, "shipgraph_webhook_changes_lost_total", "reason", "poison_row")

	e.toggle(t, c1)
	first := e.lastChange(t)
	badOld := e.logChange(t, e.acme, c1, `[1, 2]`, `{"available_for_pickup": true}`)
	badNew := e.logChange(t, e.acme, c1, `{"available_for_pickup": false}`, `"broken"`)
	e.toggle(t, c1)
	second := e.lastChange(t)
	drain(t, f)
	e.toggle(t, c1) // a later change, later page
	third := e.lastChange(t)
	drain(t, f)

	recs := e.wantSkipped(t, &l, hook, []int64{first, second, third}, third, before, 2)
	for i, want := range []int64{badOld, badNew} {
		r := recs[i]
		if r["change_id"] != float64(want) || r["account"] != e.acme || !strings.Contains(r["reason"].(string), "json") {
			t.Errorf("record %d: %v, want change %d of %s with the JSON error", i, r, want, e.acme)
		}
	}
}

// A change whose notifications the database refuses (here a constraint
// added for the test refuses one container's) is skipped and recorded;
// the rest of its page is raised.
func TestRefusedRowIsSkipped(t *testing.T) {
	e := newEnv(t)
	c1, _ := e.containerOf(t, e.acme, 0)
	c2, _ := e.containerOf(t, e.acme, 1)
	hook := e.webhook(t, e.acme, "https://hooks.example.com/", webhook.EventContainerUpdated)
	e.Exec(t, `ALTER TABLE webhook_notifications ADD CONSTRAINT test_refused CHECK (reference_id <> '`+c2+`')`)
	var l testkit.Log
	f := webhook.NewFanOut(e.Store, e.config(webhook.Config{Logger: l.Logger(slog.LevelDebug)}), nil)
	before := testkit.Metric(t, "shipgraph_webhook_changes_lost_total", "reason", "poison_row")

	e.toggle(t, c1)
	first := e.lastChange(t)
	e.toggle(t, c2)
	refused := e.lastChange(t)
	e.Exec(t, `UPDATE containers SET seal_number = 'raises nothing' WHERE id = $1`, c1)
	e.toggle(t, c1)
	second := e.lastChange(t)
	e.Exec(t, `UPDATE containers SET seal_number = 'raises nothing either' WHERE id = $1`, c1)
	last := e.lastChange(t)
	drain(t, f)

	recs := e.wantSkipped(t, &l, hook, []int64{first, second}, last, before, 1)
	if recs[0]["change_id"] != float64(refused) || !strings.Contains(recs[0]["reason"].(string), "test_refused") {
		t.Errorf("ERROR records %v, want one of change %d naming the constraint", recs, refused)
	}
}

// A failure of the database (here a statement cancelled while a lock holds
// the notifications) skips nothing: the page is raised at the next step,
// and a poison row in it is recorded once, when the cursor passes it.
func TestTransientErrorSkipsNothing(t *testing.T) {
	e := newEnv(t)
	c1, _ := e.containerOf(t, e.acme, 0)
	hook := e.webhook(t, e.acme, "https://hooks.example.com/", webhook.EventContainerUpdated)
	f := webhook.NewFanOut(e.Store, e.config(webhook.Config{}), nil)
	before := testkit.Metric(t, "shipgraph_webhook_changes_lost_total", "reason", "poison_row")
	e.toggle(t, c1)
	e.logChange(t, e.acme, c1, `{"available_for_pickup": false}`, `[]`)
	e.toggle(t, c1)
	want := e.lastChange(t)

	tx, err := e.Store.SQL().Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.Exec(`LOCK TABLE webhook_notifications IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err = f.Step(ctx)
	cancel()
	if err == nil {
		t.Fatal("a step under the lock succeeded")
	}
	if c := e.cursorID(t); c != 0 {
		t.Fatalf("the cursor moved to %d on a transient error", c)
	}
	if d := testkit.Metric(t, "shipgraph_webhook_changes_lost_total", "reason", "poison_row") - before; d != 0 {
		t.Fatalf("poison_row counted %v before the cursor passed it", d)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	drain(t, f)
	if got := e.notified(t, hook); len(got) != 2 || got[1] != want {
		t.Errorf("notified for changes %v after the retry, want both", got)
	}
	if d := testkit.Metric(t, "shipgraph_webhook_changes_lost_total", "reason", "poison_row") - before; d != 1 {
		t.Errorf("poison_row counted %v, want 1: the poison row once, nothing for the transient error", d)
	}
}

// The lag gauge reads the age of the oldest row the cursor has not
// passed, warns past half the retention, and reads 0 once caught up.
func TestFanOutLag(t *testing.T) {
	e := newEnv(t)
	c1, _ := e.containerOf(t, e.acme, 0)
	var l testkit.Log
	f := webhook.NewFanOut(e.Store, e.config(webhook.Config{Logger: l.Logger(slog.LevelDebug), ChangeLogRetention: 3 * time.Hour}), nil)
	ctx := context.Background()

	if lag, err := f.CheckLag(ctx); err != nil || lag != 0 || testkit.Metric(t, "shipgraph_webhook_fanout_lag_seconds") != 0 {
		t.Fatalf("an empty log: lag %v (%v), gauge %v", lag, err, testkit.Metric(t, "shipgraph_webhook_fanout_lag_seconds"))
	}
	// Two hours behind: logged then (a fan-out that was down), and now.
	e.logAged(t, e.acme, c1, 2*time.Hour, 1)
	e.toggle(t, c1)
	lag, err := f.CheckLag(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := testkit.Metric(t, "shipgraph_webhook_fanout_lag_seconds")
	if lag < 2*time.Hour || lag > 2*time.Hour+time.Minute || g != lag.Seconds() {
		t.Errorf("lag %v, gauge %vs; want about 2h", lag, g)
	}
	if recs := l.Find(t, "WARN", "behind the change log"); len(recs) != 1 {
		t.Errorf("%d warnings at 2h behind with a 3h retention, want 1: %s", len(recs), l.String())
	}
	if _, err := f.CheckLag(ctx); err != nil {
		t.Fatal(err)
	}
	if recs := l.Find(t, "WARN", "behind the change log"); len(recs) != 1 {
		t.Errorf("%d warnings after a second check at once, want 1 (not every few seconds)", len(recs))
	}

	drain(t, f)
	if lag, err := f.CheckLag(ctx); err != nil || lag != 0 || testkit.Metric(t, "shipgraph_webhook_fanout_lag_seconds") != 0 {
		t.Errorf("caught up: lag %v (%v), gauge %v; want 0", lag, err, testkit.Metric(t, "shipgraph_webhook_fanout_lag_seconds"))
	}
}

// The pruning loop, reported as the server wires it: rows the fan-out has
// not read are kept up to the ceiling, then dropped, counted and logged at
// ERROR with their accounts.
func TestPruningPastTheCeilingIsReported(t *testing.T) {
	e := newEnv(t)
	c1, _ := e.containerOf(t, e.acme, 0)
	g1, _ := e.containerOf(t, e.globex, 0)
	e.webhook(t, e.acme, "https://hooks.example.com/", webhook.EventContainerUpdated)
	e.Exec(t, `UPDATE webhooks SET created_at = now() - interval '90 days'`)
	e.logAged(t, e.acme, c1, 50*24*time.Hour, 3)
	e.logAged(t, e.globex, g1, 45*24*time.Hour, 2)
	e.logAged(t, e.acme, c1, 10*24*time.Hour, 4) // older than the retention, younger than the ceiling
	var l testkit.Log
	before := testkit.Metric(t, "shipgraph_webhook_changes_lost_total", "reason", "pruned_unread")

	ctx, cancel := context.WithCancel(context.Background())
	rounds := make(chan db.ChangeLogPruning, 1)
	done := make(chan struct{})
	report := webhook.PruneReport(l.Logger(slog.LevelDebug))
	go func() {
		defer close(done)
		e.Store.PruneChangeLogLoop(ctx, 168*time.Hour, 0, time.Hour, func(p db.ChangeLogPruning) { report(p); rounds <- p })
	}()
	select {
	case p := <-rounds:
		if p.Pruned != 5 || p.Unread != 5 || !p.HeldBack {
			t.Errorf("round %+v, want the 5 rows past 4 × 168h pruned unread, held back after", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the loop pruned nothing")
	}
	cancel()
	<-done
	if n := e.Count(t, `SELECT count(*) FROM change_log`); n != 4 {
		t.Errorf("%d rows left, want the 4 unread within the ceiling", n)
	}
	if d := testkit.Metric(t, "shipgraph_webhook_changes_lost_total", "reason", "pruned_unread") - before; d != 5 {
		t.Errorf("pruned_unread counted %v, want 5", d)
	}
	recs := l.Find(t, "ERROR", "had not read")
	if len(recs) != 1 {
		t.Fatalf("%d ERROR records, want 1: %s", len(recs), l.String())
	}
	accounts, _ := recs[0]["accounts"].(map[string]any)
	if recs[0]["unread"] != float64(5) || accounts[e.acme] != float64(3) || accounts[e.globex] != float64(2) {
		t.Errorf("ERROR record %v, want 5 unread: 3 of acme, 2 of globex", recs[0])
	}
}
