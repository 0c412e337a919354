package model

import (
	"errors"
	"fmt"
)

// Error codes shared by the store, the resolvers and both transports. Each
// maps to one HTTP status (rest) and one extensions.code (GraphQL).
const (
	EINVALID         = "invalid"
	EUNAUTHENTICATED = "unauthenticated"
	EFORBIDDEN       = "forbidden"
	ENOTFOUND        = "not_found"
	ECONFLICT        = "conflict"
	ERATELIMITED     = "rate_limited"
	EUNAVAILABLE     = "unavailable"
	EINTERNAL        = "internal"
)

// Error is the one application error type. Message is safe to show to a
// client; anything that is not an *Error is treated as internal.
type Error struct {
	Code    string
	Message string
	// Field names the offending member of a write's input neutrally, by
	// its attribute name ("ref_numbers", "value"), or WholeInput; each
	// transport renders it in its own syntax (/v2: source.pointer
	// "/data/attributes/ref_numbers"; GraphQL: extensions.field).
	Field string
	// Parameter names the offending argument of a read: a page argument
	// ("first", "last", "page", "page[number]", "page[size]") or, in /v2,
	// a query parameter ("sort", "filter[…]").
	Parameter string
	// Pointer is the JSON pointer into a /v2 request body whose shape is
	// wrong ("/data/type"); only the /v2 adapter sets it. The resolver
	// layer names input members with Field.
	Pointer string
}

// WholeInput is the Field of an error about a write's input as a whole
// rather than one of its members.
const WholeInput = "."

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf returns an *Error with a formatted, client-safe message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AtField returns a copy of e that names an input member (Field).
func (e *Error) AtField(name string) *Error {
	c := *e
	c.Field = name
	return &c
}

// AtPointer returns a copy of e that points at a request body member.
func (e *Error) AtPointer(pointer string) *Error {
	c := *e
	c.Pointer = pointer
	return &c
}

// AtParameter returns a copy of e that names a query parameter.
func (e *Error) AtParameter(name string) *Error {
	c := *e
	c.Parameter = name
	return &c
}

// classifier turns an error of a technology below the model (the
// database driver's) into an application error, or returns nil. The store
// registers it (db/errors.go), so the model imports nothing.
var classifier func(error) *Error

// SetClassifier registers the function that gives errors that are not
// *Error their application error (e.g. a lost database connection →
// EUNAVAILABLE). Call it from an init function only.
func SetClassifier(f func(error) *Error) { classifier = f }

// ErrorCode returns the code of an application error (or of a classified
// one), or EINTERNAL for any other non-nil error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	} else if e, ok := AsError(err); ok {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of err: the message of an
// application error, or a generic text for anything else.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	} else if e, ok := AsError(err); ok {
		return e.Message
	}
	return "internal error"
}

// AsError returns the *Error inside err, if any, or the one the registered
// classifier gives it.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	if classifier != nil && err != nil {
		if e = classifier(err); e != nil {
			return e, true
		}
	}
	return nil, false
}

// NotFound is the error for a record that does not exist or belongs to
// another account: both answer the same, so existence does not leak.
func NotFound(kind string) *Error {
	return Errorf(ENOTFOUND, "%s not found", kind)
}
