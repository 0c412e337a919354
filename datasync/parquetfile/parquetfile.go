// Package parquetfile writes flat Parquet files whose pages are compressed
// with Zstandard, and nothing else: one data page (v1, PLAIN values,
// RLE definition levels) per column and row group, the footer in Thrift's
// compact protocol. It exists so that the binary links one codec: a
// general Parquet library links every codec the format names (brotli,
// lz4, gzip, snappy, zstd), which cost the server image megabytes.
//
// The data sync's tables need only flat schemas of optional strings,
// 64-bit integers and timestamps, and required integers and booleans;
// nothing here reads Parquet (the tests read the files back with a
// general reader and DuckDB).
package parquetfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Kind is a column's type.
type Kind int

const (
	// String is a UTF-8 BYTE_ARRAY (logical type STRING); values are string.
	String Kind = iota
	// Int64 is an INT64; values are int64.
	Int64
	// Timestamp is an INT64 of microseconds, logical type TIMESTAMP(MICROS)
	// not adjusted to UTC (a wall-clock time, as PostgreSQL's timestamp
	// without time zone); values are time.Time, written as their UTC wall
	// clock.
	Timestamp
	// TimestampUTC is the same, adjusted to UTC (an instant).
	TimestampUTC
	// Bool is a BOOLEAN; values are bool.
	Bool
)

// Column is one column of a flat schema.
type Column struct {
	Name     string
	Kind     Kind
	Optional bool // nil values allowed; a required column refuses nil
}

// Parquet's codes (parquet.thrift).
const (
	typeBoolean   = 0
	typeInt64     = 2
	typeByteArray = 6

	repRequired = 0
	repOptional = 1

	convertedUTF8            = 0
	convertedTimestampMicros = 10

	encodingPlain = 0
	encodingRLE   = 3

	codecZstd = 6

	pageData = 0
)

var magic = []byte("PAR1")

// physicalType is the Parquet type a column of kind k is stored as.
func physicalType(k Kind) int32 {
	switch k {
	case String:
		return typeByteArray
	case Bool:
		return typeBoolean
	default:
		return typeInt64
	}
}

// Writer writes one Parquet file to an io.Writer, one row group per
// WriteRowGroup call; memory holds one row group.
type Writer struct {
	out    io.Writer
	name   string
	cols   []Column
	off    int64
	rows   int64
	groups []rowGroup
	err    error
	closed bool
	// reused between row groups
	page, levels, packed []byte
}

type rowGroup struct {
	chunks     []chunk
	rows       int64
	offset     int64
	raw, store int64
}

type chunk struct {
	offset     int64 // of the page header
	values     int64 // rows, nulls included
	raw, store int64 // sizes with the page header: uncompressed, compressed
}

// NewWriter starts a file whose schema is named name and has cols.
func NewWriter(out io.Writer, name string, cols []Column) (*Writer, error) {
	if len(cols) == 0 {
		return nil, errors.New("parquetfile: a schema needs a column")
	}
	w := &Writer{out: out, name: name, cols: cols}
	w.write(magic)
	return w, w.err
}

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.out.Write(b)
	w.off += int64(n)
	w.err = err
}

// encoder is shared: EncodeAll may be called concurrently.
var encoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(4))
	if err != nil {
		panic(err) // only for invalid options
	}
	return e
})

// WriteRowGroup writes rows as one row group; each row has one value per
// column, in the columns' order, of the column's Go type or nil.
func (w *Writer) WriteRowGroup(rows [][]any) error {
	if w.closed {
		return errors.New("parquetfile: write after Close")
	}
	if w.err != nil {
		return w.err
	}
	if len(rows) == 0 {
		return nil
	}
	for i, r := range rows {
		if len(r) != len(w.cols) {
			return fmt.Errorf("parquetfile: row %d has %d values for %d columns", i, len(r), len(w.cols))
		}
	}
	g := rowGroup{rows: int64(len(rows)), offset: w.off}
	for j, c := range w.cols {
		body, err := w.encodeColumn(rows, j, c)
		if err != nil {
			return err
		}
		w.packed = encoder().EncodeAll(body, w.packed[:0])
		var h thrift
		h.i32(1, pageData)
		h.i32(2, int32(len(body)))
		h.i32(3, int32(len(w.packed)))
		h.begin(5)
		h.i32(1, int32(len(rows)))
		h.i32(2, encodingPlain)
		h.i32(3, encodingRLE)
		h.i32(4, encodingRLE)
		h.end()
		h.stop()
		ch := chunk{offset: w.off, values: int64(len(rows)),
			raw: int64(len(h.b) + len(body)), store: int64(len(h.b) + len(w.packed))}
		w.write(h.b)
		w.write(w.packed)
		if w.err != nil {
			return w.err
		}
		g.chunks = append(g.chunks, ch)
		g.raw += ch.raw
		g.store += ch.store
	}
	w.groups = append(w.groups, g)
	w.rows += g.rows
	return nil
}

