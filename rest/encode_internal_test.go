package rest

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"shipgraph/model"
	"shipgraph/rest/jsonapi"
)

// The hand-written writers of encode.go must write what encoding/json
// writes for the same values, byte for byte: these tests fill every
// attribute struct with random values (nulls, empty and nil lists, strings
// that need escaping, times in other zones, floats at the exponent bounds)
// and compare. A writer that drifts from its struct (a renamed, added,
// moved or retagged member) fails here. rest_test's
// TestAttributeWritersOnSeededData compares whole responses over the
// seeded database.

// reference is what encoding/json writes for v with HTML escaping off.
func referenceJSON(t *testing.T, v any) ([]byte, error) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

var oddStrings = []string{
	"", "plain", `quo"te`, `back\slash`, "<b>&amp;</b>", "tab\tnl\ncr\rbs\bff\f",
	"\x00\x01\x1f\x7f", "é ü 日本語", "\u2028line\u2029para", "bad \xff\xfe utf-8", "cut \xc3",
	"emoji 😀", "\ufffd", "a/b", "'single'",
}

var oddFloats = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.1, 123.456, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 1.5e21,
	-2.5e-9, math.MaxFloat64, math.SmallestNonzeroFloat64, 42000, 12345678.9,
}

var zones = []*time.Location{
	time.UTC, time.FixedZone("IST", 5*3600+1800), time.FixedZone("", -8*3600), time.FixedZone("x", 59),
}

func randomTime(r *rand.Rand) time.Time {
	nanos := []int{0, 500_000_000, 123_456_789, 1, 100_000}[r.IntN(5)]
	year := []int{1, 1970, 2026, 2099, 9999}[r.IntN(5)]
	return time.Date(year, time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), nanos, zones[r.IntN(len(zones))])
}

// fill sets v to random values of its type.
func fill(r *rand.Rand, v reflect.Value) {
	switch {
	case v.Type() == reflect.TypeFor[timestamp]():
		v.Set(reflect.ValueOf(timestamp(randomTime(r))))
		return
	case v.Type() == reflect.TypeFor[model.JSON]():
		v.Set(reflect.ValueOf(model.JSON(`{"a": [1, "<x>"]}`)))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if r.IntN(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(r, p.Elem())
		v.Set(p)
	case reflect.String:
		v.SetString(oddStrings[r.IntN(len(oddStrings))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt([]int64{0, 1, -1, 40, 117594, math.MaxInt32, -math.MaxInt32}[r.IntN(7)])
	case reflect.Float64:
		v.SetFloat(oddFloats[r.IntN(len(oddFloats))])
	case reflect.Slice:
		switch n := r.IntN(4); n {
		case 0:
			v.SetZero()
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := range n - 1 {
				fill(r, s.Index(i))
			}
			v.Set(s)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i))
			}
		}
	case reflect.Interface:
		v.Set(reflect.ValueOf(oddStrings[r.IntN(len(oddStrings))]))
	default:
		panic("fill: " + v.Type().String())
	}
}

// writers are the attribute structs of resourceSchemas with a writer.
func writers(t *testing.T) []reflect.Type {
	var out []reflect.Type
	for _, s := range resourceSchemas() {
		if _, ok := s.attrs.(jsonapi.AttributeWriter); ok {
			out = append(out, reflect.TypeOf(s.attrs))
		}
	}
	if len(out) < 6 {
		t.Fatalf("only %d attribute writers", len(out))
	}
	return out
}

func TestAttributeWritersMatchEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 42))
	for _, typ := range writers(t) {
		t.Run(typ.Name(), func(t *testing.T) {
			for i := range 2000 {
				v := reflect.New(typ).Elem()
				if i > 0 { // the first is the zero value
					fill(r, v)
				}
				av := v.Interface()
				want, wantErr := referenceJSON(t, av)
				e := &jsonapi.Encoder{}
				e.B = append(e.B, '{')
				av.(jsonapi.AttributeWriter).WriteAttributes(&jsonapi.Attrs{E: e})
				e.B = append(e.B, '}')
				if (e.Err() != nil) != (wantErr != nil) {
					t.Fatalf("error %v, encoding/json %v", e.Err(), wantErr)
				}
				if wantErr == nil && !bytes.Equal(e.B, want) {
					t.Fatalf("writer:\n%s\nencoding/json:\n%s", e.B, want)
				}
			}
		})
	}
}

