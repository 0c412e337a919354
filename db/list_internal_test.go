package db

import (
	"testing"

	"github.com/lib/pq"
)

// A batch read's ids go as the array text pq.Array writes for them: valid
// UUIDs need no quotes, so the unquoted list is the same array.
func TestUUIDArrayIsPQArray(t *testing.T) {
	for _, ids := range [][]string{
		{},
		{"0b6b8a8e-1c7e-4a43-9d2e-3f1f6c2b9a01"},
		validUUIDs([]string{"0B6B8A8E-1C7E-4A43-9D2E-3F1F6C2B9A01", "not-a-uuid", "5f0c2d3e-8a9b-4c1d-b2e3-f4a5b6c7d8e9"}),
	} {
		got, err := uuidArray(ids).Value()
		if err != nil {
			t.Fatal(err)
		}
		var back pq.StringArray
		if err := back.Scan([]byte(got.(string))); err != nil {
			t.Fatalf("%q is no array: %v", got, err)
		}
		if len(back) != len(ids) {
			t.Fatalf("%q reads back as %q; want %q", got, back, ids)
		}
		for i := range ids {
			if back[i] != ids[i] {
				t.Fatalf("%q reads back as %q; want %q", got, back, ids)
			}
		}
	}
}
