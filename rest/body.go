package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"math"
	"mime"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"shipgraph/model"
)

// Write bodies. The JSON:API form of the OpenAPI document is
//
//	{"data": {"type": "custom_field", "attributes": {"value": …}}}
//
// and the flat forms existing clients send are tolerated:
//
//	{"value": …}                  attributes at the top level
//	{"data": {"value": …}}        attributes directly in data
//
// Errors of the body's shape are 400 with a pointer; errors of an
// attribute's value are 422 pointing at /data/attributes/<name>, whichever
// form the client used.

// attributes are the members of a write body, by name.
type attributes map[string]json.RawMessage

// readAttributes checks the content type, reads the body (the server caps
// its size) and returns its attributes; typ is the resource type data.type
// must name when it is given.
func readAttributes(r *http.Request, typ string) (attributes, error) {
	attrs, _, err := readResource(r, typ)
	return attrs, err
}

// readResource is readAttributes that also returns the body's
// relationships (data.relationships, or relationships at the top level of
// a flat body), by name; nil when there are none.
func readResource(r *http.Request, typ string) (attributes, map[string]json.RawMessage, error) {
	attrs, rels, err := readBody(r, typ)
	if err != nil {
		return nil, nil, err
	}
	var relationships map[string]json.RawMessage
	if rels != nil && !isNull(rels) {
		if err := json.Unmarshal(rels, &relationships); err != nil || relationships == nil {
			return nil, nil, shapeError("/data/relationships", "data.relationships must be an object")
		}
	}
	return attrs, relationships, nil
}

func readBody(r *http.Request, typ string) (attributes, json.RawMessage, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/json" && mt != MediaType) {
		return nil, nil, statusErrorf(http.StatusUnsupportedMediaType, "send the body as application/json or %s", MediaType)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, nil, statusErrorf(http.StatusRequestEntityTooLarge, "the request body is larger than %d bytes", tooLarge.Limit)
		}
		return nil, nil, statusErrorf(http.StatusBadRequest, "the request body could not be read")
	}
	// encoding/json would replace invalid UTF-8 by U+FFFD and store that:
	// refuse it instead, as a query string's is refused.
	if !utf8.Valid(body) {
		return nil, nil, statusErrorf(http.StatusBadRequest, "the request body is not valid UTF-8")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, nil, shapeError("/", "the request body must be a JSON object")
	}
	attrs, rels, err := bodyAttributes(top, typ)
	if err != nil {
		return nil, nil, err
	}
	// PostgreSQL text and jsonb cannot hold NUL: refuse it here rather
	// than let the statement fail.
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		var v any
		if json.Unmarshal(attrs[name], &v) == nil && hasNUL(v) {
			return nil, nil, attrError(name, "%s must not contain NUL characters", name)
		}
	}
	return attrs, rels, nil
}

// bodyAttributes finds the attributes in whichever form the body has.
func bodyAttributes(top map[string]json.RawMessage, typ string) (attributes, json.RawMessage, error) {
	raw, ok := top["data"]
	if !ok {
		rels := top["relationships"]
		delete(top, "relationships")
		return attributes(top), rels, nil
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(raw, &data); err != nil || data == nil {
		return nil, nil, shapeError("/data", "data must be an object")
	}
	if t, ok := data["type"]; ok {
		var s string
		if err := json.Unmarshal(t, &s); err != nil || s != typ {
			return nil, nil, shapeError("/data/type", "data.type must be %q", typ)
		}
	}
	rels := data["relationships"]
	if a, ok := data["attributes"]; ok {
		var attrs map[string]json.RawMessage
		if err := json.Unmarshal(a, &attrs); err != nil || attrs == nil {
			return nil, nil, shapeError("/data/attributes", "data.attributes must be an object")
		}
		return attrs, rels, nil
	}
	delete(data, "type")
	delete(data, "id")
	delete(data, "relationships")
	return attributes(data), rels, nil
}

// hasNUL reports whether a decoded JSON value holds a NUL character in a
// string (or a member name).
func hasNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.ContainsRune(x, 0)
	case []any:
		return slices.ContainsFunc(x, hasNUL)
	case map[string]any:
		for k, e := range x {
			if strings.ContainsRune(k, 0) || hasNUL(e) {
				return true
			}
		}
	}
	return false
}

// shapeError is the 400 of a body that is not the JSON:API shape.
func shapeError(pointer, format string, args ...any) error {
	e := model.Errorf(model.EINVALID, format, args...)
	e.Pointer = pointer
	return &statusError{status: http.StatusBadRequest, err: e}
}

