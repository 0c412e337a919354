package tracking

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// jsonbSafeBytewise is jsonbSafe as it was, a byte at a time: the
// reference its string skipping is checked against.
func jsonbSafeBytewise(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	depth, num, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				if i+1 < len(b) && b[i+1] == 'u' {
					return false
				}
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString, num = true, 0
		case c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.':
			if num++; num > 64 {
				return false
			}
		case (c == 'e' || c == 'E') && num > 0:
			return false
		case c == '{' || c == '[':
			if depth++; depth > maxDepth {
				return false
			}
			num = 0
		case c == '}' || c == ']':
			depth, num = depth-1, 0
		default:
			num = 0
		}
	}
	return true
}

// TestJSONBSafeSkipsStrings: jsonbSafe, which jumps through strings to
// their next backslash or closing quote, answers as the byte loop did, on
// the cases it names and on random bytes of JSON's punctuation, escapes,
// exponents and nesting (valid JSON or not: it must not read past b).
func TestJSONBSafeSkipsStrings(t *testing.T) {
	cases := []string{`{"a":"b"}`, `{"a":"b\"c","d":1e5}`, `{"a":"\u0000"}`, `{"e":"1e5"}`, `"a\\"`, `"a\\u"`, `"abc`, `"a\`,
		`{"a":"x\"}e1`, `[1.5e3]`, `{"a":"\\\"u"}`, "{\"a\":\"\xff\"}"}
	for _, c := range cases {
		if got, want := jsonbSafe([]byte(c)), jsonbSafeBytewise([]byte(c)); got != want {
			t.Errorf("jsonbSafe(%s) = %v, the byte loop %v", c, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(37, 2))
	const alphabet = `"\u{}[]e1-,: ab`
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if got, want := jsonbSafe(b), jsonbSafeBytewise(b); got != want {
			t.Fatalf("jsonbSafe(%s) = %v, the byte loop %v", b, got, want)
		}
	}
}
