package jsonapi

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"shipgraph/model"
)

// The JSON writer of documents. It appends to a byte slice exactly what
// encoding/json writes with HTML escaping off, without reflection: a page
// of a hundred documents with their shipments and containers has some
// fifteen thousand attribute values, and encoding/json's reflection over
// the attribute structs was a quarter of the server's CPU on such a page.
// Attribute structs implement AttributeWriter with writers rest/ generates
// (tools/attrgen from the model's jsonapi tags, and rest's attrgen_test.go
// from the json tags of the few structs written there); rest's tests
// compare them with encoding/json byte for byte.

// Encoder appends one document to B; err is the first value that cannot
// be written (a NaN, say), as encoding/json would refuse it.
type Encoder struct {
	B   []byte
	err error

	// attrs writes the attributes of the current resource (here rather
	// than on the stack: the writers take it through an interface).
	attrs Attrs

	// fallback writes the values that have no writer of their own.
	fallback    *json.Encoder
	fallbackBuf bytes.Buffer
}

// Value appends v as encoding/json writes it (HTML escaping off).
func (e *Encoder) Value(v any) {
	if e.fallback == nil {
		e.fallback = json.NewEncoder(&e.fallbackBuf)
		e.fallback.SetEscapeHTML(false)
	}
	e.fallbackBuf.Reset()
	if err := e.fallback.Encode(v); err != nil {
		e.fail(err)
		return
	}
	out := e.fallbackBuf.Bytes()
	e.B = append(e.B, out[:len(out)-1]...) // Encode ends with a newline
}

// Err is the first value the encoder could not write (nil: none).
func (e *Encoder) Err() error { return e.err }

func (e *Encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// AttributeWriter is an attributes struct that writes itself: each member
// through the Attrs methods, in the struct's order and with its json names.
type AttributeWriter interface {
	WriteAttributes(a *Attrs)
}

// Attrs writes the members of one attributes object; keep, when non-nil,
// is the sparse fieldset: members it does not name are left out.
type Attrs struct {
	E    *Encoder
	keep map[string]bool
	n    int // members written
}

// Member writes the name of the next member and reports whether to write
// its value (false: the fieldset leaves it out).
func (a *Attrs) Member(name string) bool {
	if a.keep != nil && !a.keep[name] {
		return false
	}
	if a.n > 0 {
		a.E.B = append(a.E.B, ',')
	}
	a.n++
	// Member names are the writers' constants: plain ASCII.
	a.E.B = append(a.E.B, '"')
	a.E.B = append(a.E.B, name...)
	a.E.B = append(a.E.B, '"', ':')
	return true
}

// Null writes a null member value (after member).
func (a *Attrs) Null() { a.E.B = append(a.E.B, "null"...) }

// Object writes a nested object member value (after member): every member
// of w, whatever the fieldset (fields[…] names top-level members only).
func (a *Attrs) Object(w AttributeWriter) {
	o := Attrs{E: a.E}
	a.E.B = append(a.E.B, '{')
	w.WriteAttributes(&o)
	a.E.B = append(a.E.B, '}')
}

func (a *Attrs) Str(name, v string) {
	if a.Member(name) {
		a.E.B = AppendString(a.E.B, v)
	}
}

func (a *Attrs) Strp(name string, v *string) {
	if a.Member(name) {
		a.E.B = AppendStringp(a.E.B, v)
	}
}

// StrpOmit is strp for an omitempty member: nil is left out.
func (a *Attrs) StrpOmit(name string, v *string) {
	if v != nil {
		a.Strp(name, v)
	}
}

func (a *Attrs) Strs(name string, v []string) {
	if a.Member(name) {
		a.E.B = AppendStrings(a.E.B, v)
	}
}

func (a *Attrs) Time(name string, v Time) {
	if a.Member(name) {
		a.E.B = appendTime(a.E.B, v)
	}
}

func (a *Attrs) Timep(name string, v *Time) {
	if a.Member(name) {
		a.E.B = appendTimep(a.E.B, v)
	}
}

func (a *Attrs) Boolean(name string, v bool) {
	if a.Member(name) {
		a.E.B = strconv.AppendBool(a.E.B, v)
	}
}

func (a *Attrs) Boolp(name string, v *bool) {
	if a.Member(name) {
		if v == nil {
			a.E.B = append(a.E.B, "null"...)
		} else {
			a.E.B = strconv.AppendBool(a.E.B, *v)
		}
	}
}

func (a *Attrs) Integer(name string, v int) {
	if a.Member(name) {
		a.E.B = strconv.AppendInt(a.E.B, int64(v), 10)
	}
}

// JSON writes a JSON value as encoding/json does (compacted, checked).
func (a *Attrs) JSON(name string, v model.JSON) {
	if a.Member(name) {
		a.E.Value(v)
	}
}

func (a *Attrs) Intp(name string, v *int) {
	if a.Member(name) {
		if v == nil {
			a.E.B = append(a.E.B, "null"...)
		} else {
			a.E.B = strconv.AppendInt(a.E.B, int64(*v), 10)
		}
	}
}

func (a *Attrs) Int64p(name string, v *int64) {
	if a.Member(name) {
		if v == nil {
			a.E.B = append(a.E.B, "null"...)
		} else {
			a.E.B = strconv.AppendInt(a.E.B, *v, 10)
		}
	}
}

func (a *Attrs) Float64p(name string, v *float64) {
	if a.Member(name) {
		if v == nil {
			a.E.B = append(a.E.B, "null"...)
		} else {
			a.E.B = a.E.AppendFloat(a.E.B, *v)
		}
	}
}

// AppendString appends s as a JSON string, as encoding/json writes it with
// HTML escaping off: ", \ and control characters escaped (\b \f \n \r \t
// by name), invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	// Most strings (ids, links, codes) need no escaping: skip eight bytes
	// at a time while none of them does.
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if special(x) {
			break
		}
	}
	start := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// special reports whether any of the eight bytes of x is below 0x20, a