// A sparse fieldset through a writer writes what the reflection path
// (encoding/json over the members kept) writes, and leaves attributes out
// when none is kept.
func TestAttributeWritersSparse(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for _, typ := range writers(t) {
		names := jsonapi.AttributeNames(typ)
		for range 500 {
			v := reflect.New(typ).Elem()
			fill(r, v)
			keep := map[string]bool{}
			for _, n := range names {
				if r.IntN(4) == 0 {
					keep[n] = true
				}
			}
			if r.IntN(5) == 0 {
				keep["not_a_member"] = true
			}
			encode := func(reflected bool) []byte {
				SetReflectAttributes(reflected)
				defer SetReflectAttributes(false)
				res := &Resource{ID: "1", Type: "t", Attributes: v.Interface()}
				res.Sparse(keep)
				b, err := (&Document{Data: res}).AppendJSON(nil)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			if g, w := encode(false), encode(true); !bytes.Equal(g, w) {
				t.Fatalf("%s keeping %v:\nwriter:     %s\nreflection: %s", typ.Name(), keep, g, w)
			}
		}
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range oddStrings {
		checkString(t, s)
	}
	// Every byte at every position of strings long enough for the
	// eight-byte scan, and of its tail.
	for c := range 256 {
		for n := 1; n <= 20; n++ {
			for pos := range n {
				s := []byte(strings.Repeat("x", n))
				s[pos] = byte(c)
				checkString(t, string(s))
			}
		}
	}
	for _, r := range []rune{'é', '\u2028', '\u2029', '😀', utf8.RuneError} {
		for pos := range 17 {
			checkString(t, strings.Repeat("y", pos)+string(r)+strings.Repeat("z", 9))
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s)
	}
	f.Fuzz(checkString)
}

func checkString(t *testing.T, s string) {
	want, err := referenceJSON(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonapi.AppendString(nil, s); !bytes.Equal(got, want) {
		t.Fatalf("AppendString(%q) = %s, encoding/json %s", s, got, want)
	}
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	floats := append([]float64(nil), oddFloats...)
	for range 10000 {
		floats = append(floats, math.Float64frombits(r.Uint64()))
	}
	for _, f := range floats {
		want, wantErr := referenceJSON(t, f)
		e := &jsonapi.Encoder{}
		got := e.AppendFloat(nil, f)
		if (e.Err() != nil) != (wantErr != nil) {
			t.Fatalf("%v: error %v, encoding/json %v", f, e.Err(), wantErr)
		}
		if wantErr == nil && !bytes.Equal(got, want) {
			t.Fatalf("AppendFloat(%v) = %s, encoding/json %s", f, got, want)
		}
	}
}

// A document's links and meta are what encoding/json writes for them.
func TestLinksAndMetaMatchEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for range 500 {
		var l jsonapi.Links
		fill(r, reflect.ValueOf(&l).Elem())
		m := jsonapi.Meta{Size: r.IntN(101), Total: r.IntN(1 << 30)}
		want, _ := referenceJSON(t, struct {
			Data  any            `json:"data"`
			Links *jsonapi.Links `json:"links"`
			Meta  *jsonapi.Meta  `json:"meta"`
		}{nil, &l, &m})
		got, err := (&Document{Links: &l, Meta: &m}).AppendJSON(nil)
		if err != nil || !bytes.Equal(bytes.TrimSuffix(got, []byte("\n")), want) {
			t.Fatalf("document %s (%v), encoding/json %s", got, err, want)
		}
	}
}
