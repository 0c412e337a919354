package db

import (
	"database/sql"
	"database/sql/driver"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"
)

// TestArrayLiterals: the tracking writes' array arguments are the text
// lib/pq's arrays send for the same values (so PostgreSQL parses what it
// parsed before), quotes, backslashes, braces, commas, NULL and the
// string "NULL" included.
func TestArrayLiterals(t *testing.T) {
	val := func(v driver.Valuer) string {
		t.Helper()
		x, err := v.Value()
		if err != nil {
			t.Fatal(err)
		}
		return x.(string)
	}
	strs := []string{"", "plain", `a "quoted" word`, `back\slash\`, `{"eventID": "x\"y", "n": [1, 2]}`, "NULL", "a,b}{", `""\\`, "é ü ✓"}
	if got, want := stringArray(strs), val(pq.StringArray(strs)); got != want {
		t.Errorf("stringArray: %s, lib/pq %s", got, want)
	}
	if got, want := bytesArray(len(strs), func(i int) []byte { return []byte(strs[i]) }), val(pq.StringArray(strs)); got != want {
		t.Errorf("bytesArray: %s, lib/pq %s", got, want)
	}
	ptrs := []*string{nil, &strs[2], &strs[3], nil, &strs[5], &strs[0]}
	nulls := make([]sql.NullString, len(ptrs))
	for i, p := range ptrs {
		if p != nil {
			nulls[i] = sql.NullString{String: *p, Valid: true}
		}
	}
	if got, want := textArray(len(ptrs), func(i int) *string { return ptrs[i] }), val(pq.Array(nulls)); got != want {
		t.Errorf("textArray: %s, lib/pq %s", got, want)
	}
	if got, want := stringArray(nil), val(pq.StringArray{}); got != want {
		t.Errorf("empty: %s, lib/pq %s", got, want)
	}
	at := time.Date(2026, 3, 1, 10, 4, 5, 120000000, time.FixedZone("x", 3600))
	whole := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	times := []*time.Time{&at, nil, &whole}
	formatted := make([]sql.NullString, len(times))
	for i, p := range times {
		if p != nil {
			formatted[i] = sql.NullString{String: p.UTC().Format(time.RFC3339Nano), Valid: true}
		}
	}
	if got, want := timeArray(len(times), func(i int) *time.Time { return times[i] }), val(pq.Array(formatted)); got != want {
		t.Errorf("timeArray: %s, lib/pq %s", got, want)
	}
	ints := []sql.NullInt64{{Int64: 40, Valid: true}, {}, {Int64: -3, Valid: true}}
	if got, want := intArray(len(ints), func(i int) (int64, bool) { return ints[i].Int64, ints[i].Valid }), val(pq.Array(ints)); got != want {
		t.Errorf("intArray: %s, lib/pq %s", got, want)
	}
	// Random strings of the bytes the quoting cares about, runs of them
	// included (appendQuoted copies the runs between them whole).
	rng := rand.New(rand.NewPCG(37, 1))
	for range 2000 {
		var b []byte
		for range rng.IntN(24) {
			b = append(b, `a"\\{},é `[rng.IntN(9)])
		}
		one := []string{string(b), strings.Repeat(string(b), 3)}
		if got, want := bytesArray(len(one), func(i int) []byte { return []byte(one[i]) }), val(pq.StringArray(one)); got != want {
			t.Fatalf("bytesArray(%q): %s, lib/pq %s", one, got, want)
		}
		if got, want := stringArray(one), val(pq.StringArray(one)); got != want {
			t.Fatalf("stringArray(%q): %s, lib/pq %s", one, got, want)
		}
	}
	bools := []bool{true, false, true}
	if got, want := boolArray(len(bools), func(i int) bool { return bools[i] }), val(pq.BoolArray(bools)); got != want {
		t.Errorf("boolArray: %s, lib/pq %s", got, want)
	}
}
