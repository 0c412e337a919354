package db_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lib/pq"
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

// TestFoldFunctionsInPLpgSQL: the tokenizer and its two callers are
// PL/pgSQL functions (migration 00069: a SQL function that cannot be
// inlined ran the SQL function executor for every call) giving what
// 00018's and 00022's SQL bodies gave, whatever the search_path (a restore
// builds the indexes on them with an empty one).
func TestFoldFunctionsInPLpgSQL(t *testing.T) {
	t.Parallel()
	s := openDB(t).SQL()
	rows, err := s.Query(`SELECT p.proname, l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
		WHERE p.pronamespace = current_schema()::regnamespace
		  AND p.proname IN ('shipgraph_fold', 'shipgraph_search_doc', 'shipgraph_fold_all') ORDER BY p.proname`)
	if err != nil {
		t.Fatal(err)
	}
	var langs []string
	for rows.Next() {
		var name, lang string
		if err := rows.Scan(&name, &lang); err != nil {
			t.Fatal(err)
		}
		langs = append(langs, name+":"+lang)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(langs, " "),
		"shipgraph_fold:plpgsql shipgraph_fold_all:plpgsql shipgraph_search_doc:plpgsql"; got != want {
		t.Errorf("languages: %s; want %s", got, want)
	}
	// The SQL bodies before 00069, as expressions of the input.
	const fold = `btrim(regexp_replace(lower(public.unaccent('public.unaccent'::regdictionary, %s) COLLATE "und-x-icu"), '[^[:alnum:]]+', ' ', 'g'))`
	old := `SELECT count(*) FILTER (WHERE x.v IS DISTINCT FROM x.w), count(*) FROM (
		SELECT to_jsonb(%[1]s.shipgraph_fold(t)) AS v, to_jsonb(` + fmt.Sprintf(fold, "t") + `) AS w FROM unnest($1::text[]) AS t
		UNION ALL
		SELECT to_jsonb(%[1]s.shipgraph_search_doc(a)), to_jsonb(coalesce(` + fmt.Sprintf(fold, "array_to_string(a, ' ')") + `, ''))
		FROM unnest($2::text[]) AS j, LATERAL (SELECT nullif(j, '')::text[] AS a) a
		UNION ALL
		SELECT to_jsonb(%[1]s.shipgraph_fold_all(a)), to_jsonb(CASE WHEN a IS NOT NULL THEN
			ARRAY(SELECT ` + fmt.Sprintf(fold, "p") + ` FROM unnest(a) AS p WHERE p IS NOT NULL) END)
		FROM unnest($2::text[]) AS j, LATERAL (SELECT nullif(j, '')::text[] AS a) a) x`
	texts := pq.StringArray{"", " ", "MEDU1234567", "Müller", "Straße-9", "MÆRSK Øresund", "Köln-Hafen / DEHAM",
		"  PO-Ä1,,x  ", "ÇA ÉTÉ", "東京 港", "a\tb\nc", "--", "İstanbul"}
	arrays := []string{"{}", "{MEDU1234567}", `{Müller,NULL,"Straße-9"}`, `{NULL}`, `{"  ", "Köln-Hafen / DEHAM", İstanbul}`}
	var schema string
	if err := s.QueryRow(`SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"", "''"} {
		tx, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if path != "" {
			if _, err := tx.Exec(`SET LOCAL search_path = ` + path); err != nil {
				t.Fatal(err)
			}
		}
		var differ, n int
		q := strings.ReplaceAll(old, "%[1]s", pq.QuoteIdentifier(schema))
		if err := tx.QueryRow(q, texts, pq.Array(append(arrays, ""))).Scan(&differ, &n); err != nil {
			t.Fatalf("search_path %q: %v", path, err)
		}
		_ = tx.Rollback()
		if differ != 0 || n != len(texts)+2*(len(arrays)+1) {
			t.Errorf("search_path %q: %d of %d values differ from the SQL bodies'", path, differ, n)
		}
	}
}
