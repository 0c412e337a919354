package db_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"shipgraph/db"
)

// A tracking transaction's change-log rows keep the order the row triggers
// give them (what a change to who logs them must keep: an ApplyPolls that
// wrote its events' rows itself was measured and not taken, docs/tracking.md):
// in each statement the shipment, container and request rows, then the
// transport events' (container.created before its container.transport.*,
// tracking_request.succeeded before both), and a later statement's rows
// after them all (tracking_stopped last). Each event is logged once, with
// the attributes the trigger logs. The order is plain PostgreSQL's; on
// Citus only the rows are compared.
func TestChangeLogPollOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	acct := f.A.Account
	req := func(number string) string {
		return f.id(t, `INSERT INTO tracking_requests (account_id, request_type, request_number, scac, next_poll_at)
			VALUES ($1, 'bill_of_lading', $2, 'MAEU', now()) RETURNING id`, acct, number)
	}
	first, second := req("MAEU9100001"), req("MAEU9100002")
	la, voyage := "USLAX", "123E"
	ev := func(box, id, name string) db.PolledEvent {
		return db.PolledEvent{ContainerNumber: box, CarrierEventID: id, Event: "x", OriginalEvent: "x", Payload: []byte(`{}`),
			TransportEvent: &name, Locode: &la, VoyageNumber: &voyage}
	}
	poll1 := db.PollWrite{RequestID: first, Status: "created",
		Shipment:   &db.PolledShipment{BillOfLadingNumber: "MAEU9100001"},
		Containers: []db.PolledContainer{{Number: "MSCU1000001"}, {Number: "MSCU1000002"}},
		Events: []db.PolledEvent{ev("MSCU1000001", "e1", "container.transport.vessel_loaded"),
			ev("MSCU1000002", "e2", "container.transport.vessel_departed"),
			ev("MSCU1000001", "e3", "container.transport.vessel_departed")}}
	poll2 := db.PollWrite{RequestID: second, Status: "created",
		Shipment:   &db.PolledShipment{BillOfLadingNumber: "MAEU9100002"},
		Containers: []db.PolledContainer{{Number: "MSCU1000003"}},
		Events:     []db.PolledEvent{ev("MSCU1000003", "e4", "container.transport.vessel_loaded")}}
	head, err := f.DB.AccountChangeLogHead(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	live := []string{"pending", "created"}
	if err := f.DB.InTrackingTx(ctx, acct, func(tx *db.TrackingTx) error {
		for _, p := range []db.PollWrite{poll1, poll2} {
			if _, err := tx.ApplyPolls(live, []db.PollWrite{p}); err != nil {
				return err
			}
		}
		return tx.StopRequests(live, []string{first})
	}); err != nil {
		t.Fatal(err)
	}
	rows, err := f.SQL.QueryContext(ctx, `SELECT l.record_type || ' ' || l.op || coalesce(' ' || (l.new ->> 'event'), ''),
			l.record_type <> 'transport_event' OR l.new = jsonb_build_object('event', e.event, 'event_at', e.event_at,
				'timezone', e.timezone, 'location_locode', e.location_locode, 'voyage_number', e.voyage_number,
				'data_source', e.data_source, 'created_at', e.created_at, 'shipment_id', e.shipment_id)
		FROM change_log l LEFT JOIN transport_events e ON e.account_id = l.account_id AND e.id = l.record_id
		WHERE l.account_id = $1 AND l.pos > $2 ORDER BY l.pos`, acct, head)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var row string
		var same bool
		if err := rows.Scan(&row, &same); err != nil {
			t.Fatal(err)
		}
		if !same {
			t.Errorf("%s: logged with other attributes than the event's", row)
		}
		got = append(got, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"shipment INSERT", "container INSERT", "container INSERT", "tracking_request UPDATE",
		"transport_event INSERT container.transport.vessel_loaded", "transport_event INSERT container.transport.vessel_departed",
		"transport_event INSERT container.transport.vessel_departed",
		"shipment INSERT", "container INSERT", "tracking_request UPDATE",
		"transport_event INSERT container.transport.vessel_loaded",
		"tracking_request UPDATE",
	}
	var citus bool
	if err := f.SQL.QueryRowContext(ctx, `SELECT to_regclass('pg_catalog.citus_lock_waits') IS NOT NULL`).Scan(&citus); err != nil {
		t.Fatal(err)
	}
	if citus {
		// Citus runs the statement's CTEs as worker statements of their
		// own, in an order of its own: the same rows, each once.
		got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the transaction's logged rows in order:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
