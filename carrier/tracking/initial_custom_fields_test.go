package tracking_test

import (
	"fmt"
	"testing"
)

// TestInitialCustomFieldsWritten: a request's staged custom field values
// (initial_custom_fields, as the create stores them) are written when its
// first poll finds the shipment: the shipment's value on the shipment, a
// container value naming a container on that container only (winning
// over the value for all), the value for all on every other container. A
// request without staged values writes none.
func TestInitialCustomFieldsWritten(t *testing.T) {
	e := newEnv(t)
	e.engine(e.config())
	def := func(entity, slug string) string {
		t.Helper()
		var id string
		if err := e.store.SQL().QueryRow(`INSERT INTO custom_field_definitions (account_id, entity_type, api_slug, display_name, data_type)
			VALUES ($1, $2, $3, $3, 'short_text') RETURNING id`, e.acct, entity, slug).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	po, slot := def("Shipment", "customer_po"), def("Container", "yard_slot")
	n := e.number("container", "tracked")
	staged := fmt.Sprintf(`[{"definition_id": %q, "entity": "shipment", "value": "PO-7"},
		{"definition_id": %q, "entity": "container", "value": "B-all"},
		{"definition_id": %q, "entity": "container", "value": "A-1", "number": %q}]`, po, slot, slot, n.RequestNumber)
	var id string
	if err := e.store.SQL().QueryRow(`INSERT INTO tracking_requests (account_id, request_type, request_number, scac, next_poll_at, initial_custom_fields)
		VALUES ($1, $2, $3, $4, now(), $5) RETURNING id`, e.acct, n.RequestType, n.RequestNumber, n.SCAC, staged).Scan(&id); err != nil {
		t.Fatal(err)
	}
	r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" })
	if r.Status != "created" || r.ShipmentID == nil {
		t.Fatalf("request %+v, want created with a shipment", r)
	}
	var got string
	if err := e.store.SQL().QueryRow(`SELECT value #>> '{}' FROM custom_fields WHERE account_id = $1 AND definition_id = $2 AND shipment_id = $3`,
		e.acct, po, *r.ShipmentID).Scan(&got); err != nil || got != "PO-7" {
		t.Errorf("shipment's customer_po %q (%v), want PO-7", got, err)
	}
	rows, err := e.store.SQL().Query(`SELECT c.number, f.value #>> '{}' FROM containers c
		LEFT JOIN custom_fields f ON f.account_id = c.account_id AND f.container_id = c.id AND f.definition_id = $3
		WHERE c.account_id = $1 AND c.shipment_id = $2 ORDER BY c.number`, e.acct, *r.ShipmentID, slot)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var number string
		var value *string
		if err := rows.Scan(&number, &value); err != nil {
			t.Fatal(err)
		}
		seen++
		want := "B-all"
		if number == n.RequestNumber {
			want = "A-1"
		}
		if value == nil || *value != want {
			t.Errorf("container %s: yard_slot %v, want %s", number, value, want)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("the shipment has no containers")
	}
	t.Logf("%d containers", seen)

	// A request without staged values: its shipment gets none.
	m := e.number("bill_of_lading", "tracked")
	plain := e.request(m.RequestType, m.RequestNumber, m.SCAC)
	pr := e.waitFor(plain, func(r reqRow) bool { return r.Status != "pending" })
	if pr.ShipmentID != nil && *pr.ShipmentID != *r.ShipmentID {
		if c := e.count(`SELECT count(*) FROM custom_fields WHERE account_id = $1 AND (shipment_id = $2
			OR container_id IN (SELECT id FROM containers WHERE account_id = $1 AND shipment_id = $2))`, e.acct, *pr.ShipmentID); c != 0 {
			t.Errorf("a request without initial_custom_fields wrote %d values", c)
		}
	}
}
