package db

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"shipgraph/model"
)

// Rows are read into db-tagged structs as sqlx reads them (a column maps
// to the field of its name: the db tag, else the lower-cased field name,
// embedded structs included; a column without a field is an error), but
// through a plan made once per struct type and column list: each column's
// field offset and how to store into it. sqlx walks the fields by
// reflection for every row and allocates a value for every pointer field,
// NULL or not, which was a third of the server's CPU on /v2 lists with
// includes (hundreds of rows of forty-odd columns). Fields of the common
// types (strings, times, booleans, numbers, of any named type, and
// pointers to them) are stored directly; any other type (sql.Scanner
// implementations such as pq.StringArray and jsonb columns) is handed to
// database/sql as sqlx hands it.

// scanPlan says how to store each column of a result into a struct.
type scanPlan struct {
	cols []scanCol
}

type scanCol struct {
	offset uintptr
	kind   scanKind
	typ    reflect.Type // the field's type, for scanOther
}

type scanKind uint8

const (
	scanOther     scanKind = iota // through database/sql, as sqlx does
	scanString                    // a string kind: *string to database/sql
	scanTime                      // time.Time: *time.Time to database/sql
	scanAny                       // an interface: *any to database/sql
	scanBool                      // bool
	scanInt                       // int, int64
	scanFloat                     // float64
	scanStringPtr                 // pointers to the kinds above: NULL is nil
	scanTimePtr
	scanBoolPtr
	scanIntPtr
	scanFloatPtr
	scanStrings  // pq.StringArray: one-dimensional text arrays parsed here
	scanUUID     // a string field read from bytes: a uuid or a text form column (see slabs.str)
	scanTimeText // a time.Time field read from a text form column (parseTimestamp)
	scanJSON     // model.JSON: its bytes copied into the result's chunk (slabs.bytes)
)

type planKey struct {
	t    reflect.Type
	cols string
}

// scanPlans caches plans. Column lists are bounded (the pickers' subsets)
// but sparse fieldsets can combine many; past maxScanPlans a plan is made
// for its read and not kept, as prepared statements are capped.
var scanPlans struct {
	sync.RWMutex
	m map[planKey]*scanPlan
}

const maxScanPlans = 2000

var timeType = reflect.TypeFor[time.Time]()

// planFor returns the plan of reading columns into t.
func planFor(t reflect.Type, columns []string) (*scanPlan, error) {
	key := planKey{t, strings.Join(columns, ",")}
	scanPlans.RLock()
	p, ok := scanPlans.m[key]
	scanPlans.RUnlock()
	if ok {
		return p, nil
	}
	fields := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous && f.Type.Kind() == reflect.Struct {
			continue
		}
		name := f.Tag.Get("db")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if _, dup := fields[name]; !dup { // the shallowest field wins
			fields[name] = f
		}
	}
	p = &scanPlan{cols: make([]scanCol, len(columns))}
	for i, c := range columns {
		f, ok := fields[c]
		if !ok {
			return nil, fmt.Errorf("missing destination name %s in %s", c, t)
		}
		offset, ok := fieldOffset(t, f.Index)
		if !ok {
			return nil, fmt.Errorf("db: field %s of %s is reached through a pointer", f.Name, t)
		}
		p.cols[i] = scanCol{offset: offset, kind: kindOf(f.Type), typ: f.Type}
	}
	scanPlans.Lock()
	if scanPlans.m == nil {
		scanPlans.m = map[planKey]*scanPlan{}
	}
	if len(scanPlans.m) < maxScanPlans {
		scanPlans.m[key] = p
	}
	scanPlans.Unlock()
	return p, nil
}

// fieldOffset is the offset of the field at index in t, when no pointer
// lies on the way.
func fieldOffset(t reflect.Type, index []int) (uintptr, bool) {
	var off uintptr
	for i, x := range index {
		if t.Kind() != reflect.Struct {
			return 0, false
		}
		f := t.Field(x)
		off += f.Offset
		t = f.Type
		if i < len(index)-1 && t.Kind() != reflect.Struct {
			return 0, false
		}
	}
	return off, true
}

