package tracking

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is the engine's configuration; Default holds the defaults (the
// settings are declared in package config; package app fills this in).
type Config struct {
	// Carriers are the configured connectors (CARRIERS).
	Carriers []Carrier
	// Workers is how many polls run at once in this process
	// (TRACKING_WORKERS); 0: this process runs none (it still enqueues).
	Workers int
	// Writers is how many transactions write polls at once in this
	// process on plain PostgreSQL (TRACKING_WRITERS), each a batch of
	// polls of several accounts (on Citus one account's each, unbounded).
	Writers int
	// PollInterval is how often a tracked request is polled again
	// (TRACKING_POLL_INTERVAL).
	PollInterval time.Duration
	// AwaitingInterval is how often a request awaiting its manifest is
	// polled again (TRACKING_AWAITING_INTERVAL).
	AwaitingInterval time.Duration
	// RetryBase is the first retry's delay after a carrier failure,
	// doubling per failure (TRACKING_RETRY_BASE).
	RetryBase time.Duration
	// MaxAttempts is how many failed polls in a row end a request that was
	// never tracked (TRACKING_MAX_ATTEMPTS).
	MaxAttempts int
	// ScheduleEvery is how often the leader enqueues the due requests
	// (TRACKING_SCHEDULE_EVERY); every process that polls does once as
	// it starts.
	ScheduleEvery time.Duration
	// ScheduleBatch is the most requests enqueued per round.
	ScheduleBatch int
	// PollTimeout bounds one poll (TRACKING_POLL_TIMEOUT; River's job timeout).
	PollTimeout time.Duration
	// RescueAfter: a poll job still running after this long (its process
	// died) is retried by River (TRACKING_RESCUE_AFTER; > PollTimeout).
	RescueAfter time.Duration
	// StopAfterArrival stops tracking a shipment this long after it
	// arrived (TRACKING_STOP_AFTER_ARRIVAL); 0 never.
	StopAfterArrival time.Duration
	// MaxResponse is the largest carrier answer in bytes
	// (TRACKING_MAX_RESPONSE); beyond it nothing is written.
	MaxResponse int64
	// MaxEvents is the most events one answer may hold (TRACKING_MAX_EVENTS).
	MaxEvents int
	// RefreshLimit is how many container refreshes one API key may ask a
	// minute (TRACKING_REFRESH_LIMIT).
	RefreshLimit int
}

// Carrier is one carrier's connector configuration.
type Carrier struct {
	SCAC string
	// BaseURL is the carrier's Track & Trace base, before /v2/events.
	BaseURL string
	// APIKey is sent in APIKeyHeader (CARRIER_<SCAC>_API_KEY,
	// CARRIER_<SCAC>_API_KEY_HEADER, default API-Key).
	APIKey, APIKeyHeader string
	// OAuth2 client credentials (CARRIER_<SCAC>_CLIENT_ID, _CLIENT_SECRET,
	// _TOKEN_URL).
	ClientID, ClientSecret, TokenURL string
	// RatePerMinute is the most requests a minute to this carrier over
	// every instance (CARRIER_<SCAC>_RATE); 0 no limit.
	RatePerMinute int
	// Concurrency is the most requests in flight to this carrier over every
	// instance (CARRIER_<SCAC>_CONCURRENCY); 0 no limit.
	Concurrency int
	// Timeout bounds one request to the carrier (CARRIER_<SCAC>_TIMEOUT).
	Timeout time.Duration
}

// Default is the configuration with no setting given.
var Default = Config{
	Workers:          50,
	Writers:          2,
	PollInterval:     time.Hour,
	AwaitingInterval: 30 * time.Minute,
	RetryBase:        10 * time.Second,
	MaxAttempts:      14,
	ScheduleEvery:    5 * time.Second,
	ScheduleBatch:    1000,
	PollTimeout:      time.Minute,
	RescueAfter:      5 * time.Minute,
	StopAfterArrival: 45 * 24 * time.Hour,
	MaxResponse:      8 << 20,
	MaxEvents:        5000,
	RefreshLimit:     10,
}

// DefaultCarrier holds a carrier's defaults.
var DefaultCarrier = Carrier{APIKeyHeader: "API-Key", RatePerMinute: 600, Concurrency: 8, Timeout: 30 * time.Second}

