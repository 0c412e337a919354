package jsonapi

import "shipgraph/model"

// Reader reads one attribute of a write body into its destination: a
// body's readers, in order, are its declared field table (Attributes.Read).
// Each reads as the Attributes method it names, with its errors.
type Reader func(a Attributes) error

// Read runs readers in order; the first error is the body's.
func (a Attributes) Read(readers ...Reader) error {
	for _, r := range readers {
		if err := r(a); err != nil {
			return err
		}
	}
	return nil
}

// Str reads a string attribute (Text); absent leaves dst as it is.
func Str(name string, required bool, dst *string) Reader {
	return func(a Attributes) error {
		v, err := a.Text(name, required)
		if v != nil {
			*dst = *v
		}
		return err
	}
}

// StrP reads an optional string attribute (Text; absent is nil).
func StrP(name string, dst **string) Reader {
	return func(a Attributes) (err error) {
		*dst, err = a.Text(name, false)
		return err
	}
}

// Nullable reads an optional string attribute that may be null
// (NullableText; absent or null is nil).
func Nullable(name string, dst **string) Reader {
	return func(a Attributes) (err error) {
		*dst, _, err = a.NullableText(name)
		return err
	}
}

// NullableGiven is Nullable for a patch: given (null included) or not.
func NullableGiven(name string, dst *model.Optional[*string]) Reader {
	return func(a Attributes) error {
		v, set, err := a.NullableText(name)
		if set && err == nil {
			*dst = model.Given(v)
		}
		return err
	}
}

// Enum reads a required string attribute that is one of values, in the
// values' spelling (OneOf).
func Enum[E ~string](name string, values []string, dst *E) Reader {
	return func(a Attributes) error {
		v, err := a.OneOf(name, values)
		*dst = E(v)
		return err
	}
}

// JSONValue reads a JSON attribute as given (Raw; absent is nil).
func JSONValue(name string, dst *model.JSON) Reader {
	return func(a Attributes) error {
		*dst, _ = a.Raw(name)
		return nil
	}
}

// JSONGiven is JSONValue for a patch: given (null included) or not.
func JSONGiven(name string, dst *model.Optional[model.JSON]) Reader {
	return func(a Attributes) error {
		if v, ok := a.Raw(name); ok {
			*dst = model.Given(v)
		}
		return nil
	}
}

// IntP reads an optional integer attribute (Integer; absent or null is nil).
func IntP(name string, dst **int) Reader {
	return func(a Attributes) (err error) {
		*dst, _, err = a.Integer(name)
		return err
	}
}

// IntGiven is IntP for a patch: given (null included) or not.
func IntGiven(name string, dst *model.Optional[*int]) Reader {
	return func(a Attributes) error {
		v, null, err := a.Integer(name)
		if err == nil && (v != nil || null) {
			*dst = model.Given(v)
		}
		return err
	}
}

// BoolP reads an optional boolean attribute (Boolean; absent is nil).
func BoolP(name string, dst **bool) Reader {
	return func(a Attributes) (err error) {
		*dst, err = a.Boolean(name)
		return err
	}
}

// Strings reads an optional list of strings (StringList; absent or null is
// nil).
func Strings(name string, dst *[]string) Reader {
	return func(a Attributes) (err error) {
		*dst, _, err = a.StringList(name)
		return err
	}
}
