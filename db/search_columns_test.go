package db_test

import (
	"testing"
)

// searchColumnsDrift counts the rows of the three searched tables whose
// stored search columns differ from the expression they are kept by
// (00018's, now written by a trigger), and the rows looked at.
const searchColumnsDrift = `
SELECT
    (SELECT count(*) FROM shipments WHERE (search_doc, search_tsv) IS DISTINCT FROM (
        shipgraph_search_doc(ARRAY[bill_of_lading_number, normalized_number, customer_name, port_of_lading_name,
            port_of_discharge_name, destination_name, pod_vessel_name] || coalesce(ref_numbers, '{}') || tags),
        to_tsvector('simple'::regconfig, shipgraph_search_doc(ARRAY[bill_of_lading_number, normalized_number,
            customer_name, port_of_lading_name, port_of_discharge_name, destination_name, pod_vessel_name]
            || coalesce(ref_numbers, '{}') || tags))))
  + (SELECT count(*) FROM containers WHERE (search_doc, search_tsv) IS DISTINCT FROM (
        shipgraph_search_doc(ARRAY[number, seal_number] || ref_numbers),
        to_tsvector('simple'::regconfig, shipgraph_search_doc(ARRAY[number, seal_number] || ref_numbers))))
  + (SELECT count(*) FROM tracking_requests WHERE (search_doc, search_tsv) IS DISTINCT FROM (
        shipgraph_search_doc(ARRAY[request_number] || ref_numbers || tags),
        to_tsvector('simple'::regconfig, shipgraph_search_doc(ARRAY[request_number] || ref_numbers || tags)))),
    (SELECT count(*) FROM shipments) + (SELECT count(*) FROM containers) + (SELECT count(*) FROM tracking_requests)`

// The search columns hold what their expression gives for every row:
// after inserts, after updates of each input column, after updates of
// other columns only (which leave them as they were), and after a writer
// sets them itself (the trigger writes them again).
func TestSearchColumnsKeptByTrigger(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	acct := f.A.Account
	f.exec(t, `INSERT INTO tracking_requests (account_id, request_type, request_number, scac, next_poll_at, ref_numbers, tags)
		VALUES ($1, 'bill_of_lading', 'MAEU1234567', 'MAEU', now(), '{Straße-9}', '{Müller}')`, acct)
	check := func(step string) {
		t.Helper()
		var drift, rows int
		if err := f.SQL.QueryRow(searchColumnsDrift).Scan(&drift, &rows); err != nil {
			t.Fatal(err)
		}
		if rows < nShipmentsA+2 || drift != 0 {
			t.Fatalf("%s: %d of %d rows differ from the search expression", step, drift, rows)
		}
	}
	check("insert")

	// Each input column alone, with text that folds (accents, case, marks).
	for _, set := range []string{
		`bill_of_lading_number = bill_of_lading_number || 'É'`,
		`normalized_number = lower(normalized_number)`,
		`customer_name = 'Sodor Steamworks Ünited'`,
		`port_of_lading_name = 'Köln-Hafen'`,
		`port_of_discharge_name = 'Long Beach'`,
		`destination_name = 'Chicago, IL'`,
		`pod_vessel_name = 'MÆRSK Øresund'`,
		`ref_numbers = '{PO-Ä1,NULL}'`,
		`ref_numbers = NULL`,
		`tags = '{Straße}'`,
	} {
		f.exec(t, `UPDATE shipments SET `+set+` WHERE account_id = $1`, acct)
		check("shipments: " + set)
	}
	for _, set := range []string{
		`number = number || 'x'`,
		`seal_number = 'SEÄL-1'`,
		`ref_numbers = '{Ref/Ω 7}'`,
	} {
		f.exec(t, `UPDATE containers SET `+set+` WHERE account_id = $1`, acct)
		check("containers: " + set)
	}
	for _, set := range []string{
		`request_number = 'MSCU7654321'`,
		`ref_numbers = '{}'`,
		`tags = '{Ñandú,hot}'`,
	} {
		f.exec(t, `UPDATE tracking_requests SET `+set+` WHERE account_id = $1`, acct)
		check("tracking_requests: " + set)
	}

	// Other columns only: the stored text stays (and stays right).
	var before string
	if err := f.SQL.QueryRow(`SELECT string_agg(search_doc, '|' ORDER BY id) FROM shipments WHERE account_id = $1`, acct).Scan(&before); err != nil {
		t.Fatal(err)
	}
	f.exec(t, `UPDATE shipments SET pod_eta_at = now(), updated_at = now() WHERE account_id = $1`, acct)
	f.exec(t, `UPDATE shipments SET customer_name = customer_name WHERE account_id = $1`, acct)
	f.exec(t, `UPDATE containers SET current_status = 'on_ship' WHERE account_id = $1`, acct)
	f.exec(t, `UPDATE tracking_requests SET next_poll_at = now() WHERE account_id = $1`, acct)
	check("other columns")
	var after string
	if err := f.SQL.QueryRow(`SELECT string_agg(search_doc, '|' ORDER BY id) FROM shipments WHERE account_id = $1`, acct).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("an update of other columns changed search_doc:\n%s\n%s", before, after)
	}

	// A writer cannot store other values.
	f.exec(t, `UPDATE shipments SET search_doc = 'stale', search_tsv = NULL WHERE account_id = $1`, acct)
	f.exec(t, `UPDATE containers SET search_doc = 'stale' WHERE account_id = $1`, acct)
	f.exec(t, `UPDATE tracking_requests SET search_tsv = to_tsvector('stale') WHERE account_id = $1`, acct)
	f.exec(t, `INSERT INTO containers (account_id, shipment_id, number, search_doc)
		SELECT account_id, id, 'ZZZU0000001', 'stale' FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 1`, acct)
	check("search columns written directly")
}
