package dcsa

import (
	"errors"
	"fmt"
	"time"
)

// ErrNotFound says the carrier does not know the reference. DCSA v2.2
// defines no answer for it: GET /v2/events is a filtered list, so a carrier
// that follows the standard answers an empty list (200 []), and some answer
// 404 with the DCSA error object. Both come back as ErrNotFound: a first
// page that is empty (unless the query narrowed the event types, when an
// empty list is simply no events of those types), or a 404 whose body is
// a DCSA error object (a 404 of anything else, such as a proxy's page, is
// Unrecognized: the base URL is probably wrong).
var ErrNotFound = errors.New("dcsa: the carrier does not know the reference")

// ErrInvalidQuery says the Query itself is wrong (the caller's mistake).
var ErrInvalidQuery = errors.New("dcsa: invalid query")

// Kind classifies a failure for the caller, who retries or gives up on it.
type Kind int

const (
	// Unreachable: the carrier did not answer, or not now (connection
	// refused or reset, timeout, 5xx, 429, 408). Retry later, after
	// RetryAfter when the carrier gave one.
	Unreachable Kind = iota + 1
	// Unrecognized: the carrier answered something that is not DCSA v2.2
	// (malformed JSON, wrong types, an event lacking required fields, a
	// body over MaxBodyBytes, more than MaxPages pages, a Next-Page off the
	// carrier's host). Retrying rarely helps; report it.
	Unrecognized
	// Unauthorized: the carrier refused our credentials (401, 403, or the
	// OAuth2 token endpoint refusing the client). Fix the configuration.
	Unauthorized
	// Rejected: the carrier refused the request itself (another 4xx, such
	// as 400 for a reference it finds malformed). Do not retry as is.
	Rejected
)

func (k Kind) String() string {
	switch k {
	case Unreachable:
		return "unreachable"
	case Unrecognized:
		return "unrecognized"
	case Unauthorized:
		return "unauthorized"
	case Rejected:
		return "rejected"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Error is a classified failure of a call to a carrier.
type Error struct {
	Kind       Kind
	Status     int           // the HTTP status, 0 when there was no answer
	RetryAfter time.Duration // from Retry-After on 429 and 5xx, 0 when absent
	URL        string        // the page requested
	Detail     string        // the carrier's own words (a DCSA error's reasons), if any
	Err        error         // the cause, if any
}

func (e *Error) Error() string {
	msg := "dcsa: " + e.Kind.String() + ": GET " + e.URL
	if e.Status != 0 {
		msg += fmt.Sprintf(": status %d", e.Status)
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of err when it is (or wraps) an *Error, else 0.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}
