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

// uuidForm accepts exactly the canonical 8-4-4-4-12 hex form, either case,
// and says when an id needs lower-casing: every one-byte change of valid
// ids (each position to every byte) is judged as a per-byte reading of the
// form judges it.
func TestUUIDForm(t *testing.T) {
	canonical := func(s string) (valid, upper bool) {
		if len(s) != 36 {
			return false, false
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch {
			case i == 8 || i == 13 || i == 18 || i == 23:
				if c != '-' {
					return false, false
				}
			case '0' <= c && c <= '9' || 'a' <= c && c <= 'f':
			case 'A' <= c && c <= 'F':
				upper = true
			default:
				return false, false
			}
		}
		return true, upper
	}
	for _, id := range []string{"0b6b8a8e-1c7e-4a43-9d2e-3f1f6c2b9a01", "0B6B8A8E-1C7E-4A43-9D2E-3F1F6C2B9A01", "", "-", "0b6b8a8e1c7e4a439d2e3f1f6c2b9a01"} {
		check := func(s string) {
			t.Helper()
			gotOK, gotUpper := uuidForm(s)
			wantOK, wantUpper := canonical(s)
			if gotOK != wantOK || gotUpper != wantUpper {
				t.Fatalf("uuidForm(%q) = %v, %v; want %v, %v", s, gotOK, gotUpper, wantOK, wantUpper)
			}
			if validUUID(s) != wantOK {
				t.Fatalf("validUUID(%q) = %v", s, !wantOK)
			}
		}
		check(id)
		for i := range len(id) {
			for c := range 256 {
				b := []byte(id)
				b[i] = byte(c)
				check(string(b))
			}
		}
	}
}
