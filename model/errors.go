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
	// Pointer is the JSON pointer of the offending request member, relative
	// to the JSON:API body ("/data/attributes/value"); Field is the GraphQL
	// argument path ("value"). Either may be empty.
	Pointer string
	// Parameter names the offending query parameter (REST only).
	Parameter string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf returns an *Error with a formatted, client-safe message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
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