var stringArrayType = reflect.TypeFor[pq.StringArray]()

var jsonType = reflect.TypeFor[model.JSON]()

func kindOf(t reflect.Type) scanKind {
	if t == stringArrayType {
		return scanStrings
	}
	if t == jsonType {
		return scanJSON
	}
	if reflect.PointerTo(t).Implements(scannerType) {
		return scanOther
	}
	switch {
	case t == timeType:
		return scanTime
	case t.Kind() == reflect.Pointer && t.Elem() == timeType:
		return scanTimePtr
	case t.Kind() == reflect.Pointer:
		if reflect.PointerTo(t.Elem()).Implements(scannerType) {
			return scanOther
		}
		switch t.Elem().Kind() {
		case reflect.String:
			return scanStringPtr
		case reflect.Bool:
			return scanBoolPtr
		case reflect.Int, reflect.Int64:
			return scanIntPtr
		case reflect.Float64:
			return scanFloatPtr
		}
		return scanOther
	}
	switch t.Kind() {
	case reflect.String:
		return scanString
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return scanAny
		}
	case reflect.Bool:
		return scanBool
	case reflect.Int, reflect.Int64:
		return scanInt
	case reflect.Float64:
		return scanFloat
	}
	return scanOther
}

var scannerType = reflect.TypeFor[sql.Scanner]()

// colDest stores one column of the current row into its field.
type colDest struct {
	col   *scanCol
	p     unsafe.Pointer // the field
	slabs *slabs
}

// slabs hand out the values the pointer fields of a result point to, a
// chunk at a time instead of one allocation each: the rows of a result
// live and die together (a request's records).
type slabs struct {
	strings slab[string]
	times   slab[time.Time]
	bools   slab[bool]
	floats  slab[float64]
	ints    slab[int]
	int64s  slab[int64]
	text    []byte   // the bytes of strings made from the driver's []byte values
	elemBuf []string // the elements of text arrays (elems)
}

// str returns a string of b's bytes. b may be lib/pq's reused row buffer
// (text-format values: uuids of a statement without parameters or sent
// with binary_parameters, arrays), so its bytes are always copied, into
// a chunk shared by the strings of the result instead of one allocation
// each: a uuid column's value arrives as []byte (binary or text format)
// and database/sql would allocate a string for it per row.
func (s *slabs) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(s.text)-len(s.text) < len(b) {
		s.text = make([]byte, 0, max(min(2*cap(s.text), 4096), 512, len(b)))
	}
	i := len(s.text)
	s.text = append(s.text, b...)
	return unsafe.String(&s.text[i], len(b))
}

// bytes returns a copy of b in the result's shared chunk (str's), as
// model.JSON.Scan copies a jsonb value (nil for none): one allocation per
// chunk instead of one per value (a dashboard's custom field values).
// Its capacity is its length, so appending to it copies it instead of
// writing over the next value.
func (s *slabs) bytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	if cap(s.text)-len(s.text) < len(b) {
		s.text = make([]byte, 0, max(min(2*cap(s.text), 4096), 512, len(b)))
	}
	i := len(s.text)
	s.text = append(s.text, b...)
	return s.text[i:len(s.text):len(s.text)]
}

type slab[T any] struct{ buf []T }

func (s *slab[T]) new(v T) *T {
	if len(s.buf) == cap(s.buf) {
		s.buf = make([]T, 0, min(max(2*cap(s.buf), 16), 256))
	}
	s.buf = append(s.buf, v)
	return &s.buf[len(s.buf)-1]
}