// attrError is the 422 of an attribute value.
func attrError(name, format string, args ...any) error {
	return model.Errorf(model.EINVALID, format, args...).AtField(name)
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// text returns a string attribute: absent is nil (an error when
// required); null or anything but a string is refused.
func (a attributes) text(name string, required bool) (*string, error) {
	raw, ok := a[name]
	if !ok {
		if required {
			return nil, attrError(name, "%s is required", name)
		}
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || isNull(raw) {
		return nil, attrError(name, "%s must be a string", name)
	}
	return &s, nil
}

// integer returns an optional integer attribute (32-bit, as the column):
// absent or null is nil, and null is reported by the second result.
func (a attributes) integer(name string) (v *int, null bool, err error) {
	raw, ok := a[name]
	if !ok {
		return nil, false, nil
	}
	if isNull(raw) {
		return nil, true, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) {
		return nil, false, attrError(name, "%s must be an integer", name)
	}
	if f < math.MinInt32 || f > math.MaxInt32 {
		return nil, false, attrError(name, "%s must be between %d and %d", name, math.MinInt32, math.MaxInt32)
	}
	n := int(f)
	return &n, false, nil
}

// optionalList reads a list of strings a PATCH may set: absent is not
// given, null (or []) clears it, a null member is refused rather than
// dropped.
func (a attributes) optionalList(name string) (model.Optional[[]string], error) {
	raw, ok := a[name]
	if !ok {
		return model.Optional[[]string]{}, nil
	}
	if isNull(raw) {
		return model.Given[[]string](nil), nil
	}
	v, _, err := a.stringList(name)
	if err != nil {
		return model.Optional[[]string]{}, attrError(name, "%s must be a list of strings (without nulls) or null", name)
	}
	return model.Given(v), nil
}

// oneOf reads a required string attribute that must be one of values (any
// case), returned in the values' spelling.
func (a attributes) oneOf(name string, values []string) (string, error) {
	v, err := a.text(name, true)
	if err != nil {
		return "", err
	}
	for _, x := range values {
		if strings.EqualFold(x, *v) {
			return x, nil
		}
	}
	return "", attrError(name, "%s must be one of %s", name, strings.Join(values, ", "))
}

// nullableText reads an optional string attribute that may be null: set
// reports whether it was given at all.
func (a attributes) nullableText(name string) (v *string, set bool, err error) {
	raw, ok := a[name]
	if !ok {
		return nil, false, nil
	}
	if isNull(raw) {
		return nil, true, nil
	}
	v, err = a.text(name, false)
	return v, true, err
}

// raw returns a JSON attribute as given (null included); set reports
// whether it was given.
func (a attributes) raw(name string) (model.JSON, bool) {
	v, ok := a[name]
	return model.JSON(v), ok
}

// boolean reads an optional boolean attribute (absent: nil).
func (a attributes) boolean(name string) (*bool, error) {
	raw, ok := a[name]
	if !ok {
		return nil, nil
	}
	var v bool
	if isNull(raw) || json.Unmarshal(raw, &v) != nil {
		return nil, attrError(name, "%s must be true or false", name)
	}
	return &v, nil
}

// stringList reads an optional list of strings; null is a nil list with
// set true.
func (a attributes) stringList(name string) (v []string, set bool, err error) {
	raw, ok := a[name]
	if !ok {
		return nil, false, nil
	}
	if isNull(raw) {
		return nil, true, nil
	}
	// A null member would decode as "" and be dropped: refuse it.
	var list []*string
	if json.Unmarshal(raw, &list) != nil || slices.Contains(list, nil) {
		return nil, true, attrError(name, "%s must be a list of strings (without nulls)", name)
	}
	v = make([]string, len(list))
	for i, s := range list {
		v[i] = *s
	}
	return v, true, nil
}

// headers reads an optional list of {"name","value"}.
func (a attributes) headers(name string) (v []*model.WebhookHeaderInput, set bool, err error) {
	raw, ok := a[name]
	if !ok {
		return nil, false, nil
	}
	if isNull(raw) {
		return nil, true, nil
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, true, attrError(name, `%s must be a list of {"name": …, "value": …}`, name)
	}
	v = make([]*model.WebhookHeaderInput, 0, len(list))
	for _, h := range list {
		var n, val string
		if json.Unmarshal(h["name"], &n) != nil || json.Unmarshal(h["value"], &val) != nil {
			return nil, true, attrError(name, `%s must be a list of {"name": …, "value": …} with string names and values`, name)
		}
		v = append(v, &model.WebhookHeaderInput{Name: n, Value: val})
	}
	return v, true, nil
}
