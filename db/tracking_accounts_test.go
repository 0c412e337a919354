package db_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"shipgraph/db"
)

// A TrackingTx over several accounts (InTrackingTxs on plain PostgreSQL)
// locks and writes the polls of them all in one statement each, and each
// account's rows stay its own: two accounts tracking the same bill of
// lading number with the same carrier get a shipment each, with a
// container and events each; a number that one account has a shipment of
// makes a new shipment in the other; each account's change log numbers its
// own rows; the same polls again write nothing.
func TestPollsOfSeveralAccountsStayApart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if !f.DB.GroupsAccounts() {
		t.Skip("one transaction an account here (Citus, a pooler): no statement over several accounts")
	}
	ctx := context.Background()
	live := []string{"pending", "awaiting_manifest", "created"}
	accounts := []string{f.A.Account, f.B.Account}
	slices.Sort(accounts)
	// A has a shipment of the number HADX0001; only the other tracks it.
	had := f.id(t, `INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, shipping_line_scac,
			shipping_line_name, shipping_line_short_name) VALUES ($1, 'HADX0001', 'HADX0001', 'MAEU', 'Maersk', 'Maersk') RETURNING id`,
		accounts[0])
	var reqs, accs []string
	var polls []db.PollWrite
	for _, a := range accounts {
		for _, bol := range []string{"SAMEX0001", "HADX0001"} {
			if bol == "HADX0001" && a == accounts[0] {
				continue
			}
			req := f.id(t, `INSERT INTO tracking_requests (account_id, request_type, request_number, scac, next_poll_at)
				VALUES ($1, 'bill_of_lading', $2, 'MAEU', now()) RETURNING id`, a, bol)
			p := db.PollWrite{AccountID: a, RequestID: req, Status: "created", Shipment: &db.PolledShipment{BillOfLadingNumber: bol},
				Containers: []db.PolledContainer{{Number: "SAMU" + bol[4:]}}}
			for i := 0; i < 3; i++ {
				at, te := base.Add(time.Duration(i)*time.Hour), "container.transport.vessel_departed"
				p.Events = append(p.Events, db.PolledEvent{ContainerNumber: "SAMU" + bol[4:], CarrierEventID: fmt.Sprintf("e%d", i),
					Event: "Vessel departed", OriginalEvent: "VD", EventAt: &at, Position: i, Payload: []byte(`{}`), TransportEvent: &te})
			}
			reqs, accs, polls = append(reqs, req), append(accs, a), append(polls, p)
		}
	}
	apply := func() map[string]db.PollApplied {
		t.Helper()
		var out map[string]db.PollApplied
		if err := f.DB.InTrackingTxs(ctx, accounts, func(all *db.TrackingTx, _ []*db.TrackingTx) error {
			if all == nil {
				t.Fatal("no TrackingTx over both accounts on plain PostgreSQL")
			}
			locked, busy, err := all.Lock(accs, reqs)
			if err != nil || len(locked) != len(reqs) || len(busy) != 0 {
				return fmt.Errorf("locked %d of %d requests, busy %v: %v", len(locked), len(reqs), busy, err)
			}
			out, err = all.ApplyPolls(live, polls)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := f.SQL.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
		return n
	}
	rows := func() []int {
		var out []int
		for _, a := range accounts {
			for _, table := range []string{"shipments", "containers", "raw_events", "transport_events", "change_log"} {
				out = append(out, count(`SELECT count(*) FROM `+table+` WHERE account_id = $1`, a))
			}
		}
		return out
	}
	out := apply()
	for i, p := range polls {
		a := out[p.RequestID]
		if !a.Locked || a.ShipmentID == nil || !a.Complete {
			t.Fatalf("poll %d (%s of account %s): %+v", i, p.Shipment.BillOfLadingNumber, p.AccountID, a)
		}
		if n := count(`SELECT count(*) FROM shipments s JOIN tracking_requests r ON r.account_id = s.account_id AND r.shipment_id = s.id
				WHERE s.account_id = $1 AND s.id = $2 AND r.id = $3 AND r.status = 'created'`, p.AccountID, *a.ShipmentID, p.RequestID); n != 1 {
			t.Errorf("poll %d (%s): its shipment %s is not its account's %s, or its request does not point at it",
				i, p.Shipment.BillOfLadingNumber, *a.ShipmentID, p.AccountID)
		}
		if p.Shipment.BillOfLadingNumber == "HADX0001" && *a.ShipmentID == had {
			t.Errorf("account %s's poll of HADX0001 took the other account's shipment", p.AccountID)
		}
	}
	for i, a := range accounts {
		polled := i + 1 // the first polls SAMEX0001, the second HADX0001 too
		if n := count(`SELECT count(*) FROM shipments WHERE account_id = $1 AND normalized_number = 'SAMEX0001'`, a); n != 1 {
			t.Errorf("account %s: %d shipments of SAMEX0001, want 1", a, n)
		}
		if n := count(`SELECT count(*) FROM shipments WHERE account_id = $1 AND normalized_number = 'HADX0001'`, a); n != 1 {
			t.Errorf("account %s: %d shipments of HADX0001, want 1", a, n)
		}
		if n := count(`SELECT count(*) FROM containers c JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id
				WHERE c.account_id = $1 AND s.normalized_number IN ('SAMEX0001', 'HADX0001')`, a); n != polled {
			t.Errorf("account %s: %d containers of its polled shipments, want %d", a, n, polled)
		}
		if n := count(`SELECT count(*) FROM transport_events e JOIN containers c ON c.account_id = e.account_id AND c.id = e.container_id
				JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id AND s.id = e.shipment_id
				WHERE e.account_id = $1 AND s.normalized_number IN ('SAMEX0001', 'HADX0001')`, a); n != 3*polled {
			t.Errorf("account %s: %d transport events of its containers, want %d", a, n, 3*polled)
		}
		if n := count(`SELECT count(*) FROM change_log WHERE account_id = $1 AND pos IS NULL`, a); n != 0 {
			t.Errorf("account %s: %d change-log rows left unnumbered", a, n)
		}
	}
	if n := count(`SELECT count(*) FROM raw_events e JOIN containers c ON c.id = e.container_id WHERE c.account_id <> e.account_id`); n != 0 {
		t.Errorf("%d raw events in another account than their container's", n)
	}
	before := rows()
	apply()
	if after := rows(); !slices.Equal(before, after) {
		t.Errorf("the same polls again: rows per account %v, were %v", after, before)
	}
}

// A transaction over several accounts takes their change-log heads in
// account order at its commit, whatever order its rows were logged in
// (00070: the numbering's first firing numbers every pending account, its
// heads in account order): its numbering then never holds one account's
// head while it waits for another's that a second such transaction holds
// (40P01). Here the later account's row is logged first and its head is
// held by another session: the writer must be seen waiting for it while it
// holds the first account's head already (numbered in the rows' order, it
// waits at commit for the later account's head holding nothing). The rows
// are logged as every writer logs them (a logged table's trigger).
func TestHeadsTakenInAccountOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if !f.DB.GroupsAccounts() {
		t.Skip("one transaction an account here (Citus, a pooler)")
	}
	ctx := context.Background()
	accounts := []string{f.A.Account, f.B.Account}
	slices.Sort(accounts)
	holder, err := f.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback() //nolint:errcheck
	var n int
	if err := holder.QueryRow(`SELECT count(*) FROM (SELECT 1 FROM change_log_heads WHERE account_id = $1 FOR UPDATE) h`,
		accounts[1]).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the second account's head: %d rows, %v", n, err)
	}
	done := make(chan error, 1)
	go func() {
		done <- f.DB.InTrackingTxs(ctx, accounts, func(_ *db.TrackingTx, txs []*db.TrackingTx) error {
			return logParties(txs, accounts, []int{1, 0}, "order") // the later account's row first
		})
	}()
	// The writer waits for the held head (a lock wait in this database).
	waitLockWaiters(t, f, 1, done)
	probe, err := f.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = probe.Exec(`SELECT 1 FROM change_log_heads WHERE account_id = $1 FOR UPDATE NOWAIT`, accounts[0])
	_ = probe.Rollback()
	if err == nil {
		t.Error("the first account's head was free while the writer waited for the second's: heads taken in the rows' order")
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the writer after the head was released: %v", err)
	}
}

