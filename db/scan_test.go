package db_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lib/pq"

	"shipgraph/db"
	"shipgraph/db/seed"
	"shipgraph/model"
	"shipgraph/testkit/pg"
)

// The row plans of scan.go read every model type exactly as sqlx reads it:
// over the seeded data (NULLs, empty and filled arrays, jsonb, enums,
// numbers), with the whole column list and with every column alone.
func TestRowPlansMatchSqlx(t *testing.T) {
	d := openDB(t)
	ctx := context.Background()
	if _, _, err := seed.Run(ctx, d, seed.Options{Shipments: 60, Seed: 1, Now: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	from := map[string]string{
		"Account":                "accounts a",
		"User":                   "users u",
		"APIToken":               "api_tokens t",
		"Port":                   "ports p",
		"MetroArea":              "metro_areas m",
		"Terminal":               "terminals t",
		"RailTerminal":           "rail_terminals r",
		"ShippingLine":           "shipping_lines l",
		"Shipment":               "shipments s",
		"Container":              "containers c",
		"Document":               "documents d",
		"EmailSubmission":        "email_submissions e",
		"DocumentRepresentation": "document_representations r",
		"CustomFieldDefinition":  "custom_field_definitions d",
		"CustomFieldOption":      "custom_field_options o",
		"CustomField":            "custom_fields cf" + db.CustomFieldFrom,
	}
	// Custom fields are read per account, as the store reads them (on
	// Citus their option labels' subquery runs on one shard only).
	var acct string
	if err := d.SQL().QueryRowContext(ctx, `SELECT account_id FROM custom_fields ORDER BY account_id LIMIT 1`).Scan(&acct); err != nil {
		t.Fatal(err)
	}
	from["CustomField"] += " WHERE cf.account_id = " + pq.QuoteLiteral(acct)
	checks := map[string]func(t *testing.T, query string) int{
		"Account":                compareScans[model.Account](d),
		"User":                   compareScans[model.User](d),
		"APIToken":               compareScans[model.APIToken](d),
		"Port":                   compareScans[model.Port](d),
		"MetroArea":              compareScans[model.MetroArea](d),
		"Terminal":               compareScans[model.Terminal](d),
		"RailTerminal":           compareScans[model.RailTerminal](d),
		"ShippingLine":           compareScans[model.ShippingLine](d),
		"Shipment":               compareScans[model.Shipment](d),
		"Container":              compareScans[model.Container](d),
		"Document":               compareScans[model.Document](d),
		"EmailSubmission":        compareScans[model.EmailSubmission](d),
		"DocumentRepresentation": compareScans[model.DocumentRepresentation](d),
		"CustomFieldDefinition":  compareScans[model.CustomFieldDefinition](d),
		"CustomFieldOption":      compareScans[model.CustomFieldOption](d),
		"CustomField":            compareScans[model.CustomField](d),
	}
	for typ, cols := range db.Columns {
		check, ok := checks[typ]
		if !ok {
			t.Fatalf("no check for %s", typ)
		}
		t.Run(typ, func(t *testing.T) {
			// Both reads in one order: on Citus each shard answers in
			// its own order, and rows are compared by index.
			order := " ORDER BY " + strings.Fields(from[typ])[1] + ".id"
			if n := check(t, "SELECT "+cols+" FROM "+from[typ]+order); n == 0 {
				t.Fatalf("no %s rows", typ)
			}
			items := db.SelectItems(cols)
			for _, it := range items {
				check(t, "SELECT "+it+" FROM "+from[typ]+order+" LIMIT 50")
			}
		})
	}
}

func compareScans[R any](d *db.DB) func(t *testing.T, query string) int {
	return func(t *testing.T, query string) int {
		t.Helper()
		plans, viaSqlx, err := db.ScanBoth[R](context.Background(), d, query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if len(plans) != len(viaSqlx) {
			t.Fatalf("%s: %d rows, sqlx %d", query, len(plans), len(viaSqlx))
		}
		for i := range plans {
			if !reflect.DeepEqual(plans[i], viaSqlx[i]) {
				t.Fatalf("%s: row %d:\n plans %+v\n  sqlx %+v", query, i, plans[i], viaSqlx[i])
			}
		}
		return len(plans)
	}
}

// A column no field takes is an error, as with sqlx.
func TestRowPlansRefuseUnknownColumns(t *testing.T) {
	d := openDB(t)
	_, _, err := db.ScanBoth[model.Port](context.Background(), d, "SELECT 1 AS nothing")
	if err == nil || !strings.Contains(err.Error(), "missing destination name nothing") {
		t.Fatalf("err = %v", err)
	}
}

// The rows' text array reader gives what pq.StringArray gives, value and
// nil-ness, for the arrays it parses itself and those it hands over.
func TestScanStringArrayMatchesPQ(t *testing.T) {
	for _, src := range []any{
		nil, "{}", []byte("{}"), []byte("{a}"), []byte("{a,b,c}"),
		[]byte("{2f1b0c8e-6a1e-4c5e-9d1e-0a6b7c8d9e0f,0f1b0c8e-6a1e-4c5e-9d1e-0a6b7c8d9e0f}"),
		[]byte(`{"a b","c,d",e}`), []byte(`{"a\"b",x}`), []byte(`{"NULL"}`), []byte(`{NULL}`),
		[]byte(`{a,NULL}`), []byte(`{{a,b},{c,d}}`), []byte(`{a,,b}`), []byte(`{,}`), []byte(`{`),
		[]byte(`x`), []byte(`{"}"}`), []byte(`{a\,b}`), "{MSCU123,X-1}",
	} {
		var want, got pq.StringArray
		werr := want.Scan(src)
		gerr := db.ScanStringArray(&got, src)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%q: error %v, pq.StringArray: %v", src, gerr, werr)
			continue
		}
		if !reflect.DeepEqual(got, want) || (got == nil) != (want == nil) {
			t.Errorf("%q: %#v, pq.StringArray: %#v", src, got, want)
		}
	}
	// The elements do not share the driver's buffer.
	buf := []byte("{abc,def}")
	var a pq.StringArray
	if err := db.ScanStringArray(&a, buf); err != nil {
		t.Fatal(err)
	}
	copy(buf, "{xyz,uvw}")
	if a[0] != "abc" || a[1] != "def" {
		t.Errorf("elements changed with the buffer: %q", a)
	}
}

// aliasRow has the columns whose values arrive from lib/pq as []byte:
// uuids (binary format in a statement with parameters, text without) and
// text arrays (always text).
type aliasRow struct {
	N    int            `db:"n"`
	ID   string         `db:"id"`
	Ref  *string        `db:"ref"`
	Tags pq.StringArray `db:"tags"`
}

// Values read from rows keep their bytes when the driver reads the next
// rows into the buffer it reuses: every row is checked after the whole
// result was read, through the simple protocol (no parameters: uuids in
// text, in lib/pq's buffer) and the extended one, unprepared and prepared
// (uuids in binary).
func TestRowValuesOutliveTheDriverBuffer(t *testing.T) {
	d := openDB(t)
	ctx := context.Background()
	const q = `SELECT i AS n, md5(i::text)::uuid AS id,
		CASE WHEN mod(i, 3) = 0 THEN NULL ELSE md5((i + 1)::text)::uuid END AS ref,
		ARRAY[md5(i::text), 'T' || i] AS tags
		FROM generate_series(1, %s) i ORDER BY i`
	for name, read := range map[string]func() ([]aliasRow, error){
		"simple": func() ([]aliasRow, error) { return db.SelectRows[aliasRow](ctx, d, true, fmt.Sprintf(q, "300")) },
		"unprepared": func() ([]aliasRow, error) {
			return db.SelectRows[aliasRow](ctx, d, true, fmt.Sprintf(q, "$1::int"), 300)
		},
		"prepared": func() ([]aliasRow, error) {
			return db.SelectRows[aliasRow](ctx, d, false, fmt.Sprintf(q, "$1::int"), 300)
		},
	} {
		t.Run(name, func(t *testing.T) {
			rows, err := read()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 300 {
				t.Fatalf("%d rows", len(rows))
			}
			for _, r := range rows {
				i := r.N
				if want := uuidOf(fmt.Sprint(i)); r.ID != want {
					t.Fatalf("row %d: id %q, want %q", i, r.ID, want)
				}
				switch want := uuidOf(fmt.Sprint(i + 1)); {
				case i%3 == 0 && r.Ref != nil:
					t.Fatalf("row %d: ref %q, want NULL", i, *r.Ref)
				case i%3 != 0 && (r.Ref == nil || *r.Ref != want):
					t.Fatalf("row %d: ref %v, want %q", i, r.Ref, want)
				}
				if want := (pq.StringArray{md5hex(fmt.Sprint(i)), fmt.Sprint("T", i)}); !reflect.DeepEqual(r.Tags, want) {
					t.Fatalf("row %d: tags %q, want %q", i, r.Tags, want)
				}
			}
		})
	}
}

func md5hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// uuidOf is PostgreSQL's md5(s)::uuid.
func uuidOf(s string) string {
	h := md5hex(s)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// The pickers' lists with timestamps, text and uuids in text form read the
// same records as the plain column lists read by sqlx (over the seeded
// data: NULLs, fractional seconds, enums), and every time is UTC.
func TestTextFormColumnsReadAsPlainColumns(t *testing.T) {
	d := openDB(t)
	ctx := context.Background()
	if _, _, err := seed.Run(ctx, d, seed.Options{Shipments: 40, Seed: 3, Now: time.Date(2026, 3, 2, 0, 0, 0, 123456000, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	from := map[string]string{"Shipment": "shipments s", "Container": "containers c", "Document": "documents d"}
	checks := map[string]func(t *testing.T, textForm, plain string) int{
		"Shipment":  compareTextForm[model.Shipment](d),
		"Container": compareTextForm[model.Container](d),
		"Document":  compareTextForm[model.Document](d),
	}
	for typ, list := range db.TextFormCols {
		t.Run(typ, func(t *testing.T) {
			if !strings.Contains(list, "timestamptz_out(") || !strings.Contains(list, "textout(") {
				t.Fatalf("%s: no text form columns in %q", typ, list)
			}
			// Uuids come as they are: in text form lib/pq hands over
			// PostgreSQL's bytes for a uuid as for a cstring, and
			// uuid_out(col) only cost PostgreSQL (docs/scale.md, stop 42).
			if strings.Contains(list, "uuid_out(") {
				t.Fatalf("%s: a uuid through uuid_out in %q", typ, list)
			}
			order := " ORDER BY " + strings.Fields(from[typ])[1] + ".id"
			if n := checks[typ](t, "SELECT "+list+" FROM "+from[typ]+order, "SELECT "+db.Columns[typ]+" FROM "+from[typ]+order); n == 0 {
				t.Fatalf("no %s rows", typ)
			}
		})
	}
}

func compareTextForm[R any](d *db.DB) func(t *testing.T, textForm, plain string) int {
	return func(t *testing.T, textForm, plain string) int {
		t.Helper()
		got, err := db.ScanPlans[R](context.Background(), d, textForm)
		if err != nil {
			t.Fatalf("%s: %v", textForm, err)
		}
		_, want, err := db.ScanBoth[R](context.Background(), d, plain)
		if err != nil {
			t.Fatalf("%s: %v", plain, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d rows, plain %d", len(got), len(want))
		}
		for i := range got {
			// The location of a UTC time is lib/pq's session zone in the
			// plain read (UTC or Etc/UTC), time.UTC in the text form: the
			// encoded values compare instants and offsets.
			g, _ := json.Marshal(got[i])
			w, _ := json.Marshal(want[i])
			if string(g) != string(w) {
				t.Fatalf("row %d:\n text form %s\n     plain %s", i, g, w)
			}
		}
		return len(got)
	}
}

// parseTimestamp reads PostgreSQL's text form of a timestamptz as lib/pq's
// parser does: the same instant and offset, UTC as time.UTC.
func TestParseTimestampAsLibPQ(t *testing.T) {
	for _, s := range []string{
		"2026-11-30 00:53:31+00", "2026-11-30 00:53:31.1+00", "2026-11-30 00:53:31.123456+00",
		"2026-02-28 23:59:59.000001+00", "1999-01-01 00:00:00.5+00", "0001-01-01 00:00:00+00",
		"2026-11-30 05:53:31.25+05:30", "2026-11-30 00:53:31-08", "0044-03-15 12:00:00+00 BC",
		"12026-01-01 00:00:00+00",
	} {
		got, err := db.ParseTimestamp([]byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		want, err := pq.ParseTimestamp(time.UTC, s)
		if err != nil {
			t.Fatalf("%s: lib/pq: %v", s, err)
		}
		_, go_ := got.Zone()
		_, wo := want.Zone()
		if !got.Equal(want) || go_ != wo {
			t.Errorf("%s: %v, lib/pq %v", s, got, want)
		}
		if wo == 0 && got.Location() != time.UTC {
			t.Errorf("%s: location %v, want UTC", s, got.Location())
		}
	}
	for _, s := range []string{"infinity", "-infinity", "2026-13-01 00:00:00+00x", ""} {
		if got, err := db.ParseTimestamp([]byte(s)); err == nil {
			t.Errorf("%q: %v, want an error", s, got)
		}
	}
}

// processCPU is the process's user and system CPU time in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkRowReaderTextForm reads the same containers and shipments
// through the row reader in their plain columns and in the pickers' text
// form: the server's side of the decode (lib/pq and database/sql
// included), per row read.
func BenchmarkRowReaderTextForm(b *testing.B) {
	d := pg.New(b, 0).Store
	ctx := context.Background()
	if _, _, err := seed.Run(ctx, d, seed.Options{Shipments: 150, Seed: 3, Now: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		read func(list string) (int, error)
		typ  string
		from string
	}{
		{"containers", func(q string) (int, error) { r, err := db.ScanPlans[model.Container](ctx, d, q); return len(r), err }, "Container", " FROM containers c ORDER BY c.id LIMIT 300"},
		{"shipments", func(q string) (int, error) { r, err := db.ScanPlans[model.Shipment](ctx, d, q); return len(r), err }, "Shipment", " FROM shipments s ORDER BY s.id LIMIT 150"},
	} {
		for _, form := range []string{"plain", "text"} {
			list := db.Columns[c.typ]
			if form == "text" {
				list = db.TextFormCols[c.typ]
			}
			b.Run(c.name+"/"+form, func(b *testing.B) {
				rows := 0
				cpu0 := processCPU()
				for b.Loop() {
					n, err := c.read("SELECT " + list + c.from)
					if err != nil {
						b.Fatal(err)
					}
					rows += n
				}
				// The test process's CPU (not PostgreSQL's), which a loaded
				// machine stretches less than the elapsed time.
				b.ReportMetric(float64(processCPU()-cpu0)/float64(rows), "cpu-ns/row")
			})
		}
	}
}

// jsonb values are copied into a chunk the result's values share
// (slabs.bytes) instead of one allocation each: each read as
// model.JSON.Scan reads it (NULL as nil), and appending to one value
// copies it rather than writing over the next value in the chunk.
func TestJSONValuesShareAChunkSafely(t *testing.T) {
	d := openDB(t)
	ctx := context.Background()
	type row struct {
		Value model.JSON `db:"value"`
	}
	const query = `SELECT v::jsonb AS value FROM (VALUES (1, '{"a": 1}'), (2, '[2]'), (3, NULL), (4, '"x"')) t(n, v) ORDER BY n`
	raw, err := db.ScanPlans[row](ctx, d, query)
	if err != nil {
		t.Fatal(err)
	}
	plans, viaSqlx, err := db.ScanBoth[row](ctx, d, query) // the raw path and database/sql's agree
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(raw, viaSqlx) || !reflect.DeepEqual(plans, viaSqlx) {
		t.Fatalf("read %q and %q, model.JSON.Scan through sqlx %q", raw, plans, viaSqlx)
	}
	if raw[2].Value != nil {
		t.Fatalf("NULL read as %q, want nil", raw[2].Value)
	}
	for _, rows := range [][]row{raw, plans} {
		_ = append(rows[0].Value, "xxxxxxxx"...)
		if string(rows[1].Value) != "[2]" {
			t.Fatalf("appending to the first value changed the second: %q", rows[1].Value)
		}
	}
}