// quote, a backslash or not ASCII (the bit tricks of "Bit Twiddling
// Hacks": a byte below n, a zero byte after xor).
func special(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (x - 0x20*ones) &^ x
	quote := x ^ ('"' * ones)
	quote = (quote - ones) &^ quote
	backslash := x ^ ('\\' * ones)
	backslash = (backslash - ones) &^ backslash
	return (below|quote|backslash|x)&highs != 0
}

func AppendStringp(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return AppendString(b, *s)
}

// AppendStrings writes a string list; nil is null, as encoding/json has it.
func AppendStrings(b []byte, v []string) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, s)
	}
	return append(b, ']')
}

// appendTime writes what Time.MarshalText gives, quoted.
func appendTime(b []byte, t Time) []byte {
	b = append(b, '"')
	b = time.Time(t).UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

func appendTimep(b []byte, t *Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return appendTime(b, *t)
}

// AppendFloat writes f as encoding/json writes a float64: the shortest
// representation, in exponent form below 1e-6 and from 1e21; NaN and the
// infinities are an error.
func (e *Encoder) AppendFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		e.fail(&json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)})
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9, as encoding/json has it
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendLinks writes a links object; members without a link are left out.
func appendLinks(b []byte, l *Links) []byte {
	b = append(b, '{')
	n := 0
	add := func(name, v string) {
		if v == "" {
			return
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		b = AppendString(b, v)
	}
	add("self", l.Self)
	add("download", l.Download)
	add("first", l.First)
	add("prev", l.Prev)
	add("next", l.Next)
	add("last", l.Last)
	return append(b, '}')
}

func appendMeta(b []byte, m *Meta) []byte {
	b = append(b, `{"size":`...)
	b = strconv.AppendInt(b, int64(m.Size), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(m.Total), 10)
	return append(b, '}')
}
