package jsonapi

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

// Attributes are the members of a write body, by name.
type Attributes map[string]json.RawMessage

// ReadAttributes checks the content type, reads the body (the server caps
// its size) and returns its attributes; typ is the resource type data.type
// must name when it is given.
func ReadAttributes(r *http.Request, typ string) (Attributes, error) {
	attrs, _, err := ReadResource(r, typ)
	return attrs, err
}

// ReadResource is ReadAttributes that also returns the body's
// relationships (data.relationships, or relationships at the top level of
// a flat body), by name; nil when there are none.
func ReadResource(r *http.Request, typ string) (Attributes, map[string]json.RawMessage, error) {
	attrs, rels, err := readBody(r, typ)
	if err != nil {
		return nil, nil, err
	}
	var relationships map[string]json.RawMessage
	if rels != nil && !IsNull(rels) {
		if err := json.Unmarshal(rels, &relationships); err != nil || relationships == nil {
			return nil, nil, ShapeError("/data/relationships", "data.relationships must be an object")
		}
	}
	return attrs, relationships, nil
}

func readBody(r *http.Request, typ string) (Attributes, json.RawMessage, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/json" && mt != MediaType) {
		return nil, nil, StatusErrorf(http.StatusUnsupportedMediaType, "send the body as application/json or %s", MediaType)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, nil, StatusErrorf(http.StatusRequestEntityTooLarge, "the request body is larger than %d bytes", tooLarge.Limit)
		}
		return nil, nil, StatusErrorf(http.StatusBadRequest, "the request body could not be read")
	}
	// encoding/json would replace invalid UTF-8 by U+FFFD and store that:
	// refuse it instead, as a query string's is refused.
	if !utf8.Valid(body) {
		return nil, nil, StatusErrorf(http.StatusBadRequest, "the request body is not valid UTF-8")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, nil, ShapeError("/", "the request body must be a JSON object")
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
			return nil, nil, AttrError(name, "%s must not contain NUL characters", name)
		}
	}
	return attrs, rels, nil
}

