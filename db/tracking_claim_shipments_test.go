package db_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"shipgraph/db"
)

// ApplyPolls finds or creates each poll's shipment and writes its
// milestones in the same statement (UpdateShipments after it when they move
// its port of discharge or ETA): two polls of one new shipment make
// one, inserted once with their merged milestones (the later poll's known
// values over the earlier one's) and logged as one INSERT, no UPDATE; a
// poll of a shipment it has gets its milestones (and the searched port
// name); the same polls again write nothing.
func TestClaimShipments(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	acct := f.A.Account
	req := func(typ, number string, shipment any) string {
		return f.id(t, `INSERT INTO tracking_requests (account_id, request_type, request_number, scac, next_poll_at, shipment_id)
			VALUES ($1, $2, $3, 'MAEU', now(), $4) RETURNING id`, acct, typ, number, shipment)
	}
	bol := req("bill_of_lading", "MAEU9000001", nil)
	box := req("container", "MSCU1234566", nil)
	had := req("bill_of_lading", "MAEU0007", f.A.Shipments[1])
	la, oak, term, vessel := "USLAX", "USOAK", "Z985", "EVER GIVEN"
	eta1 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	eta2 := eta1.Add(48 * time.Hour)
	polls := []db.PollWrite{
		{RequestID: bol, Status: "created",
			Shipment: &db.PolledShipment{BillOfLadingNumber: "MAEU9000001", PodLocode: &la, PodEtaAt: &eta1, VesselName: &vessel}},
		{RequestID: box, Status: "created",
			Shipment: &db.PolledShipment{BillOfLadingNumber: "maeu9000001", PolLocode: &oak, PodEtaAt: &eta2}},
		{RequestID: had, Status: "created",
			Shipment: &db.PolledShipment{BillOfLadingNumber: "MAEU0007", PodLocode: &oak, PodFacility: &term}},
	}
	// claim applies the polls as the engine does: a shipment whose port
	// of discharge or ETA moves gets its milestones by UpdateShipments.
	claim := func() map[string]string {
		t.Helper()
		got := map[string]string{}
		if err := f.DB.InTrackingTx(ctx, acct, func(tx *db.TrackingTx) error {
			out, err := tx.ApplyPolls([]string{"pending", "awaiting_manifest", "created"}, polls)
			if err != nil {
				return err
			}
			var moved []db.ShipmentUpdate
			for _, p := range polls {
				a := out[p.RequestID]
				if a.ShipmentID == nil {
					continue
				}
				got[p.RequestID] = *a.ShipmentID
				if a.Moved {
					moved = append(moved, db.ShipmentUpdate{ShipmentID: *a.ShipmentID, RequestID: p.RequestID, PolledShipment: *p.Shipment})
				}
			}
			return tx.UpdateShipments(moved)
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	logged := func() int {
		var n int
		if err := f.SQL.QueryRow(`SELECT count(*) FROM change_log WHERE account_id = $1 AND record_type = 'shipment'`, acct).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := logged()
	got := claim()
	if len(got) != 3 || got[bol] == "" || got[box] != got[bol] || got[had] != f.A.Shipments[1] {
		t.Fatalf("claimed %v; want one new shipment for %s and %s, %s for %s", got, bol, box, f.A.Shipments[1], had)
	}
	var n int
	if err := f.SQL.QueryRow(`SELECT count(*) FROM shipments WHERE account_id = $1 AND upper(normalized_number) = 'MAEU9000001'`, acct).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d shipments of the number (%v), want 1", n, err)
	}
	var pod, pol, vname, ops string
	var eta, orig time.Time
	if err := f.SQL.QueryRow(`SELECT s.port_of_discharge_id, s.port_of_lading_id, s.pod_vessel_name, s.pod_eta_at, s.pod_original_eta_at,
			(SELECT string_agg(op, ',' ORDER BY pos) FROM change_log c WHERE c.account_id = s.account_id AND c.record_id = s.id)
		FROM shipments s WHERE s.account_id = $1 AND s.id = $2`, acct, got[bol]).Scan(&pod, &pol, &vname, &eta, &orig, &ops); err != nil {
		t.Fatal(err)
	}
	if pod != f.PortLA || pol != f.PortOK || vname != vessel || !eta.Equal(eta2) || !orig.Equal(eta2) {
		t.Errorf("new shipment: pod %s pol %s vessel %q eta %v original %v; want %s %s %q %v %v",
			pod, pol, vname, eta, orig, f.PortLA, f.PortOK, vessel, eta2, eta2)
	}
	if ops != "INSERT" {
		t.Errorf("new shipment logged as %q, want one INSERT", ops)
	}
	var termID, doc string
	if err := f.SQL.QueryRow(`SELECT pod_terminal_id, search_doc FROM shipments WHERE account_id = $1 AND id = $2`,
		acct, f.A.Shipments[1]).Scan(&termID, &doc); err != nil {
		t.Fatal(err)
	}
	if termID != f.TermOK || doc == "" || !slices.Contains(strings.Fields(doc), "oakland") {
		t.Errorf("claimed shipment: terminal %s, search_doc %q; want %s and the port's name", termID, doc, f.TermOK)
	}
	mid := logged()
	if mid != before+2 {
		t.Errorf("%d shipment changes logged, want 2 (an insert, an update)", mid-before)
	}
	if again := claim(); again[bol] != got[bol] || again[had] != got[had] {
		t.Fatalf("claimed again %v, want %v", again, got)
	}
	if after := logged(); after != mid {
		t.Errorf("the same polls again logged %d shipment changes, want none", after-mid)
	}
}
