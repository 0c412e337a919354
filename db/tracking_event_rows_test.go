package db_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"

	"shipgraph/db"
)

// The event rows have no foreign key to their container (00065): a poll
// writes events only of the containers its statement locked or inserted,
// and a container's delete deletes its events by trigger. A delete of a
// container while a poll that wrote its events is open waits for the
// poll's commit and then takes the poll's events with it; deletes of
// containers and shipments racing polls leave no event without its
// container, and every container a poll wrote keeps all its events.
func TestEventRowsFollowTheirContainer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	acct := f.A.Account
	live := []string{"pending", "awaiting_manifest", "created"}
	const nEvents = 6
	round := 0
	// shipment stores a shipment (with its container when boxed) and a
	// request of its number, not yet pointing at it.
	shipment := func(boxed bool) (ship, box, req, bol, number string) {
		t.Helper()
		round++
		bol, number = fmt.Sprintf("EVRO%06d", round), fmt.Sprintf("EVRU%07d", round)
		ship = f.id(t, `INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, shipping_line_scac,
				shipping_line_name, shipping_line_short_name) VALUES ($1, $2, $2, 'MAEU', 'Maersk', 'Maersk') RETURNING id`, acct, bol)
		if boxed {
			box = f.id(t, `INSERT INTO containers (account_id, shipment_id, number) VALUES ($1, $2, $3) RETURNING id`, acct, ship, number)
		}
		req = f.id(t, `INSERT INTO tracking_requests (account_id, request_type, request_number, scac, status, next_poll_at)
			VALUES ($1, 'bill_of_lading', $2, 'MAEU', 'created', now()) RETURNING id`, acct, bol)
		return
	}
	poll := func(req, bol, number string) db.PollWrite {
		p := db.PollWrite{RequestID: req, Status: "created", Shipment: &db.PolledShipment{BillOfLadingNumber: bol},
			Containers: []db.PolledContainer{{Number: number}}}
		for i := 0; i < nEvents; i++ {
			at, te := base.Add(time.Duration(i)*time.Hour), "container.transport.vessel_departed"
			p.Events = append(p.Events, db.PolledEvent{ContainerNumber: number, CarrierEventID: fmt.Sprintf("e%d", i),
				Event: "Vessel departed", OriginalEvent: "VD", EventAt: &at, Position: i, Payload: []byte(`{}`), TransportEvent: &te})
		}
		return p
	}
	apply := func(p db.PollWrite) (db.PollApplied, error) {
		var a db.PollApplied
		err := f.DB.InTrackingTx(ctx, acct, func(tx *db.TrackingTx) error {
			out, err := tx.ApplyPolls(live, []db.PollWrite{p})
			a = out[p.RequestID]
			return err
		})
		return a, err
	}
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := f.SQL.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
		return n
	}
	// orphans: the account's event rows whose container is gone.
	orphans := func() int {
		t.Helper()
		return count(`SELECT (SELECT count(*) FROM raw_events e WHERE e.account_id = $1
				AND NOT EXISTS (SELECT 1 FROM containers c WHERE c.account_id = e.account_id AND c.id = e.container_id))
			+ (SELECT count(*) FROM transport_events e WHERE e.account_id = $1
				AND NOT EXISTS (SELECT 1 FROM containers c WHERE c.account_id = e.account_id AND c.id = e.container_id))`, acct)
	}
	// whole: every container of the number holds all the poll's events
	// (raw and transport); it returns how many containers there are.
	whole := func(number string) int {
		t.Helper()
		rows := count(`SELECT count(*) FROM containers WHERE account_id = $1 AND number = $2`, acct, number)
		short := count(`SELECT count(*) FROM containers c WHERE c.account_id = $1 AND c.number = $2
			AND ((SELECT count(*) FROM raw_events e WHERE e.account_id = c.account_id AND e.container_id = c.id) <> $3
			  OR (SELECT count(*) FROM transport_events e WHERE e.account_id = c.account_id AND e.container_id = c.id) <> $3)`,
			acct, number, nEvents)
		if short != 0 {
			t.Errorf("container %s: %d of %d stored copies lack some of the poll's %d events", number, short, rows, nEvents)
		}
		return rows
	}
	code := func(err error) string {
		var pqe *pq.Error
		if errors.As(err, &pqe) {
			return string(pqe.Code)
		}
		return ""
	}

	// The poll holds the containers it wrote events of until it commits:
	// a lock for a delete of one, tried while the poll's transaction is
	// open, is refused (without the poll's lock it was granted, and a
	// delete then left the poll's events without their container: the
	// races below). The delete after the commit takes the events.
	t.Run("held", func(t *testing.T) {
		_, box, req, bol, number := shipment(true)
		held := false
		err := f.DB.InTrackingTx(ctx, acct, func(tx *db.TrackingTx) error {
			out, err := tx.ApplyPolls(live, []db.PollWrite{poll(req, bol, number)})
			if err != nil {
				return err
			}
			if a := out[req]; a.ShipmentID == nil || !a.Complete {
				return fmt.Errorf("poll applied: %+v", a)
			}
			dtx, err := f.SQL.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer dtx.Rollback() //nolint:errcheck
			_, err = dtx.ExecContext(ctx, `SELECT 1 FROM containers WHERE account_id = $1 AND id = $2 FOR UPDATE NOWAIT`, acct, box)
			if code(err) == "55P03" { // lock_not_available
				held, err = true, nil
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !held {
			t.Errorf("a delete's lock of the container was granted while the poll writing its events was open")
		}
		if n := whole(number); n != 1 {
			t.Fatalf("%d containers %s after the poll, want 1", n, number)
		}
		if _, err := f.SQL.ExecContext(ctx, `DELETE FROM containers WHERE account_id = $1 AND id = $2`, acct, box); err != nil {
			t.Fatal(err)
		}
		if n := orphans(); n != 0 {
			t.Errorf("%d event rows without their container", n)
		}
	})

	// Polls and deletes started at once, many times: of a stored
	// container (the poll locks it) or a new one (the poll inserts it), the
	// container or its whole shipment deleted. A poll that failed (its
	// shipment deleted under it, a deadlock) is applied again, as the
	// engine does.
	t.Run("races", func(t *testing.T) {
		deletes := map[string]string{
			"container": `DELETE FROM containers WHERE account_id = $1 AND shipment_id = $2`,
			"shipment":  `DELETE FROM shipments WHERE account_id = $1 AND id = $2`,
		}
		for i := 0; i < 40; i++ {
			boxed, what := i%2 == 0, []string{"container", "shipment"}[(i/2)%2]
			ship, _, req, bol, number := shipment(boxed)
			p := poll(req, bol, number)
			start := make(chan struct{})
			var wg sync.WaitGroup
			var perr, derr error
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				_, perr = apply(p)
			}()
			go func() {
				defer wg.Done()
				<-start
				_, derr = f.SQL.ExecContext(ctx, deletes[what], acct, ship)
			}()
			close(start)
			wg.Wait()
			// On Citus the request's key to its shipment is NO ACTION
			// (db/citus.go): a shipment the poll gave the request stays.
			if derr != nil && code(derr) != "23503" && !db.Victim(derr) {
				t.Fatalf("round %d, delete of the %s: %v", i, what, derr)
			}
			if perr != nil {
				if code(perr) != "23503" && !db.Victim(perr) {
					t.Fatalf("round %d, poll: %v", i, perr)
				}
				if a, err := apply(p); err != nil || a.ShipmentID == nil || !a.Complete {
					t.Fatalf("round %d, the poll again: %+v, %v", i, a, err)
				}
			}
			if n := orphans(); n != 0 {
				t.Fatalf("round %d (%s deleted, boxed %v): %d event rows without their container", i, what, boxed, n)
			}
			whole(number)
		}
	})

	// TRUNCATE containers empties the event tables, as the keys' cascade
	// did.
	if count(`SELECT count(*) FROM raw_events`) == 0 {
		t.Fatal("no event rows before the TRUNCATE")
	}
	f.exec(t, `TRUNCATE containers CASCADE`)
	if n := count(`SELECT (SELECT count(*) FROM raw_events) + (SELECT count(*) FROM transport_events)`); n != 0 {
		t.Errorf("%d event rows after TRUNCATE containers", n)
	}
}
