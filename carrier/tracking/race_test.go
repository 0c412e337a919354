package tracking_test

import (
	"testing"
	"time"

	"github.com/lib/pq"

	"shipgraph/carrier/sim"
	"shipgraph/testkit/pg"
)

// shipmentNumbers groups the simulator's tracked numbers by shipment: each
// group is a bill of lading, its booking number and its containers, all of
// which name one shipment.
func shipmentNumbers(s *sim.Sim) [][]sim.Number {
	var out [][]sim.Number
	for _, n := range s.Numbers() {
		if n.State != "tracked" {
			continue
		}
		if n.RequestType == "bill_of_lading" {
			out = append(out, nil)
		}
		if len(out) > 0 {
			out[len(out)-1] = append(out[len(out)-1], n)
		}
	}
	return out
}

// TestRacingPollsMakeOneShipment: every request naming one shipment (its
// bill of lading, its booking number and each of its containers) is
// created in one statement, so that the first polls of all of them run at
// the same moment on two engines. Each shipment is stored once, every
// request of it points at that one, and its containers and events are
// stored once.
func TestRacingPollsMakeOneShipment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.engine(e.config())
	e.engine(e.config())
	groups := shipmentNumbers(e.sim)
	if len(groups) > 24 {
		groups = groups[:24]
	}
	var typ, num, scac []string
	for _, g := range groups {
		for _, n := range g {
			typ, num, scac = append(typ, n.RequestType), append(num, n.RequestNumber), append(scac, n.SCAC)
		}
	}
	ids := pg.Column[string](t, e.store.SQL(), `INSERT INTO tracking_requests (account_id, request_type, request_number, scac, next_poll_at)
		SELECT $1, u.t, u.n, u.s, now() FROM unnest($2::text[], $3::text[], $4::text[]) AS u(t, n, s) RETURNING id`,
		e.acct, pq.StringArray(typ), pq.StringArray(num), pq.StringArray(scac))
	if len(ids) != len(num) || len(groups) < 10 {
		t.Fatalf("%d requests of %d shipments", len(ids), len(groups))
	}
	for _, id := range ids {
		if r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" }); r.ShipmentID == nil {
			t.Fatalf("request %s: %+v, want tracked", id, r)
		}
	}
	if got := e.count(`SELECT count(*) FROM (SELECT 1 FROM shipments WHERE account_id = $1
		GROUP BY shipping_line_scac, upper(normalized_number) HAVING count(*) > 1) d`, e.acct); got != 0 {
		t.Errorf("%d shipments doubled", got)
	}
	if got := e.count(`SELECT count(*) FROM shipments WHERE account_id = $1`, e.acct); got != len(groups) {
		t.Errorf("%d shipments stored for %d", got, len(groups))
	}
	i := 0
	for _, g := range groups {
		first := e.row(ids[i])
		for range g {
			if r := e.row(ids[i]); *r.ShipmentID != *first.ShipmentID {
				t.Errorf("request %s (%s): shipment %s, its bill of lading's is %s", ids[i], num[i], *r.ShipmentID, *first.ShipmentID)
			}
			i++
		}
	}
	if got := e.count(`SELECT count(*) FROM (SELECT 1 FROM containers WHERE account_id = $1
		GROUP BY shipment_id, number HAVING count(*) > 1) d`, e.acct); got != 0 {
		t.Errorf("%d containers doubled", got)
	}
	if got := e.count(`SELECT count(*) FROM (SELECT 1 FROM raw_events r JOIN containers c ON c.account_id = r.account_id AND c.id = r.container_id
		WHERE r.account_id = $1 GROUP BY c.shipment_id, c.number, r.carrier_event_id HAVING count(*) > 1) d`, e.acct); got != 0 {
		t.Errorf("%d events doubled", got)
	}
	if got := e.count(`SELECT count(*) FROM raw_events r WHERE r.account_id = $1
		AND NOT EXISTS (SELECT 1 FROM containers c WHERE c.account_id = r.account_id AND c.id = r.container_id AND c.shipment_id = r.shipment_id)`, e.acct); got != 0 {
		t.Errorf("%d events on another shipment than their container's", got)
	}
}

// TestEstimatesStoredOnce: a carrier that publishes one estimate (same
// event, time and place) again, under another event id, in one answer or
// a later one, gives the container one transport event for it; the raw
// events keep every publication.
func TestEstimatesStoredOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng := e.engine(e.config())
	var ids []string
	for _, n := range e.sim.Numbers() {
		if n.State == "tracked" && n.RequestType == "bill_of_lading" && len(ids) < 12 {
			ids = append(ids, e.request(n.RequestType, n.RequestNumber, n.SCAC))
		}
	}
	for _, id := range ids {
		e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
	}
	for range 3 {
		e.advance(2 * 24 * time.Hour)
		e.repoll(eng, ids...)
	}
	repeated := `SELECT count(*) FROM raw_events WHERE account_id = $1 AND estimated
		AND (container_id, event, event_at, location_locode) IN (SELECT container_id, event, event_at, location_locode
			FROM raw_events WHERE account_id = $1 AND estimated GROUP BY 1, 2, 3, 4 HAVING count(*) > 1)`
	if e.count(repeated, e.acct) == 0 {
		t.Fatal("the simulator repeated no estimate: nothing tested")
	}
	if got := e.count(`SELECT count(*) FROM (SELECT 1 FROM transport_events WHERE account_id = $1 AND event LIKE 'container.transport.estimated.%'
		GROUP BY container_id, event, event_at, location_locode HAVING count(*) > 1) d`, e.acct); got != 0 {
		t.Errorf("%d estimates stored more than once as transport events", got)
	}
}
