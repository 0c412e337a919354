package db_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"shipgraph/db"
	"shipgraph/db/seed"
	"shipgraph/model"
)

// A narrowed read's packed column (db/pack.go: the uuids, timestamps,
// numbers, booleans and codes of a row as one record's text) reads into
// the same values as the plain columns, on the raw path and on
// database/sql's: NULLs and empty strings apart, a value the record's
// text form quotes (a space, a comma, parentheses) or escapes (a quote, a
// backslash), a time with a fraction.
func TestPackedColumnsReadAsPlainColumns(t *testing.T) {
	d := openDB(t)
	ctx := context.Background()
	if _, _, err := seed.Run(ctx, d, seed.Options{Shipments: 40, Seed: 3, Now: time.Date(2026, 3, 2, 0, 0, 0, 123456000, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{
		// equipment_type 'open top' holds a space (quoted); NULL elsewhere.
		`UPDATE containers SET equipment_type = 'open top', pod_timezone = '', final_destination_timezone = 'a "b" \c, (d)'
		 WHERE id = (SELECT id FROM containers ORDER BY id LIMIT 1)`,
		`UPDATE containers SET equipment_type = NULL, pod_timezone = NULL, pod_rail_carrier_scac = '""'
		 WHERE id = (SELECT id FROM containers ORDER BY id LIMIT 1 OFFSET 1)`,
		`UPDATE shipments SET pod_timezone = '', destination_timezone = ')', pol_timezone = ','
		 WHERE id = (SELECT id FROM shipments ORDER BY id LIMIT 1)`,
	} {
		if _, err := d.SQL().ExecContext(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	var acct string
	if err := d.SQL().QueryRowContext(ctx, `SELECT account_id FROM custom_fields ORDER BY account_id LIMIT 1`).Scan(&acct); err != nil {
		t.Fatal(err)
	}
	from := map[string]string{"Shipment": "shipments s", "Container": "containers c", "Document": "documents d",
		"CustomField": "custom_fields cf" + db.CustomFieldFrom + " WHERE cf.account_id = " + pq.QuoteLiteral(acct)}
	checks := map[string]func(t *testing.T, packed, plain string){
		"Shipment":    comparePacked[model.Shipment](d),
		"Container":   comparePacked[model.Container](d),
		"Document":    comparePacked[model.Document](d),
		"CustomField": comparePacked[model.CustomField](d),
	}
	for typ, list := range db.PackedCols {
		t.Run(typ, func(t *testing.T) {
			if !strings.Contains(list, "record_out(ROW(") {
				t.Fatalf("%s: no packed column in %q", typ, list)
			}
			order := " ORDER BY " + strings.Fields(from[typ])[1] + ".id"
			checks[typ](t, "SELECT "+list+" FROM "+from[typ]+order, "SELECT "+db.Columns[typ]+" FROM "+from[typ]+order)
		})
	}
}

func comparePacked[R any](d *db.DB) func(t *testing.T, packed, plain string) {
	return func(t *testing.T, packed, plain string) {
		t.Helper()
		ctx := context.Background()
		raw, err := db.ScanPlans[R](ctx, d, packed)
		if err != nil {
			t.Fatalf("%s: %v", packed, err)
		}
		viaSQL, err := db.ScanPlansSQL[R](ctx, d, packed)
		if err != nil {
			t.Fatalf("%s: database/sql: %v", packed, err)
		}
		_, want, err := db.ScanBoth[R](ctx, d, plain)
		if err != nil {
			t.Fatalf("%s: %v", plain, err)
		}
		if len(raw) != len(want) || len(viaSQL) != len(want) || len(want) == 0 {
			t.Fatalf("%d and %d rows packed, %d plain", len(raw), len(viaSQL), len(want))
		}
		for i := range want {
			// Times compare by their encoding (instant and offset): the
			// plain read's UTC is lib/pq's session zone, the text's time.UTC.
			w, _ := json.Marshal(want[i])
			for path, got := range map[string]R{"raw": raw[i], "database/sql": viaSQL[i]} {
				if g, _ := json.Marshal(got); string(g) != string(w) {
					t.Fatalf("row %d, %s:\n packed %s\n  plain %s", i, path, g, w)
				}
			}
		}
	}
}

// A packed column's text form: quoted and escaped fields, NULLs, empty
// strings, and the malformed texts the reader refuses.
func TestPackedColumnText(t *testing.T) {
	type row struct {
		A string     `db:"a"`
		B *string    `db:"b"`
		C *time.Time `db:"c"`
		D bool       `db:"d"`
		E *int       `db:"e"`
		F *float64   `db:"f"`
	}
	names := []string{"a", "b", "c", "d", "e", "f"}
	str := func(s string) *string { return &s }
	at := time.Date(2026, 3, 2, 10, 0, 1, 250000000, time.UTC)
	n, f := 42, 1.5
	for _, c := range []struct {
		text string
		want row
	}{
		{`(x,y,"2026-03-02 10:00:01.25+00",t,42,1.5)`, row{A: "x", B: str("y"), C: &at, D: true, E: &n, F: &f}},
		{`("",,,f,,)`, row{A: ""}},
		{`(,"",,f,,)`, row{}}, // a NULL into a string field: refused below
		{`("a ""b"" \\c, (d)","\"\"",,f,,)`, row{A: `a "b" \c, (d)`, B: str(`""`)}},
		{`("a ""b"" \\\\c","""""",,f,,)`, row{A: `a "b" \\c`, B: str(`""`)}},
	} {
		got, err := db.ReadPacked[row](names, c.text)
		if c.text == `(,"",,f,,)` {
			if err == nil {
				t.Errorf("%s: read %+v, want an error (NULL into a string)", c.text, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.text, err)
			continue
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(c.want)
		if string(g) != string(w) {
			t.Errorf("%s: %s, want %s", c.text, g, w)
		}
	}
	for _, bad := range []string{``, `()`, `(x,y,,t,,)x`, `(x,y,,t,,,)`, `(x,y,,t,)`, `("x,y,,t,,)`, `(x,y,,maybe,,)`,
		`(x,y,notatime,t,,)`, `(x,y,,t,4x,)`} {
		if got, err := db.ReadPacked[row](names, bad); err == nil {
			t.Errorf("%q: read %+v, want an error", bad, got)
		}
	}
}
