package tracking

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

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

// httpConnector polls GET {base}/v2/events, following Next-Page.
type httpConnector struct {
	c           Carrier
	client      *http.Client
	maxBytes    int64
	maxEvents   int
	tokMu       sync.Mutex
	token       string
	tokenExpiry time.Time
}

func newHTTPConnector(c Carrier, maxBytes int64, maxEvents int) *httpConnector {
	return &httpConnector{c: c, client: &http.Client{Timeout: c.Timeout}, maxBytes: maxBytes, maxEvents: maxEvents}
}

func (h *httpConnector) Events(ctx context.Context, q Query) ([]dcsa.Event, error) {
	v := url.Values{}
	switch {
	case q.TransportDocumentReference != "":
		v.Set("transportDocumentReference", q.TransportDocumentReference)
	case q.CarrierBookingReference != "":
		v.Set("carrierBookingReference", q.CarrierBookingReference)
	default:
		v.Set("equipmentReference", q.EquipmentReference)
	}
	v.Set("limit", "500")
	next := h.c.BaseURL + "/v2/events?" + v.Encode()
	var all []dcsa.Event
	budget := h.maxBytes
	for page := 0; next != ""; page++ {
		if page > 100 {
			return nil, &CarrierError{Unrecognized, errors.New("more than 100 pages")}
		}
		events, nextURL, n, err := h.page(ctx, next, budget)
		if err != nil {
			if errors.Is(err, ErrNotFound) && page > 0 {
				return nil, &CarrierError{Unrecognized, errors.New("a later page not found")}
			}
			return nil, err
		}
		budget -= n
		all = append(all, events...)
		if len(all) > h.maxEvents {
			return nil, &CarrierError{Unrecognized, fmt.Errorf("more than %d events", h.maxEvents)}
		}
		next = nextURL
	}
	if len(all) == 0 {
		return nil, ErrNotFound
	}
	return all, nil
}

func (h *httpConnector) page(ctx context.Context, u string, budget int64) ([]dcsa.Event, string, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", 0, &CarrierError{Unrecognized, err}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("API-Version", "2")
	if err := h.authorize(ctx, req); err != nil {
		return nil, "", 0, err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, "", 0, &CarrierError{Unreachable, err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, budget+1))
	if err != nil {
		return nil, "", 0, &CarrierError{Unreachable, err}
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, "", 0, ErrNotFound
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		h.tokMu.Lock()
		h.token = ""
		h.tokMu.Unlock()
		return nil, "", 0, &CarrierError{Unauthorized, fmt.Errorf("status %d", resp.StatusCode)}
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return nil, "", 0, &CarrierError{Unreachable, fmt.Errorf("status %d", resp.StatusCode)}
	case resp.StatusCode != http.StatusOK:
		return nil, "", 0, &CarrierError{Unrecognized, fmt.Errorf("status %d", resp.StatusCode)}
	}
	if int64(len(body)) > budget {
		return nil, "", 0, &CarrierError{Unrecognized, fmt.Errorf("answer larger than %d bytes", h.maxBytes)}
	}
	var events []dcsa.Event
	if err := json.Unmarshal(body, &events); err != nil {
		return nil, "", 0, &CarrierError{Unrecognized, err}
	}
	for i := range events {
		if err := events[i].Validate(); err != nil {
			return nil, "", 0, &CarrierError{Unrecognized, fmt.Errorf("event %d: %w", i, err)}
		}
		if events[i].EventID == "" {
			return nil, "", 0, &CarrierError{Unrecognized, fmt.Errorf("event %d: eventID missing", i)}
		}
	}
	return events, resp.Header.Get("Next-Page"), int64(len(body)), nil
}

// authorize adds the carrier's credentials: an API key, or an OAuth2
// client-credentials bearer token (fetched once, kept until a minute
// before it expires).
func (h *httpConnector) authorize(ctx context.Context, req *http.Request) error {
	if h.c.APIKey != "" {
		req.Header.Set(h.c.APIKeyHeader, h.c.APIKey)
		return nil
	}
	if h.c.ClientID == "" {
		return nil
	}
	h.tokMu.Lock()
	defer h.tokMu.Unlock()
	if h.token == "" || time.Now().After(h.tokenExpiry) {
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {h.c.ClientID}, "client_secret": {h.c.ClientSecret}}
		treq, err := http.NewRequestWithContext(ctx, http.MethodPost, h.c.TokenURL, strings.NewReader(form.Encode()))
		if err != nil {
			return &CarrierError{Unauthorized, err}
		}
		treq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		treq.SetBasicAuth(url.QueryEscape(h.c.ClientID), url.QueryEscape(h.c.ClientSecret))
		resp, err := h.client.Do(treq)
		if err != nil {
			return &CarrierError{Unreachable, err}
		}
		defer resp.Body.Close()
		var tok struct {
			AccessToken string `json:"access_token"`
			ExpiresIn   int    `json:"expires_in"`
		}
		if resp.StatusCode != http.StatusOK {
			return &CarrierError{Unauthorized, fmt.Errorf("token endpoint: status %d", resp.StatusCode)}
		}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&tok); err != nil || tok.AccessToken == "" {
			return &CarrierError{Unrecognized, fmt.Errorf("token endpoint: %v", err)}
		}
		h.token = tok.AccessToken
		h.tokenExpiry = time.Now().Add(time.Duration(max(tok.ExpiresIn-60, 30)) * time.Second)
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	return nil
}
