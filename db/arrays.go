package db

import (
	"strconv"
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

// quotedLen is the length of s as a quoted array element.
func quotedLen[T string | []byte](s T) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			n++
		}
	}
	return n
}

// appendQuoted appends s as a quoted array element: "…" with each " and \
// escaped by a backslash.
func appendQuoted[T string | []byte](b []byte, s T) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', c)
			start = i + 1
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
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
