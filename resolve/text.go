package resolve

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"shipgraph/model"
)

// The text rules every write shares. A tracking number is letters and
// digits once spaces and dashes are dropped (infer_number and the create
// refuse the same numbers); free text (reference numbers, tags, a party's
// company name) may hold any printable character but no control
// character, no bidirectional control (U+202E turns "exe.txt" into
// "txt.exe" on screen) and no U+FFFD: JSON and GraphQL decoders put that
// in place of a lone surrogate (an escaped \ud800) or of bytes that were
// not UTF-8, so it marks text that lost characters on the way.

// trackingNumberFault says why raw is not a tracking number, or "" when
// it is one; n is its normalised form (model.NormalizeTrackingNumber).
func trackingNumberFault(raw string) (n, fault string) {
	trimmed := strings.TrimSpace(raw)
	n = model.NormalizeTrackingNumber(trimmed)
	if bad := strings.IndexFunc(trimmed, unprintable); bad >= 0 {
		r, _ := utf8.DecodeRuneInString(trimmed[bad:])
		return n, "it contains " + describeRune(r) + "; a number is letters and digits (spaces and dashes are ignored)"
	}
	switch {
	case n == "":
		return n, "it is blank"
	case len(n) > 64:
		return n, "it is longer than 64 characters"
	}
	if bad := strings.IndexFunc(n, func(c rune) bool { return !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') }); bad >= 0 {
		r, _ := utf8.DecodeRuneInString(n[bad:])
		return n, "it contains " + describeRune(r) + "; a number is letters and digits (spaces and dashes are ignored)"
	}
	return n, ""
}

// unprintable is a rune free text must not hold.
func unprintable(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == utf8.RuneError ||
		r == '\u2028' || r == '\u2029' || (r >= '\uFFF9' && r <= '\uFFFB') // line separators, interlinear annotation
}

// textFault says why s is not acceptable free text, or "" when it is.
func textFault(s string) string {
	bad := strings.IndexFunc(s, unprintable)
	if bad < 0 {
		return ""
	}
	r, _ := utf8.DecodeRuneInString(s[bad:])
	return "it contains " + describeRune(r)
}

// describeRune names a refused character without echoing it (a bidi
// control in an error message would reorder the message itself).
func describeRune(r rune) string {
	switch {
	case r == utf8.RuneError:
		return "U+FFFD (text that was not valid Unicode, such as a lone surrogate \\ud800)"
	case unicode.IsControl(r):
		return "a control character (" + codePoint(r) + ")"
	case unicode.Is(unicode.Bidi_Control, r):
		return "a bidirectional text control (" + codePoint(r) + ")"
	case r < 0x80 && unicode.IsPrint(r):
		return "'" + string(r) + "'"
	default:
		return "the character " + codePoint(r)
	}
}

func codePoint(r rune) string {
	const hex = "0123456789ABCDEF"
	b := []byte{}
	for v := uint32(r); v > 0 || len(b) < 4; v >>= 4 {
		b = append([]byte{hex[v&15]}, b...)
	}
	return "U+" + string(b)
}