// bodyAttributes finds the attributes in whichever form the body has.
func bodyAttributes(top map[string]json.RawMessage, typ string) (Attributes, json.RawMessage, error) {
	raw, ok := top["data"]
	if !ok {
		rels := top["relationships"]
		delete(top, "relationships")
		return Attributes(top), rels, nil
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(raw, &data); err != nil || data == nil {
		return nil, nil, ShapeError("/data", "data must be an object")
	}
	if t, ok := data["type"]; ok {
		var s string
		if err := json.Unmarshal(t, &s); err != nil || s != typ {
			return nil, nil, ShapeError("/data/type", "data.type must be %q", typ)
		}
	}
	rels := data["relationships"]
	if a, ok := data["attributes"]; ok {
		var attrs map[string]json.RawMessage
		if err := json.Unmarshal(a, &attrs); err != nil || attrs == nil {
			return nil, nil, ShapeError("/data/attributes", "data.attributes must be an object")
		}
		return attrs, rels, nil
	}
	delete(data, "type")
	delete(data, "id")
	delete(data, "relationships")
	return Attributes(data), rels, nil
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

// ShapeError is the 400 of a body that is not the JSON:API shape.
func ShapeError(pointer, format string, args ...any) error {
	e := model.Errorf(model.EINVALID, format, args...)
	e.Pointer = pointer
	return &statusError{status: http.StatusBadRequest, err: e}
}

// AttrError is the 422 of an attribute value.
func AttrError(name, format string, args ...any) error {
	return model.Errorf(model.EINVALID, format, args...).AtField(name)
}

// Only is the 422 of the first attribute (in name order) that is not one
// of allowed, its message format with the attribute's name for %s; nil when
// every attribute is allowed.
func (a Attributes) Only(format string, allowed ...string) error {
	for _, name := range slices.Sorted(maps.Keys(a)) {
		if !slices.Contains(allowed, name) {
			return AttrError(name, format, name)
		}
	}
	return nil
}

// IsNull reports whether raw is JSON's null.
func IsNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// Text returns a string attribute: absent is nil (an error when
// required); null or anything but a string is refused.
func (a Attributes) Text(name string, required bool) (*string, error) {
	raw, ok := a[name]
	if !ok {
		if required {
			return nil, AttrError(name, "%s is required", name)
		}
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || IsNull(raw) {
		return nil, AttrError(name, "%s must be a string", name)
	}
	return &s, nil
}

// Integer returns an optional integer attribute (32-bit, as the column):
// absent or null is nil, and null is reported by the second result.
func (a Attributes) Integer(name string) (v *int, null bool, err error) {
	raw, ok := a[name]
	if !ok {
		return nil, false, nil
	}
	if IsNull(raw) {
		return nil, true, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) {
		return nil, false, AttrError(name, "%s must be an integer", name)
	}
	if f < math.MinInt32 || f > math.MaxInt32 {
		return nil, false, AttrError(name, "%s must be between %d and %d", name, math.MinInt32, math.MaxInt32)
	}
	n := int(f)
	return &n, false, nil
}

// OptionalList reads a list of strings a PATCH may set: absent is not
// given, null (or []) clears it, a null member is refused rather than
// dropped.
func (a Attributes) OptionalList(name string) (model.Optional[[]string], error) {
	raw, ok := a[name]
	if !ok {
		return model.Optional[[]string]{}, nil
	}
	if IsNull(raw) {
		return model.Given[[]string](nil), nil
	}
	v, _, err := a.StringList(name)
	if err != nil {
		return model.Optional[[]string]{}, AttrError(name, "%s must be a list of strings (without nulls) or null", name)
	}
	return model.Given(v), nil
}

// OneOf reads a required string attribute that must be one of values (any
// case), returned in the values' spelling.
func (a Attributes) OneOf(name string, values []string) (string, error) {
	v, err := a.Text(name, true)
	if err != nil {
		return "", err
	}
	for _, x := range values {
		if strings.EqualFold(x, *v) {
			return x, nil
		}
	}
	return "", AttrError(name, "%s must be one of %s", name, strings.Join(values, ", "))
}

// NullableText reads an optional string attribute that may be null: set
// reports whether it was given at all.
func (a Attributes) NullableText(name string) (v *string, set bool, err error) {
	raw, ok := a[name]
	if !ok {
		return nil, false, nil
	}
	if IsNull(raw) {
		return nil, true, nil
	}
	v, err = a.Text(name, false)
	return v, true, err
}

// Raw returns a JSON attribute as given (null included); set reports
// whether it was given.
func (a Attributes) Raw(name string) (model.JSON, bool) {
	v, ok := a[name]
	return model.JSON(v), ok
}

// Boolean reads an optional boolean attribute (absent: nil).
func (a Attributes) Boolean(name string) (*bool, error) {
	raw, ok := a[name]
	if !ok {
		return nil, nil
	}
	var v bool
	if IsNull(raw) || json.Unmarshal(raw, &v) != nil {
		return nil, AttrError(name, "%s must be true or false", name)
	}
	return &v, nil
}

// StringList reads an optional list of strings; null is a nil list with
// set true.
func (a Attributes) StringList(name string) (v []string, set bool, err error) {
	raw, ok := a[name]
	if !ok {
		return nil, false, nil
	}
	if IsNull(raw) {
		return nil, true, nil
	}
	// A null member would decode as "" and be dropped: refuse it.
	var list []*string
	if json.Unmarshal(raw, &list) != nil || slices.Contains(list, nil) {
		return nil, true, AttrError(name, "%s must be a list of strings (without nulls)", name)
	}
	v = make([]string, len(list))
	for i, s := range list {
		v[i] = *s
	}
	return v, true, nil
}

// ToOneData reads a to-one relationship of a write body, {"data": {"type":
// …, "id": …}} or {"data": null} (nil); false when raw has another shape.
func ToOneData(raw json.RawMessage) (*Identifier, bool) {
	var rel struct {
		Data *Identifier `json:"data"`
	}
	if json.Unmarshal(raw, &rel) != nil {
		return nil, false
	}
	return rel.Data, true
}

// ToManyData reads a to-many relationship of a write body, {"data": [{"type":
// …, "id": …}, …]}; false when raw has another shape (a null data too).
func ToManyData(raw json.RawMessage) ([]Identifier, bool) {
	var rel struct {
		Data []Identifier `json:"data"`
	}
	if json.Unmarshal(raw, &rel) != nil || rel.Data == nil {
		return nil, false
	}
	return rel.Data, true
}
