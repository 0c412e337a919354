package executor

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// TestStr checks fastWriter.str against graphql.MarshalString, which the
// fast path's answers must equal byte for byte: strings with every byte
// value at every position of an eight-byte block (str's plain8 skips
// blocks), and random strings of the bytes that matter.
func TestStr(t *testing.T) {
	check := func(s string) {
		t.Helper()
		var f fastWriter
		f.str(s)
		var want bytes.Buffer
		graphql.MarshalString(s).MarshalGQL(&want)
		if !bytes.Equal(f.w.b, want.Bytes()) {
			t.Fatalf("str(%q) = %s, want %s", s, f.w.b, want.Bytes())
		}
	}
	for c := range 256 {
		for n := 1; n <= 17; n++ {
			for at := range n {
				b := bytes.Repeat([]byte{'a'}, n)
				b[at] = byte(c)
				check(string(b))
				b = bytes.Repeat([]byte{0xe9}, n) // bytes above 0x7f around it
				b[at] = byte(c)
				check(string(b))
			}
		}
	}
	alphabet := []byte{0, 0x1f, 0x20, 0x21, '"', 0x23, '\\', 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff, 'a', '\n', '\t', '\r'}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		check(string(b))
	}
	check("")
}
