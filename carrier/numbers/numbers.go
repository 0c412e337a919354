// Package numbers checks and normalises the identifiers of ocean shipping
// that a tracking request or a carrier carries: ISO 6346 container numbers
// (owner code, category, serial, check digit), IMO vessel numbers (seven
// digits, the last a check digit) and carriers' free-form references (bill
// of lading and booking numbers). The carrier simulator builds its numbers
// with it and the tracking request validation checks them with it, so both
// agree on what a valid number is.
package numbers

import (
	"strings"
)

// iso6346Letters are the letters' values of ISO 6346: A=10, then counting
// on but skipping the multiples of 11 (11, 22, 33), so B=12 … K=21, L=23 …
// U=32, V=34 … Z=38.
var iso6346Letters = [26]int{
	10, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 34, 35, 36, 37, 38,
}

// NormalizeContainer returns s upper-cased with the separators people type
// inside a container number (spaces, '-', '.', '/') removed:
// "mscu 123456-7" becomes "MSCU1234567". It does not check s.
func NormalizeContainer(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == ' ' || r == '-' || r == '.' || r == '/' || r == '\t':
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ContainerCheckDigit computes the ISO 6346 check digit of the first ten
// characters of a container number (owner code, category, six-digit
// serial). ok is false when those are not four letters and six digits.
func ContainerCheckDigit(first10 string) (digit int, ok bool) {
	if len(first10) != 10 {
		return 0, false
	}
	sum := 0
	for i := 0; i < 10; i++ {
		c := first10[i]
		var v int
		switch {
		case i < 4 && c >= 'A' && c <= 'Z':
			v = iso6346Letters[c-'A']
		case i >= 4 && c >= '0' && c <= '9':
			v = int(c - '0')
		default:
			return 0, false
		}
		sum += v << i
	}
	return sum % 11 % 10, true
}

// ValidContainer reports whether s, as given (normalise it first), is an
// ISO 6346 container number: a three-letter owner code, the category
// identifier U (freight container), J (detachable equipment) or Z
// (trailer/chassis), six serial digits and the right check digit.
func ValidContainer(s string) bool {
	if len(s) != 11 {
		return false
	}
	if c := s[3]; c != 'U' && c != 'J' && c != 'Z' {
		return false
	}
	d, ok := ContainerCheckDigit(s[:10])
	return ok && s[10] >= '0' && s[10] <= '9' && int(s[10]-'0') == d
}

// ContainerNumber builds a valid ISO 6346 number from a three-letter owner
// code, the category U and a serial (taken modulo 10^6), with its check
// digit. ok is false for an owner code that is not three letters A–Z.
func ContainerNumber(owner string, serial int) (string, bool) {
	if len(owner) != 3 {
		return "", false
	}
	if serial < 0 {
		serial = -serial
	}
	first := owner + "U" + pad(serial%1_000_000, 6)
	d, ok := ContainerCheckDigit(first)
	if !ok {
		return "", false
	}
	return first + string(rune('0'+d)), true
}

// IMOCheckDigit computes the check digit of the first six digits of an IMO
// ship number: their sum weighted 7, 6, 5, 4, 3, 2, modulo 10. ok is false
// when first6 is not six digits.
func IMOCheckDigit(first6 string) (digit int, ok bool) {
	if len(first6) != 6 {
		return 0, false
	}
	sum := 0
	for i := 0; i < 6; i++ {
		c := first6[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		sum += int(c-'0') * (7 - i)
	}
	return sum % 10, true
}

// NormalizeIMO returns s without an "IMO" prefix, spaces or separators:
// "IMO 9321483" becomes "9321483". It does not check s.
func NormalizeIMO(s string) string {
	s = NormalizeContainer(s)
	return strings.TrimPrefix(s, "IMO")
}

// ValidIMO reports whether s, as given, is a seven-digit IMO ship number
// with the right check digit.
func ValidIMO(s string) bool {
	if len(s) != 7 {
		return false
	}
	d, ok := IMOCheckDigit(s[:6])
	return ok && s[6] >= '0' && s[6] <= '9' && int(s[6]-'0') == d
}

// IMONumber builds a valid IMO number from a six-digit body (taken modulo
// 10^6) and its check digit.
func IMONumber(body int) string {
	if body < 0 {
		body = -body
	}
	first := pad(body%1_000_000, 6)
	d, _ := IMOCheckDigit(first)
	return first + string(rune('0'+d))
}

// NormalizeReference returns a carrier's bill of lading or booking number
// as carriers key it: upper-case, with no spaces or '-' inside
// ("maeu 123-456" becomes "MAEU123456").
func NormalizeReference(s string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r == ' ' || r == '-' || r == '\t':
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ValidReference reports whether s (normalised) can be a carrier's bill of
// lading or booking number: 4 to 20 characters (the DCSA limit of a
// transport document reference is 20), ASCII letters and digits only, at
// least one digit.
func ValidReference(s string) bool {
	if len(s) < 4 || len(s) > 20 {
		return false
	}
	digit := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'A' && c <= 'Z':
		default:
			return false
		}
	}
	return digit
}

func pad(n, width int) string {
	b := make([]byte, width)
	for i := width - 1; i >= 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b)
}
