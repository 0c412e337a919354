package db_test

import (
	"context"
	"encoding/json"
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