// Scan implements sql.Scanner for the kinds stored directly.
func (d *colDest) Scan(src any) error {
	switch d.col.kind {
	case scanBool, scanBoolPtr:
		if src == nil && d.col.kind == scanBoolPtr {
			*(**bool)(d.p) = nil
			return nil
		}
		v, err := toBool(src)
		if err != nil {
			return d.err(src, err)
		}
		if d.col.kind == scanBool {
			*(*bool)(d.p) = v
		} else {
			*(**bool)(d.p) = d.slabs.bools.new(v)
		}
	case scanInt, scanIntPtr:
		if src == nil && d.col.kind == scanIntPtr {
			storeNilPtr(d)
			return nil
		}
		v, err := toInt(src)
		if err != nil {
			return d.err(src, err)
		}
		d.storeInt(v)
	case scanFloat, scanFloatPtr:
		if src == nil && d.col.kind == scanFloatPtr {
			*(**float64)(d.p) = nil
			return nil
		}
		v, err := toFloat(src)
		if err != nil {
			return d.err(src, err)
		}
		if d.col.kind == scanFloat {
			*(*float64)(d.p) = v
		} else {
			*(**float64)(d.p) = d.slabs.floats.new(v)
		}
	case scanStringPtr:
		if src == nil {
			*(**string)(d.p) = nil
			return nil
		}
		s, err := d.asString(src)
		if err != nil {
			return err
		}
		*(**string)(d.p) = d.slabs.strings.new(s)
	case scanTimePtr:
		if src == nil {
			*(**time.Time)(d.p) = nil
			break
		}
		t, err := d.time(src)
		if err != nil {
			return err
		}
		*(**time.Time)(d.p) = d.slabs.times.new(t)
	case scanTimeText:
		t, err := d.time(src)
		if err != nil {
			return err
		}
		*(*time.Time)(d.p) = t
	case scanUUID:
		switch v := src.(type) {
		case []byte:
			*(*string)(d.p) = d.slabs.str(v)
		case string:
			*(*string)(d.p) = v
		default:
			return d.err(src, nil)
		}
	case scanStrings:
		return d.slabs.stringArray((*pq.StringArray)(d.p), src)
	case scanJSON:
		if b, ok := src.([]byte); ok {
			*(*model.JSON)(d.p) = d.slabs.bytes(b)
			return nil
		}
		return (*model.JSON)(d.p).Scan(src)
	default:
		return fmt.Errorf("db: colDest of kind %d", d.col.kind)
	}
	return nil
}

// asString is a non-NULL value as a string field takes it (bytes copied).
func (d *colDest) asString(src any) (string, error) {
	switch v := src.(type) {
	case string:
		return v, nil
	case []byte:
		return d.slabs.str(v), nil
	case time.Time:
		return v.Format(time.RFC3339Nano), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case bool:
		return strconv.FormatBool(v), nil
	}
	return "", d.err(src, nil)
}

// scanStringArray is pq.StringArray's Scan for the arrays rows carry
// (reference numbers, tags, the journey's event ids), with the string and
// the slice allocated for it alone.
func scanStringArray(a *pq.StringArray, src any) error { return new(slabs).stringArray(a, src) }

// stringArray is pq.StringArray's Scan for the arrays rows carry: a
// one-dimensional array of unquoted elements becomes substrings of one
// copy of its text, made in the result's shared chunk of bytes (s.str),
// in a slice carved from the result's chunk of strings, instead of a
// string per element and the parser's slices (three arrays of each
// container row, two of each shipment's). Anything else (quotes,
// escapes, NULL elements, nested arrays) goes to pq.StringArray, which
// also makes the errors.
func (s *slabs) stringArray(a *pq.StringArray, src any) error {
	var b []byte
	switch v := src.(type) {
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		return a.Scan(src)
	}
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return a.Scan(src)
	}
	body := b[1 : len(b)-1]
	if len(body) == 0 {
		*a = pq.StringArray{}
		return nil
	}
	n := 1
	for _, c := range body {
		if arraySpecial[c] {
			if c != ',' {
				return a.Scan(src)
			}
			n++
		}
	}
	text := s.str(body) // a copy: the driver's buffer is reused
	out := s.elems(n)
	for i := range out {
		j := strings.IndexByte(text, ',')
		e := text
		if j >= 0 {
			e, text = text[:j], text[j+1:]
		}
		if e == "" || e == "NULL" {
			return a.Scan(src)
		}
		out[i] = e
	}
	*a = out
	return nil
}

