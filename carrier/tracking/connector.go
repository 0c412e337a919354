package tracking

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"shipgraph/carrier/dcsa"
)

// Query selects the events of one number: exactly one field is set.
type Query struct {
	TransportDocumentReference string
	CarrierBookingReference    string
	EquipmentReference         string
}

// queryFor maps a request type to its DCSA filter.
func queryFor(requestType, number string) Query {
	switch requestType {
	case "booking_number":
		return Query{CarrierBookingReference: number}
	case "container":
		return Query{EquipmentReference: number}
	}
	return Query{TransportDocumentReference: number}
}

// Connector is one carrier's Track & Trace source.
type Connector interface {
	// Events returns every event of q (all pages), or ErrNotFound, or a
	// *CarrierError.
	Events(ctx context.Context, q Query) ([]dcsa.Event, error)
}

// ErrNotFound: the carrier does not know the number.
var ErrNotFound = errors.New("carrier: number not found")

// Kind classifies a carrier failure.
type Kind int

const (
	// Unreachable: no answer, a timeout, a 5xx or 429.
	Unreachable Kind = iota + 1
	// Unrecognized: an answer that is not DCSA T&T v2.2 (malformed,
	// oversized, missing fields).
	Unrecognized
	// Unauthorized: the carrier refused the credentials (401, 403).
	Unauthorized
)

// CarrierError is a classified carrier failure.
type CarrierError struct {
	Kind Kind
	Err  error
}

func (e *CarrierError) Error() string {
	return [...]string{"", "unreachable", "unrecognized response", "unauthorized"}[e.Kind] + ": " + e.Err.Error()
}

func (e *CarrierError) Unwrap() error { return e.Err }

// dcsaConnector is a carrier's DCSA Track & Trace v2.2 API through
// carrier/dcsa's client, its failures classified for the engine.
type dcsaConnector struct {
	c         *dcsa.Client
	maxEvents int
}

// newDCSAConnector is carrier k's connector. Each carrier has a
// transport of its own that keeps as many idle
// connections as the carrier may have requests in flight (its
// Concurrency, at most workers; workers when it has no bound): the
// default transport keeps two a host, so each burst of polls closed all
// but two of its connections and dialed them again for the next one (a
// TCP connect and, to a carrier, a TLS handshake per poll: ~2 % of the
// benchmark's Go process over loopback HTTP, without TLS).
func newDCSAConnector(k Carrier, maxBytes int64, maxEvents, workers int) (*dcsaConnector, error) {
	idle := workers
	if k.Concurrency > 0 && k.Concurrency < workers {
		idle = k.Concurrency
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost, tr.MaxIdleConns = max(idle, 2), max(idle, 2, tr.MaxIdleConns)
	cfg := dcsa.Config{BaseURL: k.BaseURL, Timeout: k.Timeout, MaxBodyBytes: maxBytes, HTTPClient: &http.Client{Transport: tr}}
	if k.APIKey != "" {
		cfg.APIKey, cfg.APIKeyHeader = k.APIKey, k.APIKeyHeader
	}
	if k.ClientID != "" {
		cfg.OAuth2 = &dcsa.OAuth2{TokenURL: k.TokenURL, ClientID: k.ClientID, ClientSecret: k.ClientSecret}
	}
	c, err := dcsa.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("CARRIERS: %s: %w", k.SCAC, err)
	}
	return &dcsaConnector{c: c, maxEvents: maxEvents}, nil
}

func (d *dcsaConnector) Events(ctx context.Context, q Query) ([]dcsa.Event, error) {
	events, err := d.c.Events(ctx, dcsa.Query{TransportDocumentReference: q.TransportDocumentReference,
		CarrierBookingReference: q.CarrierBookingReference, EquipmentReference: q.EquipmentReference})
	switch {
	case errors.Is(err, dcsa.ErrNotFound):
		return nil, ErrNotFound
	case err != nil && ctx.Err() != nil:
		return nil, &CarrierError{Unreachable, err}
	case err != nil:
		switch dcsa.KindOf(err) {
		case dcsa.Unauthorized:
			return nil, &CarrierError{Unauthorized, err}
		case dcsa.Unrecognized, dcsa.Rejected:
			// Rejected: the carrier refused the request itself (a 4xx);
			// retried like nonsense, a few times over a day, then failed.
			return nil, &CarrierError{Unrecognized, err}
		}
		return nil, &CarrierError{Unreachable, err}
	case len(events) == 0:
		return nil, ErrNotFound
	case len(events) > d.maxEvents:
		return nil, &CarrierError{Unrecognized, fmt.Errorf("more than %d events", d.maxEvents)}
	}
	for i := range events {
		if events[i].EventID == "" {
			return nil, &CarrierError{Unrecognized, fmt.Errorf("event %d: eventID missing", i)}
		}
	}
	return events, nil
}