// ParseCarriers reads CARRIERS (list: comma-separated SCAC=URL) and each
// carrier's CARRIER_<SCAC>_* settings (member returns the value of the
// family member named by what follows "CARRIER_", "" when unset), from
// DefaultCarrier. An error names the setting and what is wrong with it.
// The settings themselves are declared in package config.
func ParseCarriers(list string, member func(suffix string) string) ([]Carrier, error) {
	var out []Carrier
	list = strings.TrimSpace(list)
	if list == "" {
		return nil, nil
	}
	for _, item := range strings.Split(list, ",") {
		scac, base, ok := strings.Cut(strings.TrimSpace(item), "=")
		scac = strings.ToUpper(strings.TrimSpace(scac))
		if !ok || len(scac) != 4 {
			return nil, fmt.Errorf("CARRIERS: %q is not SCAC=URL (a four-letter SCAC, then the carrier's Track & Trace base URL)", item)
		}
		u, err := url.Parse(strings.TrimSpace(base))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("CARRIERS: %s: %q is not an http(s) URL", scac, base)
		}
		if slices.ContainsFunc(out, func(k Carrier) bool { return k.SCAC == scac }) {
			return nil, fmt.Errorf("CARRIERS: %s is listed twice", scac)
		}
		k := DefaultCarrier
		k.SCAC, k.BaseURL = scac, strings.TrimSuffix(u.String(), "/")
		get := func(name string) string { return member(scac + "_" + name) }
		p := "CARRIER_" + scac + "_"
		k.APIKey = get("API_KEY")
		if v := get("API_KEY_HEADER"); v != "" {
			k.APIKeyHeader = v
		}
		k.ClientID, k.ClientSecret, k.TokenURL = get("CLIENT_ID"), get("CLIENT_SECRET"), get("TOKEN_URL")
		if n := btoi(k.ClientID != "") + btoi(k.ClientSecret != "") + btoi(k.TokenURL != ""); n != 0 && n != 3 {
			return nil, fmt.Errorf("%sCLIENT_ID, %sCLIENT_SECRET and %sTOKEN_URL: OAuth2 needs all three", p, p, p)
		}
		if k.APIKey != "" && k.ClientID != "" {
			return nil, fmt.Errorf("%sAPI_KEY and %sCLIENT_ID: one way to authenticate, not both", p, p)
		}
		for _, d := range []struct {
			name string
			dst  *int
		}{{"RATE", &k.RatePerMinute}, {"CONCURRENCY", &k.Concurrency}} {
			if v := get(d.name); v != "" {
				x, err := strconv.Atoi(v)
				if err != nil || x < 0 {
					return nil, fmt.Errorf("%s%s: %q is not a whole number ≥ 0", p, d.name, v)
				}
				*d.dst = x
			}
		}
		if v := get("TIMEOUT"); v != "" {
			x, err := time.ParseDuration(v)
			if err != nil || x <= 0 {
				return nil, fmt.Errorf("%sTIMEOUT: %q is not a duration > 0", p, v)
			}
			k.Timeout = x
		}
		out = append(out, k)
	}
	return out, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Check reports a configuration the engine cannot run with.
func (c Config) Check() error {
	switch {
	case c.PollInterval <= 0:
		return fmt.Errorf("TRACKING_POLL_INTERVAL: must be > 0")
	case c.AwaitingInterval <= 0:
		return fmt.Errorf("TRACKING_AWAITING_INTERVAL: must be > 0")
	case c.RetryBase <= 0:
		return fmt.Errorf("TRACKING_RETRY_BASE: must be > 0")
	case c.MaxAttempts < 1:
		return fmt.Errorf("TRACKING_MAX_ATTEMPTS: must be ≥ 1")
	case c.ScheduleEvery <= 0:
		return fmt.Errorf("TRACKING_SCHEDULE_EVERY: must be > 0")
	case c.Writers < 1:
		return fmt.Errorf("TRACKING_WRITERS: must be ≥ 1")
	case c.PollTimeout <= 0:
		return fmt.Errorf("TRACKING_POLL_TIMEOUT: must be > 0")
	case c.RescueAfter <= c.PollTimeout:
		return fmt.Errorf("TRACKING_RESCUE_AFTER (%s): must be more than TRACKING_POLL_TIMEOUT (%s)", c.RescueAfter, c.PollTimeout)
	}
	return nil
}
