package tracking_test

import (
	"testing"

	"shipgraph/carrier/sim"
)

// TestPollCopiesCustomer: a tracking request's customer (a party) reaches
// the shipment its poll creates or links, through the simulator: a new
// shipment takes the customer and its company name as customer_name; an
// existing shipment without a customer takes the customer and keeps its own
// customer_name; an existing shipment with a customer keeps it; a request
// without a customer leaves its shipment's customer alone.
func TestPollCopiesCustomer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.engine(e.config())
	var tracked []sim.Number
	for _, n := range e.sim.Numbers() {
		if n.RequestType == "bill_of_lading" && n.State == "tracked" {
			tracked = append(tracked, n)
		}
	}
	if len(tracked) < 4 {
		t.Fatalf("the simulator publishes %d tracked bills of lading, want 4", len(tracked))
	}
	party := func(name string) string {
		t.Helper()
		var id string
		if err := e.store.SQL().QueryRow(`INSERT INTO parties (account_id, company_name) VALUES ($1, $2) RETURNING id`,
			e.acct, name).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	acme, tyrell := party("Acme Imports"), party("Tyrell Corp")
	// existing stores the account's shipment of n before any request of it.
	existing := func(n sim.Number, customer any, name any) string {
		t.Helper()
		var id string
		if err := e.store.SQL().QueryRow(`INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number,
			shipping_line_scac, shipping_line_name, shipping_line_short_name, customer_id, customer_name)
			VALUES ($1, $2, upper($2), $3, $3, $3, $4, $5) RETURNING id`, e.acct, n.RequestNumber, n.SCAC, customer, name).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	// track polls a request of n with customer (nil: none) until it has
	// its shipment, and answers its shipment's customer and customer_name.
	track := func(n sim.Number, customer any) (ship string, cust, name *string) {
		t.Helper()
		var id string
		if err := e.store.SQL().QueryRow(`INSERT INTO tracking_requests (account_id, request_type, request_number, scac,
			next_poll_at, customer_id) VALUES ($1, $2, $3, $4, now(), $5) RETURNING id`,
			e.acct, n.RequestType, n.RequestNumber, n.SCAC, customer).Scan(&id); err != nil {
			t.Fatal(err)
		}
		r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
		// tracking_stopped: a voyage that ended already is created, then stops.
		if (r.Status != "created" && r.Status != "tracking_stopped") || r.ShipmentID == nil {
			t.Fatalf("request of %s: %+v, want created with its shipment", n.RequestNumber, r)
		}
		if err := e.store.SQL().QueryRow(`SELECT customer_id::text, customer_name FROM shipments WHERE account_id = $1 AND id = $2`,
			e.acct, *r.ShipmentID).Scan(&cust, &name); err != nil {
			t.Fatal(err)
		}
		return *r.ShipmentID, cust, name
	}
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}

	// A new shipment.
	if _, cust, name := track(tracked[0], acme); str(cust) != acme || str(name) != "Acme Imports" {
		t.Errorf("new shipment: customer %s %q, want %s \"Acme Imports\"", str(cust), str(name), acme)
	}
	// An existing shipment without a customer, with a name of its own.
	want := existing(tracked[1], nil, "Acme Imports Ltd (Rotterdam)")
	if ship, cust, name := track(tracked[1], acme); ship != want || str(cust) != acme || str(name) != "Acme Imports Ltd (Rotterdam)" {
		t.Errorf("existing shipment without customer: %s customer %s %q, want %s %s and its own name", ship, str(cust), str(name), want, acme)
	}
	// An existing shipment with another customer keeps it.
	want = existing(tracked[2], tyrell, "Tyrell Corp")
	if ship, cust, name := track(tracked[2], acme); ship != want || str(cust) != tyrell || str(name) != "Tyrell Corp" {
		t.Errorf("existing shipment of Tyrell: %s customer %s %q, want %s kept", ship, str(cust), str(name), tyrell)
	}
	// A request without a customer changes nothing.
	want = existing(tracked[3], tyrell, nil)
	if ship, cust, name := track(tracked[3], nil); ship != want || str(cust) != tyrell || name != nil {
		t.Errorf("request without customer: %s customer %s %q, want %s, no name", ship, str(cust), str(name), tyrell)
	}
}
