package db

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Packed columns. lib/pq hands every column of a row to the row reader as
// a driver.Value: an interface holding the column's []byte, one
// allocation per column value (its convTslice), about half of a
// dashboard's allocations. The pickers' narrowed lists (columns.go) select
// the columns that never hold free text (uuids, timestamps, numbers,
// booleans, codes: packs) as the text form of one row value,
// record_out(ROW(a, b, c)): "(a,b,c)", which lib/pq hands over as one
// []byte: one box a row for those columns instead of one each. The
// row reader (scan.go) splits it here without allocating and stores each
// field with the decoder of its kind, as it stores a column's text.
//
// The record's text form keeps a NULL and an empty string apart (nothing
// between the commas, against ""), and quotes a field holding a space,
// a comma, a quote, a backslash or a parenthesis (doubling the quotes and
// backslashes inside): a timestamp is "2026-03-02 10:00:00+00".
//
// A packed column is named _pk<n>: n numbers the list of output names it
// holds (packNames), so a scan plan, made from the column names, knows the
// fields of each. Lists come from the pickers' selections, a few per
// type; past maxPacks no new list is numbered and a selection's columns
// are selected one by one as before.

const packPrefix = "_pk"

var packs struct {
	sync.RWMutex
	byKey map[string]int
	lists [][]string
}

const maxPacks = 1024

// packName returns the output name of a packed column holding names, and
// false when no more lists can be numbered.
func packName(names []string) (string, bool) {
	key := strings.Join(names, ",")
	packs.RLock()
	n, ok := packs.byKey[key]
	packs.RUnlock()
	if ok {
		return packPrefix + strconv.Itoa(n), true
	}
	packs.Lock()
	defer packs.Unlock()
	if n, ok := packs.byKey[key]; ok {
		return packPrefix + strconv.Itoa(n), true
	}
	if len(packs.lists) >= maxPacks {
		return "", false
	}
	if packs.byKey == nil {
		packs.byKey = map[string]int{}
	}
	n = len(packs.lists)
	packs.lists = append(packs.lists, append([]string(nil), names...))
	packs.byKey[key] = n
	return packPrefix + strconv.Itoa(n), true
}

// packNames returns the output names a packed column named column holds,
// or nil when column is not one.
func packNames(column string) []string {
	if !strings.HasPrefix(column, packPrefix) {
		return nil
	}
	n, err := strconv.Atoi(column[len(packPrefix):])
	if err != nil {
		return nil
	}
	packs.RLock()
	defer packs.RUnlock()
	if n < 0 || n >= len(packs.lists) {
		return nil
	}
	return packs.lists[n]
}

// packItem is the select item of a packed column holding the items'
// expressions under name: the row's text form as a cstring
// (record_out), as the text form columns are selected (textForm), not
// a column of an anonymous record type, which Citus cannot read back
// from its workers.
func packItem(exprs []string, name string) string {
	return "record_out(ROW(" + strings.Join(exprs, ", ") + ")) AS " + name
}

// packable reports whether a field of kind k can be stored from a field of
// a packed column (storeText).
func packable(k scanKind) bool {
	switch k {
	case scanString, scanStringPtr, scanTime, scanTimePtr, scanBool, scanBoolPtr, scanInt, scanIntPtr,
		scanFloat, scanFloatPtr:
		return true
	}
	return false
}

// storePacked stores the fields of a packed column's value (a record's
// text form) into the subs' fields; d.p is the row's base.
func (d *colDest) storePacked(v any) error {
	b, ok := v.([]byte)
	if !ok {
		if s, isStr := v.(string); isStr {
			b = []byte(s)
		} else {
			return fmt.Errorf("db: packed column of %T", v)
		}
	}
	if len(b) < 2 || b[0] != '(' || b[len(b)-1] != ')' {
		return fmt.Errorf("db: packed column %q is not a record", b)
	}
	body := b[1 : len(b)-1]
	for i := range d.subs {
		s := &d.subs[i]
		if i > 0 {
			if len(body) == 0 || body[0] != ',' {
				return fmt.Errorf("db: packed column %q: %d fields, want %d", b, i, len(d.subs))
			}
			body = body[1:]
		}
		field, null, rest, err := d.recordField(body)
		if err != nil {
			return fmt.Errorf("db: packed column %q: %w", b, err)
		}
		body = rest
		s.p = unsafe.Add(d.p, s.col.offset)
		if err := s.storeText(field, null); err != nil {
			return err
		}
	}
	if len(body) != 0 {
		return fmt.Errorf("db: packed column %q: more than %d fields", b, len(d.subs))
	}
	return nil
}