// arraySpecial marks the bytes of an array's text that stringArray does
// not read as part of an unquoted element: the separator, and what makes
// pq.StringArray's parser take over.
var arraySpecial = [256]bool{',': true, '"': true, '\\': true, '{': true, '}': true, ' ': true}

// elems returns n strings carved from a chunk shared by the arrays of the
// result; its capacity is n, so appending to one array copies it instead
// of writing over the next.
func (s *slabs) elems(n int) pq.StringArray {
	if cap(s.elemBuf)-len(s.elemBuf) < n {
		s.elemBuf = make([]string, 0, max(min(2*cap(s.elemBuf), 1024), 64, n))
	}
	i := len(s.elemBuf)
	s.elemBuf = s.elemBuf[:i+n]
	return pq.StringArray(s.elemBuf[i : i+n : i+n])
}

// parseTimestamp reads a timestamptz in PostgreSQL's text form (ISO
// DateStyle, which lib/pq sets for every session): the form of the
// pickers' timestamps (textForm). In UTC (the sessions' time zone here),
// "2006-01-02 15:04:05[.999999]+00" is read here without allocating, as
// time.UTC; anything else (another offset, BC, infinity) by lib/pq's
// parser, whose answer lib/pq would have given.
func parseTimestamp(b []byte) (time.Time, error) {
	if t, ok := parseUTCTimestamp(b); ok {
		return t, nil
	}
	switch string(b) {
	case "infinity", "-infinity":
		return time.Time{}, fmt.Errorf("pq: %s is not a time", b)
	}
	return pq.ParseTimestamp(time.UTC, string(b))
}