// Two transactions over the same two accounts, each logging the accounts'
// FIRST changes (no change_log_heads row yet) in the opposite order of the
// other, both commit: each makes the heads in account order (00070). A
// head not made yet cannot be locked ahead (what inTrackingTxs' SELECT …
// FOR UPDATE before COMMIT did), and the INSERT … ON CONFLICT that makes it
// waits for another transaction's uncommitted insert of the same key: in
// the rows' order the first transaction made X's head and waited for Y's,
// the second made Y's and waited for X's (40P01). A third session holds
// each account's first position (an uncommitted row at pos 1), so that
// both writers are inside their numbering, past their first head, before
// either goes on.
func TestNewHeadsTakenInAccountOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if !f.DB.GroupsAccounts() {
		t.Skip("one transaction an account here (Citus, a pooler)")
	}
	ctx := context.Background()
	accounts := []string{
		f.id(t, `INSERT INTO accounts (slug, company_name) VALUES ('newheads-x', 'X') RETURNING id`),
		f.id(t, `INSERT INTO accounts (slug, company_name) VALUES ('newheads-y', 'Y') RETURNING id`),
	}
	slices.Sort(accounts)
	var heads int
	if err := f.SQL.QueryRow(`SELECT count(*) FROM change_log_heads WHERE account_id = ANY($1::uuid[])`,
		"{"+accounts[0]+","+accounts[1]+"}").Scan(&heads); err != nil || heads != 0 {
		t.Fatalf("the new accounts have %d heads (%v), want none", heads, err)
	}
	blocker, err := f.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback() //nolint:errcheck
	for _, a := range accounts {
		if _, err := blocker.Exec(`INSERT INTO change_log (account_id, pos, record_type, record_id, op)
			VALUES ($1, 1, 'party', gen_random_uuid(), 'INSERT')`, a); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 2)
	for w, order := range [][]int{{0, 1}, {1, 0}} {
		go func() {
			done <- f.DB.InTrackingTxs(ctx, accounts, func(_ *db.TrackingTx, txs []*db.TrackingTx) error {
				return logParties(txs, accounts, order, fmt.Sprintf("writer %d", w))
			})
		}()
	}
	// Both writers wait at commit: for the blocker's positions, or one for
	// the other's head.
	waitLockWaiters(t, f, 2, done)
	if err := blocker.Rollback(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Errorf("a writer of the accounts' first changes: %v", err)
		}
	}
	for _, a := range accounts {
		var n, lo, hi int
		if err := f.SQL.QueryRow(`SELECT count(*), min(pos), max(pos) FROM change_log WHERE account_id = $1`, a).Scan(&n, &lo, &hi); err != nil {
			t.Fatal(err)
		}
		if n != 2 || lo != 1 || hi != 2 {
			t.Errorf("account %s: %d rows at positions %d–%d, want 2 at 1–2", a, n, lo, hi)
		}
	}
}

// logParties logs a change of each account (a new party: a logged table
// without counters) in the order given, in txs (InTrackingTxs').
func logParties(txs []*db.TrackingTx, accounts []string, order []int, name string) error {
	for _, i := range order {
		var id string
		if err := txs[i].QueryRow(`INSERT INTO parties (account_id, company_name) VALUES ($1, $2) RETURNING id`,
			accounts[i], name).Scan(&id); err != nil {
			return err
		}
	}
	return nil
}

// waitLockWaiters returns when n sessions of the test's database wait for
// a lock; done (a writer's end) must not come first.
func waitLockWaiters(t *testing.T, f *fixture, n int, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var waiting int
		if err := f.SQL.QueryRow(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting >= n {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("a writer ended before %d sessions waited for a lock: %v", n, err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions never waited for a lock", n)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not waiting for it to be true
	}
}
