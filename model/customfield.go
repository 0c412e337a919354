package model

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
)

func invalidValue(format string, args ...any) *Error {
	e := Errorf(EINVALID, format, args...)
	e.Field = "value"
	return e
}

// NormalizeCustomFieldValue checks a raw JSON value against a definition's
// data type (and, for enums, the values of its options) and returns the
// value to store. A JSON null clears the value.
func NormalizeCustomFieldValue(def *CustomFieldDefinition, options []*CustomFieldOption, raw JSON) (JSON, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, invalidValue("value is not valid JSON")
	}
	allowed := map[string]bool{}
	for _, o := range options {
		allowed[o.Value] = true
	}
	switch def.DataType {
	case "short_text", "reference":
		s, ok := v.(string)
		if !ok {
			return nil, invalidValue("value must be a string for a %s field", def.DataType)
		}
		if len(s) > 1000 {
			return nil, invalidValue("value must be at most 1000 characters")
		}
		return marshal(s), nil
	case "number":
		var f float64
		switch n := v.(type) {
		case json.Number:
			x, err := n.Float64()
			if err != nil {
				return nil, invalidValue("value must be a number")
			}
			f = x
		case string:
			x, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
			if err != nil {
				return nil, invalidValue("value must be a number")
			}
			f = x
		default:
			return nil, invalidValue("value must be a number")
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, invalidValue("value must be a finite number")
		}
		return marshal(f), nil
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, invalidValue("value must be true or false")
		}
		return marshal(b), nil
	case "date":
		s, ok := v.(string)
		if !ok {
			return nil, invalidValue("value must be a date (YYYY-MM-DD)")
		}
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return nil, invalidValue("value must be a date (YYYY-MM-DD)")
		}
		return marshal(s), nil
	case "datetime":
		s, ok := v.(string)
		if !ok {
			return nil, invalidValue("value must be an RFC 3339 date-time")
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, invalidValue("value must be an RFC 3339 date-time")
		}
		return marshal(t.UTC().Format(time.RFC3339)), nil
	case "enum":
		s, ok := v.(string)
		if !ok {
			return nil, invalidValue("value must be one of the definition's option values")
		}
		if !allowed[s] {
			return nil, invalidValue("%q is not an option of %s", s, def.APISlug)
		}
		return marshal(s), nil
	case "enum_multi":
		list, ok := v.([]any)
		if !ok {
			return nil, invalidValue("value must be a list of the definition's option values")
		}
		seen := map[string]bool{}
		out := make([]string, 0, len(list))
		for _, item := range list {
			s, ok := item.(string)
			if !ok || !allowed[s] {
				return nil, invalidValue("%v is not an option of %s", item, def.APISlug)
			}
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
		return marshal(out), nil
	}
	return nil, invalidValue("unsupported data type %s", def.DataType)
}

func marshal(v any) JSON {
	b, _ := json.Marshal(v)
	return b
}

// DisplayValue is the human form of the value: an enum's label, a formatted
// date, "Yes"/"No" for booleans, the name of the record a reference names
// (when the load plan attached it: Rel.ReferencedUser). Nil when there is
// no value.
func (c *CustomField) DisplayValue() *string {
	if c.Value == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(c.Value, &v); err != nil || v == nil {
		return nil
	}
	if u := c.Rel.ReferencedUser; u != nil && c.DataType == "reference" {
		s := u.DisplayName()
		return &s
	}
	s := displayValue(c.DataType, v, c.OptionLabels)
	return &s
}

// ReferencedUserID is the id of the user a reference field names: its
// definition refers to users and its value is a user id (a UUID); nil
// otherwise (the value is shown as it is). A value that is no user of the
// account (not a UUID, another account's, deleted) loads nothing and is
// shown as it is too.
func (c *CustomField) ReferencedUserID() *string {
	if c.DataType != "reference" || c.ReferenceType == nil || *c.ReferenceType != "user" || c.Value == nil {
		return nil
	}
	var id string
	if err := json.Unmarshal(c.Value, &id); err != nil || id == "" {
		return nil
	}
	return &id
}

// DisplayName is how a user is shown: the name, or the email without one.
func (u *User) DisplayName() string {
	if n := strings.TrimSpace(u.FirstName + " " + u.LastName); n != "" {
		return n
	}
	return u.Email
}

func displayValue(dt CustomFieldDataType, v any, labels []string) string {
	switch dt {
	case "enum", "enum_multi":
		if len(labels) > 0 {
			return strings.Join(labels, ", ")
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			if b {
				return "Yes"
			}
			return "No"
		}
	case "date":
		if s, ok := v.(string); ok {
			if t, err := time.Parse(time.DateOnly, s); err == nil {
				return t.Format("Jan 2, 2006")
			}
		}
	case "datetime":
		if s, ok := v.(string); ok {
			if t, err := time.Parse(time.RFC3339, s); err == nil {
				return t.UTC().Format("Jan 2, 2006 15:04 UTC")
			}
		}
	case "number":
		if f, ok := v.(float64); ok {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
	}
	switch x := v.(type) {
	case string:
		return x
	case []any:
		parts := make([]string, 0, len(x))
		for _, p := range x {
			parts = append(parts, toString(p))
		}
		return strings.Join(parts, ", ")
	}
	return toString(v)
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