// parseUTCTimestamp is parseTimestamp's common case.
func parseUTCTimestamp(b []byte) (time.Time, bool) {
	const head = len("2006-01-02 15:04:05")
	n := len(b)
	if n < head+3 || string(b[n-3:]) != "+00" || b[4] != '-' || b[7] != '-' || b[10] != ' ' ||
		b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	num := func(s []byte) (int, bool) {
		v := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	year, ok1 := num(b[0:4])
	month, ok2 := num(b[5:7])
	day, ok3 := num(b[8:10])
	hour, ok4 := num(b[11:13])
	minute, ok5 := num(b[14:16])
	sec, ok6 := num(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 || day > 31 ||
		hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	nsec := 0
	if frac := b[head : n-3]; len(frac) > 0 {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return time.Time{}, false
		}
		f, ok := num(frac[1:])
		if !ok {
			return time.Time{}, false
		}
		for range 10 - len(frac) {
			f *= 10
		}
		nsec = f
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), true
}

// storeInt stores v into an int or int64 field, or a pointer to one.
func (d *colDest) storeInt(v int64) {
	t := d.col.typ
	if d.col.kind == scanIntPtr {
		t = t.Elem()
	}
	if t.Kind() == reflect.Int {
		if d.col.kind == scanInt {
			*(*int)(d.p) = int(v)
		} else {
			*(**int)(d.p) = d.slabs.ints.new(int(v))
		}
		return
	}
	if d.col.kind == scanInt {
		*(*int64)(d.p) = v
	} else {
		*(**int64)(d.p) = d.slabs.int64s.new(v)
	}
}

func storeNilPtr(d *colDest) { *(*unsafe.Pointer)(d.p) = nil }

// time is a non-NULL timestamp column's value: the driver's time.Time,
// or the bytes of its text form (parseTimestamp).
func (d *colDest) time(src any) (time.Time, error) {
	switch v := src.(type) {
	case time.Time:
		return v, nil
	case []byte:
		t, err := parseTimestamp(v)
		if err != nil {
			return time.Time{}, d.err(src, err)
		}
		return t, nil
	}
	return time.Time{}, d.err(src, nil)
}

func (d *colDest) err(src any, err error) error {
	if err != nil {
		return fmt.Errorf("converting %T to %s: %w", src, d.col.typ, err)
	}
	return fmt.Errorf("unsupported Scan, storing driver.Value type %T into type %s", src, d.col.typ)
}

func toBool(src any) (bool, error) {
	switch v := src.(type) {
	case bool:
		return v, nil
	case int64:
		if v == 0 || v == 1 {
			return v == 1, nil
		}
	case string:
		return strconv.ParseBool(v)
	case []byte:
		return strconv.ParseBool(string(v))
	}
	return false, fmt.Errorf("not a boolean: %v", src)
}

func toInt(src any) (int64, error) {
	switch v := src.(type) {
	case int64:
		return v, nil
	case string:
		return strconv.ParseInt(v, 10, 64)
	case []byte:
		return strconv.ParseInt(string(v), 10, 64)
	}
	return 0, fmt.Errorf("not an integer: %v", src)
}

func toFloat(src any) (float64, error) {
	switch v := src.(type) {
	case float64:
		return v, nil
	case int64:
		return float64(v), nil
	case string:
		return strconv.ParseFloat(v, 64)
	case []byte:
		return strconv.ParseFloat(string(v), 64)
	}
	return 0, fmt.Errorf("not a number: %v", src)
}

// rowReader reads the rows of one result into values of R.
type rowReader[R any] struct {
	rows  *sql.Rows
	plan  *scanPlan
	dests []any
	cols  []colDest
}

func newRowReader[R any](rows *sql.Rows) (*rowReader[R], error) {
	columns, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	plan, err := planFor(reflect.TypeFor[R](), columns)
	if err != nil {
		return nil, err
	}
	var types []*sql.ColumnType
	cols, err := newColDests(plan, func(i int) (string, error) {
		if types == nil {
			if types, err = rows.ColumnTypes(); err != nil {
				return "", err
			}
		}
		return types[i].DatabaseTypeName(), nil
	})
	if err != nil {
		return nil, err
	}
	return &rowReader[R]{rows: rows, plan: plan, dests: make([]any, len(columns)), cols: cols}, nil
}

// newColDests makes the destinations of plan's columns, sharing one set
// of slabs. String and time fields of uuid and text form (cstring)
// columns are made from the driver's bytes (scanUUID, scanTimeText);
// typeName gives a column's database type name.
func newColDests(plan *scanPlan, typeName func(i int) (string, error)) ([]colDest, error) {
	cols := make([]colDest, len(plan.cols))
	s := new(slabs)
	for i := range cols {
		cols[i].col = &plan.cols[i]
		cols[i].slabs = s
		kind := plan.cols[i].kind
		if kind != scanString && kind != scanTime {
			continue
		}
		name, err := typeName(i)
		if err != nil {
			return nil, err
		}
		c := plan.cols[i]
		switch {
		case kind == scanString && (name == "UUID" || name == "CSTRING"):
			c.kind = scanUUID
		case kind == scanTime && name == "CSTRING":
			c.kind = scanTimeText
		default:
			continue
		}
		cols[i].col = &c
	}
	return cols, nil
}

// scan reads the current row into v.
func (r *rowReader[R]) scan(v *R) error {
	base := unsafe.Pointer(v)
	for i := range r.cols {
		c := &r.cols[i]
		p := unsafe.Add(base, c.col.offset)
		switch c.col.kind {
		case scanString:
			r.dests[i] = (*string)(p)
		case scanTime:
			r.dests[i] = (*time.Time)(p)
		case scanAny:
			r.dests[i] = (*any)(p)
		case scanOther:
			r.dests[i] = reflect.NewAt(c.col.typ, p).Interface()
		default:
			c.p = p
			r.dests[i] = c
		}
	}
	return r.rows.Scan(r.dests...)
}

// isStruct reports whether R is read by the plans of this file (sqlx
// reads anything else: a single column into a scalar).
func isStruct[R any]() bool { return reflect.TypeFor[R]().Kind() == reflect.Struct }

// selectRows runs query and returns its rows as values of R, each passed
// through each (which may keep a copy; the value is reused).
func selectRows[R any](ctx context.Context, q sqlx.QueryerContext, each func(*R), query string, args ...any) error {
	ctx, sp := startStatement(ctx, query) // the span counts the rows (tracing.go)
	n, err := scanRows(ctx, q, each, false, query, args...)
	endStatement(sp, n, err)
	return err
}

// selectOwned is selectRows with each row read into a value of its own,
// which keep may retain: a read that keeps every row (selectAll, a page)
// allocates it once instead of reading it into a reused value and copying
// it (a container's row is some 800 bytes, mostly the zeros of columns
// not read).
func selectOwned[R any](ctx context.Context, q sqlx.QueryerContext, keep func(*R), query string, args ...any) error {
	ctx, sp := startStatement(ctx, query)
	n, err := scanRows(ctx, q, keep, true, query, args...)
	endStatement(sp, n, err)
	return err
}

// scanRows reads query's rows into values of R: a reused one, or with
// owned a new one per row.
func scanRows[R any](ctx context.Context, q sqlx.QueryerContext, each func(*R), owned bool, query string, args ...any) (int64, error) {
	// The raw path (raw.go) reads inside the statement's round of send,
	// so only where send cannot fall back to another server after rows
	// were handed to each: no replica routing.
	if c, ok := q.(counted); ok && (c.r == nil || !c.read || c.primary) && rawStorable(reflect.TypeFor[R]()) {
		return sendRead(c, ctx, query, args,
			func(rows driver.Rows) (int64, error) { return readDriverRows(rows, each, owned) },
			func(e sqlx.ExtContext, ctx context.Context, query string, args []any) (int64, error) {
				return scanSQLRows(ctx, e, each, owned, query, args...)
			})
	}
	return scanSQLRows(ctx, q, each, owned, query, args...)
}

// sendRead runs a read in send's round: on the raw path (raw.go) when the
// connection has one, its rows handed to raw as lib/pq's driver rows,
// else through sql (database/sql's path on the connection send chose).
func sendRead(c counted, ctx context.Context, query string, args []any, raw func(driver.Rows) (int64, error),
	sql func(e sqlx.ExtContext, ctx context.Context, query string, args []any) (int64, error)) (int64, error) {
	return send(c, ctx, query, args, func(e sqlx.ExtContext, ctx context.Context, query string, args []any) (int64, int64, error) {
		if p, ok := e.(*prepared); ok {
			var n int64
			err := p.queryRaw(ctx, query, args, func(rows driver.Rows) error {
				var err error
				n, err = raw(rows)
				return err
			})
			if !errors.Is(err, errNoRaw) {
				return n, n, err
			}
		}
		n, err := sql(e, ctx, query, args)
		return n, n, err
	})
}

// scanSQLRows reads query's rows through database/sql.
func scanSQLRows[R any](ctx context.Context, q sqlx.QueryerContext, each func(*R), owned bool, query string, args ...any) (int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return -1, err
	}
	defer rows.Close()
	rr, err := newRowReader[R](rows)
	if err != nil {
		return -1, err
	}
	var v, zero R
	p := &v
	var n int64
	for rows.Next() {
		if owned {
			p = new(R)
		} else {
			v = zero
		}
		if err := rr.scan(p); err != nil {
			return n, err
		}
		each(p)
		n++
	}
	return n, rows.Err()
}

