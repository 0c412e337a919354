package db_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"reflect"
	"testing"

	"github.com/lib/pq"

	"shipgraph/db"
)

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
