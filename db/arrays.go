package db

import (
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// The array arguments of the tracking writes (ApplyPolls, UpdateShipments)
// as PostgreSQL array literals, built in one buffer sized before it is
// written: the same text lib/pq's arrays send (pq.StringArray, pq.Array of
// sql.Null*, pq.BoolArray, pq.Int64Array; PostgreSQL parses exactly what it
// parsed before), without their per-element work (pq.Array's reflection
// and driver.Valuer call per element, an intermediate []string or
// []sql.NullString per column, the []byte copy of each element, and a
// buffer grown by appends: for a poll's raw-event payloads, JSON full of
// quotes to escape, that buffer was most of the Go process' allocations).
// Each literal is a string argument (a driver.Value as is): text format
// also under binary_parameters, where a []byte would be sent as binary.

// view is s's bytes as a string, without a copy (a []byte's header
// begins as a string's: its pointer, its length).
func view[T string | []byte](s T) string { return *(*string)(unsafe.Pointer(&s)) }

// quotedLen is the length of s as a quoted array element (the counts are
// vector searches: a poll's payloads are ~40 KB of JSON).
func quotedLen[T string | []byte](s T) int {
	v := view(s)
	return len(v) + 2 + strings.Count(v, `"`) + strings.Count(v, `\`)
}

// appendQuoted appends s as a quoted array element: "…" with each " and \
// escaped by a backslash. It copies the runs between them whole, found by
// IndexByte (JSON payloads have a quote every few bytes and a backslash
// seldom: the next backslash is looked for once, not at every quote).
func appendQuoted[T string | []byte](b []byte, s T) []byte {
	v := view(s)
	b = append(b, '"')
	bs := strings.IndexByte(v, '\\') // the next backslash in v; -1: none left
	for {
		q := strings.IndexByte(v, '"')
		if bs >= 0 && (q < 0 || bs < q) {
			q = bs
		}
		if q < 0 {
			break
		}
		b = append(b, v[:q]...)
		b = append(b, '\\', v[q])
		v = v[q+1:]
		switch {
		case bs == q:
			bs = strings.IndexByte(v, '\\')
		case bs > q:
			bs -= q + 1
		}
	}
	b = append(b, v...)
	return append(b, '"')
}

// textArgs gives the string arguments (the literals built here, the
// account's id) to lib/pq as []byte over the same bytes, without a copy:
// where parameters travel as text, lib/pq copies a string into a new
// []byte before it writes it into its message, and a []byte it writes as
// it is (the same bytes on the wire). Behind a pooler
// (binary_parameters) a []byte goes as binary: there they stay strings.
// A poll's literals are ~60 KB (its events' payloads), copied once less.
func (t *TrackingTx) textArgs(args []any) []any {
	if t.pooled {
		return args
	}
	for i, a := range args {
		if s, ok := a.(string); ok && s != "" {
			args[i] = unsafe.Slice(unsafe.StringData(s), len(s))
		}
	}
	return args
}

// literal makes the built buffer the argument without copying it (it is
// never written again).
func literal(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// quotedArray is the literal of n quoted elements, get's; ok false is
// NULL.
func quotedArray[T string | []byte](n int, get func(i int) (v T, ok bool)) string {
	size := 2 + max(n-1, 0)
	for i := 0; i < n; i++ {
		if v, ok := get(i); ok {
			size += quotedLen(v)
		} else {
			size += len("NULL")
		}
	}
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		if v, ok := get(i); ok {
			b = appendQuoted(b, v)
		} else {
			b = append(b, "NULL"...)
		}
	}
	return literal(append(b, '}'))
}

// textArray is the text[] (or uuid[], jsonb[]) literal of n elements,
// get's; a nil one is NULL.
func textArray(n int, get func(i int) *string) string {
	return quotedArray(n, func(i int) (string, bool) {
		if s := get(i); s != nil {
			return *s, true
		}
		return "", false
	})
}

// stringArray is the text[] literal of ss, no element NULL.
func stringArray(ss []string) string {
	return quotedArray(len(ss), func(i int) (string, bool) { return ss[i], true })
}

// bytesArray is the text[] (jsonb[]) literal of n elements, get's, none
// NULL: the raw events' payloads, without a string copy of each.
func bytesArray(n int, get func(i int) []byte) string {
	return quotedArray(n, func(i int) ([]byte, bool) { return get(i), true })
}

// tsLen is the longest UTC time in RFC 3339 with nanoseconds, quoted
// ("2006-01-02T15:04:05.999999999Z", a year of four digits).
const tsLen = len(`"2006-01-02T15:04:05.999999999Z"`)

// timeArray is the timestamptz[] literal of n elements, get's, each in UTC
// as RFC 3339 with nanoseconds, quoted; a nil one is NULL.
func timeArray(n int, get func(i int) *time.Time) string {
	b := make([]byte, 0, 2+n*(tsLen+1))
	b = append(b, '{')
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		if t := get(i); t == nil {
			b = append(b, "NULL"...)
		} else {
			b = append(b, '"')
			b = t.UTC().AppendFormat(b, time.RFC3339Nano)
			b = append(b, '"')
		}
	}
	return literal(append(b, '}'))
}

// intArray is the int[] literal of n elements, get's; ok false is NULL.
func intArray(n int, get func(i int) (v int64, ok bool)) string {
	b := make([]byte, 0, 2+n*4)
	b = append(b, '{')
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		if v, ok := get(i); ok {
			b = strconv.AppendInt(b, v, 10)
		} else {
			b = append(b, "NULL"...)
		}
	}
	return literal(append(b, '}'))
}

// boolArray is the bool[] literal of n elements, get's.
func boolArray(n int, get func(i int) bool) string {
	b := make([]byte, 0, 2+2*n)
	b = append(b, '{')
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		if get(i) {
			b = append(b, 't')
		} else {
			b = append(b, 'f')
		}
	}
	return literal(append(b, '}'))
}