// readDriverRows reads the rows of a driver's result into values of R,
// each passed through each (which may keep a copy; the value is reused):
// scanRows's raw path, storing each driver value as database/sql would
// (store).
func readDriverRows[R any](rows driver.Rows, each func(*R), owned bool) (int64, error) {
	columns := rows.Columns()
	plan, err := planFor(reflect.TypeFor[R](), columns)
	if err != nil {
		return -1, err
	}
	typeName := driverTypeNames(rows)
	cols, err := newColDests(plan, func(i int) (string, error) { return typeName(i), nil })
	if err != nil {
		return -1, err
	}
	dest := make([]driver.Value, len(columns))
	var v, zero R
	p := &v
	var n int64
	var own ownedRows[R]
	for {
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				return n, nil
			}
			return n, err
		}
		if owned {
			p = own.next()
		} else {
			v = zero
		}
		if err := storeRow(cols, unsafe.Pointer(p), dest, 0, columns); err != nil {
			return n, err
		}
		each(p)
		n++
	}
}

// storeRow stores the driver values row[at:at+len(cols)] (named names)
// into the fields of the value at base.
func storeRow(cols []colDest, base unsafe.Pointer, row []driver.Value, at int, names []string) error {
	for i := range cols {
		c := &cols[i]
		c.p = unsafe.Add(base, c.col.offset)
		if err := c.store(row[at+i]); err != nil {
			return fmt.Errorf("sql: Scan error on column index %d, name %q: %w", at+i, names[i], err)
		}
	}
	return nil
}