// recordField reads the field at the start of b, a record's text form
// past its "(" or a ",": its bytes (unquoted: a slice of b, or of d's
// scratch when it held escapes), whether it is NULL (nothing), and the
// rest of b from the "," or the end.
func (d *colDest) recordField(b []byte) (field []byte, null bool, rest []byte, err error) {
	if len(b) == 0 || b[0] == ',' {
		return nil, true, b, nil
	}
	if b[0] != '"' {
		i := 0
		for i < len(b) && b[i] != ',' {
			i++
		}
		return b[:i], false, b[i:], nil
	}
	// Quoted: "" inside is a quote, \x is x.
	i := 1
	start := i
	escaped := false
	for ; i < len(b); i++ {
		c := b[i]
		if c == '\\' {
			escaped = true
			i++
			continue
		}
		if c == '"' {
			if i+1 < len(b) && b[i+1] == '"' {
				escaped = true
				i++
				continue
			}
			break
		}
	}
	if i >= len(b) {
		return nil, false, nil, fmt.Errorf("unterminated quote")
	}
	field, rest = b[start:i], b[i+1:]
	if !escaped {
		return field, false, rest, nil
	}
	d.scratch = d.scratch[:0]
	for j := 0; j < len(field); j++ {
		c := field[j]
		if c == '\\' || c == '"' && j+1 < len(field) && field[j+1] == '"' {
			j++
			c = field[j]
		}
		d.scratch = append(d.scratch, c)
	}
	return d.scratch, false, rest, nil
}

// storeText stores a field of a packed column (text form bytes, or NULL)
// into the field of its kind, as the column's own text would be stored:
// strings copied into the result's chunk, times by parseTimestamp.
func (d *colDest) storeText(b []byte, null bool) error {
	k := d.col.kind
	if null {
		switch k {
		case scanStringPtr, scanTimePtr, scanBoolPtr, scanIntPtr, scanFloatPtr:
			storeNilPtr(d)
			return nil
		}
		return fmt.Errorf("converting NULL to %s is unsupported", d.col.typ)
	}
	switch k {
	case scanString:
		*(*string)(d.p) = d.slabs.str(b)
	case scanStringPtr:
		*(**string)(d.p) = d.slabs.strings.new(d.slabs.str(b))
	case scanTime, scanTimePtr:
		t, err := parseTimestamp(b)
		if err != nil {
			return d.err(b, err)
		}
		if k == scanTime {
			*(*time.Time)(d.p) = t
		} else {
			*(**time.Time)(d.p) = d.slabs.times.new(t)
		}
	case scanBool, scanBoolPtr:
		if len(b) != 1 || b[0] != 't' && b[0] != 'f' {
			return d.err(b, fmt.Errorf("not a boolean: %q", b))
		}
		if k == scanBool {
			*(*bool)(d.p) = b[0] == 't'
		} else {
			*(**bool)(d.p) = d.slabs.bools.new(b[0] == 't')
		}
	case scanInt, scanIntPtr:
		v, err := strconv.ParseInt(unsafe.String(unsafe.SliceData(b), len(b)), 10, 64)
		if err != nil {
			return d.err(b, err)
		}
		d.storeInt(v)
	case scanFloat, scanFloatPtr:
		v, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(b), len(b)), 64)
		if err != nil {
			return d.err(b, err)
		}
		if k == scanFloat {
			*(*float64)(d.p) = v
		} else {
			*(**float64)(d.p) = d.slabs.floats.new(v)
		}
	default:
		return fmt.Errorf("db: a packed field of kind %d", k)
	}
	return nil
}
