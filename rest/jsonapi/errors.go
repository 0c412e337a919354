package jsonapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"shipgraph/model"
)

// MediaType is the JSON:API media type of every response.
const MediaType = "application/vnd.api+json"

// ErrorObject is a JSON:API error object; status is a string.
type ErrorObject struct {
	Status string       `json:"status"`
	Title  string       `json:"title"`
	Detail string       `json:"detail,omitempty"`
	Code   string       `json:"code,omitempty"`
	Source *ErrorSource `json:"source,omitempty"`
	Meta   any          `json:"meta,omitempty"`
}

// ErrorSource points at the offending part of the request.
type ErrorSource struct {
	Pointer   string `json:"pointer,omitempty"`
	Parameter string `json:"parameter,omitempty"`
}

// statuses maps application error codes to HTTP statuses. A value error in
// a body (invalid with a pointer, or a conflict such as a duplicate option
// value) is 422; an invalid query parameter is 400.
var statuses = map[string]int{
	model.EINVALID:         http.StatusBadRequest,
	model.EUNAUTHENTICATED: http.StatusUnauthorized,
	model.EFORBIDDEN:       http.StatusForbidden,
	model.ENOTFOUND:        http.StatusNotFound,
	model.ECONFLICT:        http.StatusUnprocessableEntity,
	model.ERATELIMITED:     http.StatusTooManyRequests,
	model.EUNAVAILABLE:     http.StatusServiceUnavailable,
	model.EINTERNAL:        http.StatusInternalServerError,
	model.ETOOLARGE:        http.StatusRequestEntityTooLarge,
}

// statusError is an error of the HTTP layer itself, whose status has no
// application error code: 405, 413, 415, and a body that is not the
// JSON:API shape (400 even though it has a pointer). It wraps an *Error
// for the detail and source.
type statusError struct {
	status int
	err    *model.Error
}

func (e *statusError) Error() string { return fmt.Sprintf("%d: %s", e.status, e.err.Message) }
func (e *statusError) Unwrap() error { return e.err }

// StatusErrorf is an error of the HTTP layer with its own status.
func StatusErrorf(status int, format string, args ...any) error {
	return &statusError{status: status, err: model.Errorf(model.EINVALID, format, args...)}
}

// WithStatus is e answered with status rather than its code's.
func WithStatus(status int, e *model.Error) error { return &statusError{status: status, err: e} }

// OwnStatus reports whether err carries a status of its own (StatusErrorf,
// WithStatus, a body of the wrong shape).
func OwnStatus(err error) bool {
	var se *statusError
	return errors.As(err, &se)
}

// StatusOf returns the HTTP status of err.
func StatusOf(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.status
	}
	var dup *model.DuplicateDocumentError
	if errors.As(err, &dup) {
		return http.StatusConflict
	}
	e, ok := model.AsError(err)
	if !ok {
		return http.StatusInternalServerError
	}
	// A body that is not the JSON:API shape (malformed, wrong data.type) is
	// a 400; a well-formed body whose values do not fit is a 422.
	if e.Code == model.EINVALID && (e.Field != "" || e.Pointer != "" && e.Pointer != "/" && e.Pointer != "/data/type") {
		return http.StatusUnprocessableEntity
	}
	return statuses[e.Code]
}

// WriteError answers err as a JSON:API error document. Internal errors are
// logged with the request id and answered with a generic message.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	status := StatusOf(err)
	obj := ErrorObject{Status: strconv.Itoa(status), Title: http.StatusText(status)}
	if e, ok := model.AsError(err); ok && status != http.StatusInternalServerError {
		obj.Detail = e.Message
		if p := pointer(e); p != "" || e.Parameter != "" {
			obj.Source = &ErrorSource{Pointer: p, Parameter: e.Parameter}
		}
		duplicateDocument(err, &obj)
	} else {
		if r.Context().Err() != nil {
			// The client went away mid-request: its statements were
			// cancelled, which is no bug of ours.
			slog.InfoContext(r.Context(), "request cancelled", "request_id", RequestID(r), "method", r.Method, "path", r.URL.Path, "err", err)
		} else {
			slog.ErrorContext(r.Context(), "internal error", "request_id", RequestID(r), "method", r.Method, "path", r.URL.Path, "err", err)
		}
		obj.Detail = "internal error"
		if id := RequestID(r); id != "" {
			obj.Detail = "internal error (request " + id + ")"
		}
	}
	switch status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Token realm="shipgraph"`)
	case http.StatusServiceUnavailable:
		// The database is down, restarting, out of connections or timed
		// out: worth trying again shortly.
		if w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", RetryAfter)
		}
		slog.WarnContext(r.Context(), "unavailable", "request_id", RequestID(r), "method", r.Method, "path", r.URL.Path, "err", err)
	}
	WriteErrors(w, status, obj)
}

// pointer is the JSON pointer of the body member an error names: its own
// (a body of the wrong shape), or the attribute of its input field.
func pointer(e *model.Error) string {
	switch e.Field {
	case "":
		return e.Pointer
	case model.WholeInput:
		return "/data"
	}
	return "/data/attributes/" + e.Field
}

// RetryAfter is the Retry-After (seconds) of a 503: a database restart or
// a burst of connections is usually over within it.
const RetryAfter = "2"

// WriteErrors writes a JSON:API error document with the given status.
func WriteErrors(w http.ResponseWriter, status int, errs ...ErrorObject) {
	w.Header().Set("Content-Type", MediaType)
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Errors []ErrorObject `json:"errors"`
	}{errs})
}

// RequestID returns the request id the server middleware put on r.
func RequestID(r *http.Request) string { return r.Header.Get("X-Request-Id") }

// duplicateDocument fills the 409 of a file the account already has as a
// document: code duplicate_document, the existing document in meta.
func duplicateDocument(err error, obj *ErrorObject) {
	var dup *model.DuplicateDocumentError
	if errors.As(err, &dup) {
		obj.Code, obj.Title = "duplicate_document", "Duplicate document"
		obj.Meta = map[string]string{"existing_document_id": dup.ExistingID, "existing_document_name": dup.ExistingName}
	}
}
