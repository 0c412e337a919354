package db_test

import (
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
