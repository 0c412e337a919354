package tracking

import (
	"math/rand/v2"
	"net/http"
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

// TestCarrierKeepsItsConnections: a carrier's transport keeps as many idle
// connections as it may have requests in flight (its Concurrency, at most
// the workers; the workers without a bound), not the default transport's
// two a host, which closed the others after each burst of polls and dialed
// them again (a TLS handshake each, to a real carrier).
func TestCarrierKeepsItsConnections(t *testing.T) {
	for _, c := range []struct{ concurrency, workers, idle int }{{8, 50, 8}, {0, 50, 50}, {80, 50, 50}, {0, 0, 2}} {
		k := DefaultCarrier
		k.SCAC, k.BaseURL, k.Concurrency = "MAEU", "http://127.0.0.1:1/MAEU", c.concurrency
		d, err := newDCSAConnector(k, 1<<20, 100, c.workers)
		if err != nil {
			t.Fatal(err)
		}
		tr, ok := d.c.Transport().(*http.Transport)
		if !ok || tr == http.DefaultTransport || tr.MaxIdleConnsPerHost != c.idle || tr.MaxIdleConns < c.idle {
			t.Errorf("concurrency %d, workers %d: transport %T, %d idle a host (want %d)", c.concurrency, c.workers, d.c.Transport(), tr.MaxIdleConnsPerHost, c.idle)
		}
	}
}
