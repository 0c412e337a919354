package parquetfile_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"shipgraph/datasync/parquetfile"
)

// TestReadBack writes a file of every kind of column, with nulls, several
// row groups and more than 15 columns (Thrift's long list header), and
// reads it back with a general Parquet reader (parquet-go, a test-only
// dependency): the schema's types and logical types, and every value.
func TestReadBack(t *testing.T) {
	cols := []parquetfile.Column{
		{Name: "id", Kind: parquetfile.String, Optional: true},
		{Name: "n", Kind: parquetfile.Int64, Optional: true},
		{Name: "at", Kind: parquetfile.Timestamp, Optional: true},
		{Name: "utc", Kind: parquetfile.TimestampUTC, Optional: true},
		{Name: "_position", Kind: parquetfile.Int64},
		{Name: "_deleted", Kind: parquetfile.Bool},
	}
	for i := range 12 {
		cols = append(cols, parquetfile.Column{Name: fmt.Sprintf("extra_%02d", i), Kind: parquetfile.String, Optional: true})
	}
	base := time.Date(2026, 11, 29, 15, 4, 5, 123456000, time.UTC)
	row := func(i int) []any {
		r := make([]any, len(cols))
		r[0] = fmt.Sprintf("key-%05d", i)
		if i%3 != 0 {
			r[1] = int64(i) - 500
		}
		if i%5 != 0 {
			r[2] = base.Add(time.Duration(i) * time.Minute)
		}
		if i%7 == 0 {
			r[3] = base
		}
		r[4] = int64(1000 + i)
		r[5] = i%4 == 0
		if i%2 == 0 {
			r[6] = "é, 漢字 and \x00"
		}
		return r
	}
	var buf bytes.Buffer
	w, err := parquetfile.NewWriter(&buf, "things", cols)
	if err != nil {
		t.Fatal(err)
	}
	const total = 2345
	for start := 0; start < total; start += 1000 {
		var rows [][]any
		for i := start; i < min(start+1000, total); i++ {
			rows = append(rows, row(i))
		}
		if err := w.WriteRowGroup(rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.NumRows(); got != total {
		t.Fatalf("rows %d, want %d", got, total)
	}
	if got := len(f.RowGroups()); got != 3 {
		t.Fatalf("row groups %d, want 3", got)
	}
	schema := f.Schema()
	if schema.Name() != "things" {
		t.Fatalf("schema name %q", schema.Name())
	}
	fields := schema.Fields()
	if len(fields) != len(cols) {
		t.Fatalf("%d fields, want %d", len(fields), len(cols))
	}
	for i, c := range cols {
		fl := fields[i]
		if fl.Name() != c.Name || fl.Optional() != c.Optional {
			t.Fatalf("field %d: %s optional=%v, want %s optional=%v", i, fl.Name(), fl.Optional(), c.Name, c.Optional)
		}
		lt := fl.Type().LogicalType()
		switch c.Kind {
		case parquetfile.String:
			if fl.Type().Kind() != parquet.ByteArray || lt == nil || lt.String() != "STRING" {
				t.Fatalf("%s: %v, want a STRING byte array", c.Name, fl.Type())
			}
		case parquetfile.Timestamp, parquetfile.TimestampUTC:
			want := fmt.Sprintf("TIMESTAMP(isAdjustedToUTC=%v,unit=MICROS)", c.Kind == parquetfile.TimestampUTC)
			if fl.Type().Kind() != parquet.Int64 || lt == nil || lt.String() != want {
				t.Fatalf("%s: %v (%v), want %s", c.Name, fl.Type(), lt, want)
			}
		case parquetfile.Int64:
			if fl.Type().Kind() != parquet.Int64 {
				t.Fatalf("%s: %v", c.Name, fl.Type())
			}
		case parquetfile.Bool:
			if fl.Type().Kind() != parquet.Boolean {
				t.Fatalf("%s: %v", c.Name, fl.Type())
			}
		}
	}

	r := parquet.NewReader(f)
	defer r.Close()
	got := make([]parquet.Row, 1)
	for i := range total {
		n, err := r.ReadRows(got)
		if n != 1 {
			t.Fatalf("row %d: %d rows read, %v", i, n, err)
		}
		want := row(i)
		for j, v := range got[0] {
			w := want[j]
			var gotv any
			if !v.IsNull() {
				switch cols[j].Kind {
				case parquetfile.String:
					gotv = string(v.ByteArray())
				case parquetfile.Int64:
					gotv = v.Int64()
				case parquetfile.Timestamp, parquetfile.TimestampUTC:
					gotv = time.UnixMicro(v.Int64()).UTC()
				case parquetfile.Bool:
					gotv = v.Boolean()
				}
			}
			if wt, ok := w.(time.Time); ok {
				if gt, ok := gotv.(time.Time); !ok || !gt.Equal(wt) {
					t.Fatalf("row %d column %s: %v, want %v", i, cols[j].Name, gotv, w)
				}
				continue
			}
			if gotv != w {
				t.Fatalf("row %d column %s: %#v, want %#v", i, cols[j].Name, gotv, w)
			}
		}
	}
}

// TestRefusesWrongValues: a value of another type, a null in a required
// column and a short row are errors, not a corrupt file.
func TestRefusesWrongValues(t *testing.T) {
	cols := []parquetfile.Column{{Name: "k", Kind: parquetfile.String, Optional: true}, {Name: "p", Kind: parquetfile.Int64}}
	for name, rows := range map[string][][]any{
		"wrong type":    {{"a", "1"}},
		"null required": {{"a", nil}},
		"short row":     {{"a"}},
	} {
		w, err := parquetfile.NewWriter(&bytes.Buffer{}, "t", cols)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRowGroup(rows); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