// encodeColumn is column j's page body, uncompressed: the definition
// levels (optional columns) then the non-null values, PLAIN.
func (w *Writer) encodeColumn(rows [][]any, j int, c Column) ([]byte, error) {
	page := w.page[:0]
	if c.Optional {
		// RLE runs of the levels (1: a value, 0: null), after their length.
		levels := w.levels[:0]
		for i := 0; i < len(rows); {
			def := rows[i][j] != nil
			n := 1
			for i+n < len(rows) && (rows[i+n][j] != nil) == def {
				n++
			}
			levels = binary.AppendUvarint(levels, uint64(n)<<1)
			if def {
				levels = append(levels, 1)
			} else {
				levels = append(levels, 0)
			}
			i += n
		}
		w.levels = levels
		page = binary.LittleEndian.AppendUint32(page, uint32(len(levels)))
		page = append(page, levels...)
	}
	var bits byte
	nbits := 0
	for i, r := range rows {
		v := r[j]
		if v == nil {
			if !c.Optional {
				return nil, fmt.Errorf("parquetfile: row %d: column %s is required", i, c.Name)
			}
			continue
		}
		bad := func() error {
			return fmt.Errorf("parquetfile: row %d: column %s: %T is not its type", i, c.Name, v)
		}
		switch c.Kind {
		case String:
			s, ok := v.(string)
			if !ok {
				return nil, bad()
			}
			page = binary.LittleEndian.AppendUint32(page, uint32(len(s)))
			page = append(page, s...)
		case Int64:
			n, ok := v.(int64)
			if !ok {
				return nil, bad()
			}
			page = binary.LittleEndian.AppendUint64(page, uint64(n))
		case Timestamp, TimestampUTC:
			t, ok := v.(time.Time)
			if !ok {
				return nil, bad()
			}
			page = binary.LittleEndian.AppendUint64(page, uint64(t.UnixMicro()))
		case Bool:
			b, ok := v.(bool)
			if !ok {
				return nil, bad()
			}
			if b {
				bits |= 1 << nbits
			}
			if nbits++; nbits == 8 {
				page = append(page, bits)
				bits, nbits = 0, 0
			}
		default:
			return nil, fmt.Errorf("parquetfile: column %s: kind %d", c.Name, c.Kind)
		}
	}
	if nbits > 0 {
		page = append(page, bits)
	}
	w.page = page
	return page, nil
}

