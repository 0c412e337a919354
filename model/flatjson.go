package model

import (
	"strconv"
	"strings"
)

// The holds and fees columns are jsonb arrays of flat objects, read for
// every container a page shows. encoding/json spent more on them than on
// the rest of the container's row (reflection, a string per value), so
// the text PostgreSQL writes for them ([{"name": "x", "status": "hold",
// "description": null}]: known keys, values that are strings without
// escapes, numbers or null) is read here into one copy of the text whose
// substrings are the values. Anything else (escapes, other keys or value
// kinds, non-ASCII bytes) is left to json.Unmarshal, so the result is
// always what it would give.

// flatValue is one member's value: a string's contents, or a number's or
// null's text.
type flatValue struct {
	text string
	str  bool
}

func (v flatValue) null() bool { return !v.str && v.text == "null" }

// eachFlatObject walks s, a JSON array of flat objects, calling object
// at each object's start and member for each of its members. It returns
// false (and the caller decodes s otherwise) at anything it does not
// read, or when member does.
func eachFlatObject(s string, object func(), member func(key string, v flatValue) bool) bool {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '[' {
		return false
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return skipSpace(s, i+1) == len(s)
	}
	for {
		if i >= len(s) || s[i] != '{' {
			return false
		}
		object()
		i = skipSpace(s, i+1)
		if i < len(s) && s[i] == '}' {
			i++
		} else {
			for {
				key, j, ok := flatString(s, i)
				if !ok {
					return false
				}
				i = skipSpace(s, j)
				if i >= len(s) || s[i] != ':' {
					return false
				}
				i = skipSpace(s, i+1)
				var v flatValue
				if i < len(s) && s[i] == '"' {
					v.text, j, ok = flatString(s, i)
					v.str = true
				} else {
					j = i
					for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '-' || s[j] == '+' || s[j] == '.' || s[j] == 'e' || s[j] == 'E' || s[j] >= 'a' && s[j] <= 'z') {
						j++
					}
					v.text, ok = s[i:j], j > i
				}
				if !ok || !member(key, v) {
					return false
				}
				i = skipSpace(s, j)
				if i < len(s) && s[i] == ',' {
					i = skipSpace(s, i+1)
					continue
				}
				if i < len(s) && s[i] == '}' {
					i++
					break
				}
				return false
			}
		}
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
			continue
		}
		if i < len(s) && s[i] == ']' {
			return skipSpace(s, i+1) == len(s)
		}
		return false
	}
}

// flatString reads the string at s[i] when it has no escapes and only
// printable ASCII, returning its contents and the index after it.
func flatString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", 0, false
		}
	}
	return "", 0, false
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// flatText is src's text, copied (lib/pq hands jsonb out in its reused
// row buffer).
func flatText(src any) (string, bool) {
	switch v := src.(type) {
	case []byte:
		return string(v), true
	case string:
		return v, true
	}
	return "", false
}

// scanHolds reads the holds' text as json.Unmarshal would, or reports
// that it cannot.
func scanHolds(src any) (TerminalHolds, bool) {
	s, ok := flatText(src)
	if !ok {
		return nil, false
	}
	out := make(TerminalHolds, 0, strings.Count(s, "{"))
	ok = eachFlatObject(s, func() { out = append(out, TerminalHold{}) }, func(key string, v flatValue) bool {
		h := &out[len(out)-1]
		switch {
		case key == "name" && v.str:
			h.Name = v.text
		case key == "status" && v.str:
			h.Status = HoldStatus(v.text)
		case key == "description" && v.str:
			d := v.text
			h.Description = &d
		case key == "description" && v.null():
			h.Description = nil
		default:
			return false
		}
		return true
	})
	return out, ok
}

// scanFees reads the fees' text as json.Unmarshal would, or reports that
// it cannot.
func scanFees(src any) (TerminalFees, bool) {
	s, ok := flatText(src)
	if !ok {
		return nil, false
	}
	out := make(TerminalFees, 0, strings.Count(s, "{"))
	ok = eachFlatObject(s, func() { out = append(out, TerminalFee{}) }, func(key string, v flatValue) bool {
		f := &out[len(out)-1]
		switch {
		case key == "type" && v.str:
			f.Type = FeeType(v.text)
		case key == "currency_code" && v.str:
			f.CurrencyCode = v.text
		case key == "amount" && !v.str && !v.null() && validNumber(v.text):
			a, err := strconv.ParseFloat(v.text, 64)
			if err != nil {
				return false
			}
			f.Amount = a
		default:
			return false
		}
		return true
	})
	return out, ok
}

// validNumber reports whether s is a JSON number (strconv.ParseFloat
// accepts more: "inf", hex, underscores, "+1", ".5").
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if !digits() {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}
