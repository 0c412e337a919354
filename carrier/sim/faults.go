package sim

import (
	"encoding/json"
	"fmt"
	"time"
)

// Fault modes: what a faulty carrier does instead of answering.
const (
	FaultDown          = "down"           // closes the connection without an answer
	FaultUnavailable   = "unavailable"    // 503 with Retry-After and a DCSA error body
	FaultRateLimited   = "rate_limited"   // 429 with Retry-After
	FaultServerError   = "server_error"   // 500
	FaultNotFound      = "not_found"      // 404 with a DCSA error body, as some carriers answer an unknown reference
	FaultUnauthorized  = "unauthorized"   // 401 whatever the credentials
	FaultForbidden     = "forbidden"      // 403 whatever the credentials
	FaultSlow          = "slow"           // waits Delay, then answers normally
	FaultMalformed     = "malformed"      // 200 with a truncated JSON body
	FaultWrongTypes    = "wrong_types"    // 200 with JSON whose fields have the wrong types
	FaultMissingFields = "missing_fields" // 200 with an event lacking fields the standard requires
	FaultOversized     = "oversized"      // 200 with a body of Size bytes (default 8 MiB)
)

var faultModes = map[string]bool{
	FaultDown: true, FaultUnavailable: true, FaultRateLimited: true, FaultServerError: true, FaultNotFound: true,
	FaultUnauthorized: true, FaultForbidden: true, FaultSlow: true, FaultMalformed: true, FaultWrongTypes: true,
	FaultMissingFields: true, FaultOversized: true,
}

// Fault makes the simulator misbehave for one carrier (or all: SCAC empty)
// and optionally one number (a bill of lading, booking or container number
// of the query; empty: every request of the carrier). Count > 0 applies it
// to the next Count matching requests only, after which the carrier
// recovers; 0 keeps it until the faults are replaced.
type Fault struct {
	SCAC       string   `json:"scac,omitempty"`
	Number     string   `json:"number,omitempty"`
	Mode       string   `json:"mode"`
	Delay      Duration `json:"delay,omitempty"`       // slow: how long
	RetryAfter int      `json:"retry_after,omitempty"` // unavailable, rate_limited: seconds in Retry-After (default 1)
	Size       int64    `json:"size,omitempty"`        // oversized: body bytes
	Count      int      `json:"count,omitempty"`
}

func (f Fault) check() error {
	if !faultModes[f.Mode] {
		return fmt.Errorf("fault mode %q: not one of down, unavailable, rate_limited, server_error, not_found, unauthorized, forbidden, slow, malformed, wrong_types, missing_fields, oversized", f.Mode)
	}
	if f.Count < 0 || f.RetryAfter < 0 || f.Size < 0 || f.Delay < 0 {
		return fmt.Errorf("fault %q: negative count, retry_after, size or delay", f.Mode)
	}
	return nil
}

// Duration is a time.Duration that reads and writes JSON as "1.5s".
type Duration time.Duration

// MarshalJSON writes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a Go duration string ("250ms", "2s").
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: a string such as \"2s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// SetFaults replaces the faults in force (none: every carrier healthy).
func (s *Sim) SetFaults(faults []Fault) error {
	for _, f := range faults {
		if err := f.check(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = s.faults[:0]
	for _, f := range faults {
		s.faults = append(s.faults, &f)
	}
	return nil
}

// Faults returns the faults in force, with what remains of their counts.
func (s *Sim) Faults() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Fault, 0, len(s.faults))
	for _, f := range s.faults {
		out = append(out, *f)
	}
	return out
}

// takeFault returns the first fault matching a request of scac about refs
// (counting it down, and dropping it when spent), or nil.
func (s *Sim) takeFault(scac string, refs []string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if f.SCAC != "" && f.SCAC != scac {
			continue
		}
		if f.Number != "" && !contains(refs, f.Number) {
			continue
		}
		got := *f
		if f.Count > 0 {
			f.Count--
			if f.Count == 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
		}
		return &got
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