// Close writes the footer. It does not close the io.Writer.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	var t thrift
	t.i32(1, 1) // version
	// schema: the root, then the columns
	t.list(2, tStruct, len(w.cols)+1)
	t.elem()
	t.str(4, w.name)
	t.i32(5, int32(len(w.cols)))
	t.stop()
	t.pop()
	for _, c := range w.cols {
		t.elem()
		t.i32(1, physicalType(c.Kind))
		if c.Optional {
			t.i32(3, repOptional)
		} else {
			t.i32(3, repRequired)
		}
		t.str(4, c.Name)
		switch c.Kind {
		case String:
			t.i32(6, convertedUTF8)
			t.begin(10) // logicalType
			t.begin(1)  // STRING
			t.end()
			t.end()
		case Timestamp, TimestampUTC:
			if c.Kind == TimestampUTC {
				// the legacy annotation means an instant: only then
				t.i32(6, convertedTimestampMicros)
			}
			t.begin(10) // logicalType
			t.begin(8)  // TIMESTAMP
			t.boolean(1, c.Kind == TimestampUTC)
			t.begin(2) // unit
			t.begin(2) // MICROS
			t.end()
			t.end()
			t.end()
			t.end()
		}
		t.stop()
		t.pop()
	}
	t.i64(3, w.rows)
	t.list(4, tStruct, len(w.groups))
	for i, g := range w.groups {
		t.elem()
		t.list(1, tStruct, len(g.chunks))
		for j, ch := range g.chunks {
			c := w.cols[j]
			t.elem()
			t.i64(2, ch.offset)
			t.begin(3) // meta_data
			t.i32(1, physicalType(c.Kind))
			t.list(2, tI32, 2)
			t.b = appendZigzag(t.b, encodingPlain)
			t.b = appendZigzag(t.b, encodingRLE)
			t.list(3, tBinary, 1)
			t.b = binary.AppendUvarint(t.b, uint64(len(c.Name)))
			t.b = append(t.b, c.Name...)
			t.i32(4, codecZstd)
			t.i64(5, ch.values)
			t.i64(6, ch.raw)
			t.i64(7, ch.store)
			t.i64(9, ch.offset)
			t.end()
			t.stop()
			t.pop()
		}
		t.i64(2, g.raw)
		t.i64(3, g.rows)
		t.i64(5, g.offset)
		t.i64(6, g.store)
		t.i16(7, int16(i))
		t.stop()
		t.pop()
	}
	t.str(6, "shipgraph parquetfile")
	t.stop()
	w.write(t.b)
	w.write(binary.LittleEndian.AppendUint32(nil, uint32(len(t.b))))
	w.write(magic)
	return w.err
}

// Thrift compact protocol: the types of a field header.
const (
	tTrue   = 1
	tFalse  = 2
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tBinary = 8
	tList   = 9
	tStruct = 12
)

// thrift appends one struct in Thrift's compact protocol; fields must come
// in increasing id order within a struct (short-form headers).
type thrift struct {
	b     []byte
	last  int16   // the last field id of the struct being written
	outer []int16 // the enclosing structs' last ids
}

func appendZigzag(b []byte, v int64) []byte {
	return binary.AppendUvarint(b, uint64((v<<1)^(v>>63)))
}

func (t *thrift) field(id int16, typ byte) {
	if d := id - t.last; d > 0 && d <= 15 {
		t.b = append(t.b, byte(d)<<4|typ)
	} else {
		t.b = append(t.b, typ)
		t.b = appendZigzag(t.b, int64(id))
	}
	t.last = id
}

func (t *thrift) i16(id int16, v int16) { t.field(id, tI16); t.b = appendZigzag(t.b, int64(v)) }
func (t *thrift) i32(id int16, v int32) { t.field(id, tI32); t.b = appendZigzag(t.b, int64(v)) }
func (t *thrift) i64(id int16, v int64) { t.field(id, tI64); t.b = appendZigzag(t.b, v) }

func (t *thrift) str(id int16, s string) {
	t.field(id, tBinary)
	t.b = binary.AppendUvarint(t.b, uint64(len(s)))
	t.b = append(t.b, s...)
}

func (t *thrift) boolean(id int16, v bool) {
	if v {
		t.field(id, tTrue)
	} else {
		t.field(id, tFalse)
	}
}

// begin opens a struct field; end closes it.
func (t *thrift) begin(id int16) {
	t.field(id, tStruct)
	t.push()
}

func (t *thrift) end() {
	t.stop()
	t.pop()
}

func (t *thrift) push() {
	t.outer = append(t.outer, t.last)
	t.last = 0
}

func (t *thrift) pop() {
	t.last = t.outer[len(t.outer)-1]
	t.outer = t.outer[:len(t.outer)-1]
}

func (t *thrift) stop() { t.b = append(t.b, 0) }

// list opens a list field of n elements of type elem; struct elements
// each start with elem() and end with stop() and pop().
func (t *thrift) list(id int16, elem byte, n int) {
	t.field(id, tList)
	if n < 15 {
		t.b = append(t.b, byte(n)<<4|elem)
	} else {
		t.b = append(t.b, 0xf0|elem)
		t.b = binary.AppendUvarint(t.b, uint64(n))
	}
}

// elem starts a struct element of a list.
func (t *thrift) elem() { t.push() }