// driverTypeNames is the database type name of rows' columns by index,
// "" where the driver does not tell.
func driverTypeNames(rows driver.Rows) func(i int) string {
	tn, _ := rows.(driver.RowsColumnTypeDatabaseTypeName)
	return func(i int) string {
		if tn == nil {
			return ""
		}
		return tn.ColumnTypeDatabaseTypeName(i)
	}
}

// ownedRows hands out the values of an owned read's rows a chunk at a
// time, as slabs do for pointer fields: the rows of a result live and die
// together (a request's records; a cache's entries of one statement). A
// chunk is as many rows as were read before it, up to ownedChunk: a read
// of one row allocates one, and the zeroed tail of the last chunk (a
// container's row is some 800 bytes) is less than the rows read and
// than ownedChunk.
type ownedRows[R any] struct {
	buf  []R
	read int
}

const ownedChunk = 8

func (o *ownedRows[R]) next() *R {
	if len(o.buf) == 0 {
		o.buf = make([]R, min(max(o.read, 1), ownedChunk))
	}
	o.read++
	p := &o.buf[0]
	o.buf = o.buf[1:]
	return p
}

// rawTypes caches rawStorable's answers by struct type.
var rawTypes sync.Map

// rawStorable reports whether t is a struct whose every field the row
// reader can store from a driver value itself (store): the kinds it
// stores directly and sql.Scanner implementations. A struct with any
// other field is read through database/sql, which converts more.
func rawStorable(t reflect.Type) bool {
	if ok, known := rawTypes.Load(t); known {
		return ok.(bool)
	}
	ok := t.Kind() == reflect.Struct
	if ok {
		for _, f := range reflect.VisibleFields(t) {
			if !f.IsExported() || f.Anonymous && f.Type.Kind() == reflect.Struct || f.Tag.Get("db") == "-" {
				continue
			}
			if kindOf(f.Type) == scanOther && !reflect.PointerTo(f.Type).Implements(scannerType) {
				ok = false
				break
			}
		}
	}
	rawTypes.Store(t, ok)
	return ok
}

// store stores v, a driver value of the current row, into the column's
// field as database/sql's Scan would: strings, times and interfaces
// directly (bytes copied, as the driver reuses them), sql.Scanner
// implementations through their Scan, the other kinds as colDest.Scan.
func (d *colDest) store(v driver.Value) error {
	switch d.col.kind {
	case scanString:
		switch s := v.(type) {
		case string:
			*(*string)(d.p) = s
		case []byte:
			*(*string)(d.p) = d.slabs.str(s)
		case nil:
			return fmt.Errorf("converting NULL to %s is unsupported", d.col.typ)
		default:
			str, err := d.asString(v)
			if err != nil {
				return err
			}
			*(*string)(d.p) = str
		}
	case scanTime:
		t, ok := v.(time.Time)
		if !ok {
			return d.err(v, nil)
		}
		*(*time.Time)(d.p) = t
	case scanAny:
		if b, ok := v.([]byte); ok {
			v = bytes.Clone(b)
		}
		*(*any)(d.p) = v
	case scanOther:
		return reflect.NewAt(d.col.typ, d.p).Interface().(sql.Scanner).Scan(v)
	default:
		return d.Scan(v)
	}
	return nil
}
