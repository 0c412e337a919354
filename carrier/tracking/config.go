package tracking

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is the engine's configuration; Default holds the defaults and
// FromEnv reads it from the environment.
type Config struct {
	// Carriers are the configured connectors (CARRIERS).
	Carriers []Carrier
	// Workers is how many polls run at once in this process
	// (TRACKING_WORKERS); 0: this process runs none (it still enqueues).
	Workers int
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
	// (TRACKING_SCHEDULE_EVERY).
	ScheduleEvery time.Duration
	// ScheduleBatch is the most requests enqueued per round.
	ScheduleBatch int
	// PollTimeout bounds one poll (TRACKING_POLL_TIMEOUT; River's job timeout).
	PollTimeout time.Duration
	// RescueAfter: a poll job still running after this long (its process
	// died) is retried by River (TRACKING_RESCUE_AFTER; > PollTimeout).
	RescueAfter time.Duration
	// FetchInterval is how often River looks for jobs inserted by other
	// processes (TRACKING_FETCH_INTERVAL): over lib/pq River polls, it has
	// no LISTEN.
	FetchInterval time.Duration
	// StopAfterArrival stops tracking a shipment this long after it
	// arrived (TRACKING_STOP_AFTER_ARRIVAL); 0 never.
	StopAfterArrival time.Duration
	// MaxResponse is the largest carrier answer in bytes
	// (TRACKING_MAX_RESPONSE); beyond it nothing is written.
	MaxResponse int64
	// MaxEvents is the most events one answer may hold (TRACKING_MAX_EVENTS).
	MaxEvents int
	// PollOnly: River without LISTEN/NOTIFY (DATABASE_POOLER=pgbouncer).
	PollOnly bool
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
	Workers:          10,
	PollInterval:     time.Hour,
	AwaitingInterval: 30 * time.Minute,
	RetryBase:        10 * time.Second,
	MaxAttempts:      14,
	ScheduleEvery:    5 * time.Second,
	ScheduleBatch:    1000,
	PollTimeout:      time.Minute,
	RescueAfter:      5 * time.Minute,
	FetchInterval:    time.Second,
	StopAfterArrival: 45 * 24 * time.Hour,
	MaxResponse:      8 << 20,
	MaxEvents:        5000,
	RefreshLimit:     10,
}

// DefaultCarrier holds a carrier's defaults.
var DefaultCarrier = Carrier{APIKeyHeader: "API-Key", RatePerMinute: 600, Concurrency: 8, Timeout: 30 * time.Second}

// Setting is one setting of the engine, for the README's table.
type Setting struct{ Env, Default, Meaning string }

// Settings lists the engine's settings (CARRIER_<SCAC>_* once per carrier).
var Settings = []Setting{
	{"CARRIERS", "", "Comma-separated SCAC=URL: the carriers tracked, each with the base of its DCSA Track & Trace v2.2 API (before /v2/events). A request for a SCAC not listed fails at once (shipping_line_unreachable)."},
	{"CARRIER_<SCAC>_API_KEY", "", "API key sent to the carrier."},
	{"CARRIER_<SCAC>_API_KEY_HEADER", "API-Key", "Header the API key is sent in."},
	{"CARRIER_<SCAC>_CLIENT_ID, _CLIENT_SECRET, _TOKEN_URL", "", "OAuth2 client credentials instead of an API key (all three)."},
	{"CARRIER_<SCAC>_RATE", "600", "Requests a minute to the carrier over every instance (with REDIS_URL; else per process); 0 no limit."},
	{"CARRIER_<SCAC>_CONCURRENCY", "8", "Requests in flight to the carrier over every instance (with REDIS_URL; else per process); 0 no limit."},
	{"CARRIER_<SCAC>_TIMEOUT", "30s", "Deadline of one request to the carrier (every page)."},
	{"TRACKING_WORKERS", "10", "Polls running at once in this process; 0: this process polls nothing."},
	{"TRACKING_POLL_INTERVAL", "1h", "How often a tracked request is polled again."},
	{"TRACKING_AWAITING_INTERVAL", "30m", "How often a request awaiting its manifest is polled again."},
	{"TRACKING_RETRY_BASE", "10s", "Delay before the first retry after a carrier failure, doubling per failure (jittered)."},
	{"TRACKING_MAX_ATTEMPTS", "14", "Failed polls in a row that end a request never tracked (failed); about a day at the default base."},
	{"TRACKING_SCHEDULE_EVERY", "5s", "How often the leader enqueues the polls of requests due."},
	{"TRACKING_POLL_TIMEOUT", "1m", "Deadline of one poll (carrier and database)."},
	{"TRACKING_RESCUE_AFTER", "5m", "A poll still running this long (its process died) is run again; more than TRACKING_POLL_TIMEOUT."},
	{"TRACKING_FETCH_INTERVAL", "1s", "How often a process looks for polls enqueued by others."},
	{"TRACKING_STOP_AFTER_ARRIVAL", "1080h", "Tracking stops this long after the shipment arrived (past_arrival_window); 0 never."},
	{"TRACKING_MAX_RESPONSE", "8388608", "Largest carrier answer page in bytes; beyond it the poll writes nothing and is retried."},
	{"TRACKING_MAX_EVENTS", "5000", "Most events of one answer; beyond it the poll writes nothing and is retried."},
	{"TRACKING_REFRESH_LIMIT", "10", "Container refreshes a minute per API key (429 beyond)."},
}

// FromEnv reads the configuration from getenv (os.Getenv), starting from
// Default. An error names the setting and what is wrong with it.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Default
	durs := []struct {
		env string
		dst *time.Duration
	}{
		{"TRACKING_POLL_INTERVAL", &c.PollInterval}, {"TRACKING_AWAITING_INTERVAL", &c.AwaitingInterval},
		{"TRACKING_RETRY_BASE", &c.RetryBase}, {"TRACKING_SCHEDULE_EVERY", &c.ScheduleEvery},
		{"TRACKING_POLL_TIMEOUT", &c.PollTimeout}, {"TRACKING_RESCUE_AFTER", &c.RescueAfter},
		{"TRACKING_FETCH_INTERVAL", &c.FetchInterval}, {"TRACKING_STOP_AFTER_ARRIVAL", &c.StopAfterArrival},
	}
	for _, d := range durs {
		if v := getenv(d.env); v != "" {
			x, err := time.ParseDuration(v)
			if err != nil || x < 0 {
				return c, fmt.Errorf("%s: %q is not a duration (e.g. 30s, 1h)", d.env, v)
			}
			*d.dst = x
		}
	}
	ints := []struct {
		env string
		dst *int
	}{
		{"TRACKING_WORKERS", &c.Workers}, {"TRACKING_MAX_ATTEMPTS", &c.MaxAttempts},
		{"TRACKING_MAX_EVENTS", &c.MaxEvents}, {"TRACKING_REFRESH_LIMIT", &c.RefreshLimit},
	}
	for _, d := range ints {
		if v := getenv(d.env); v != "" {
			x, err := strconv.Atoi(v)
			if err != nil || x < 0 {
				return c, fmt.Errorf("%s: %q is not a whole number ≥ 0", d.env, v)
			}
			*d.dst = x
		}
	}
	if v := getenv("TRACKING_MAX_RESPONSE"); v != "" {
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil || x <= 0 {
			return c, fmt.Errorf("TRACKING_MAX_RESPONSE: %q is not a number of bytes > 0", v)
		}
		c.MaxResponse = x
	}
	list := strings.TrimSpace(getenv("CARRIERS"))
	if list != "" {
		for _, item := range strings.Split(list, ",") {
			scac, base, ok := strings.Cut(strings.TrimSpace(item), "=")
			scac = strings.ToUpper(strings.TrimSpace(scac))
			if !ok || len(scac) != 4 {
				return c, fmt.Errorf("CARRIERS: %q is not SCAC=URL (a four-letter SCAC, then the carrier's Track & Trace base URL)", item)
			}
			u, err := url.Parse(strings.TrimSpace(base))
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return c, fmt.Errorf("CARRIERS: %s: %q is not an http(s) URL", scac, base)
			}
			if slices.ContainsFunc(c.Carriers, func(k Carrier) bool { return k.SCAC == scac }) {
				return c, fmt.Errorf("CARRIERS: %s is listed twice", scac)
			}
			k := DefaultCarrier
			k.SCAC, k.BaseURL = scac, strings.TrimSuffix(u.String(), "/")
			p := "CARRIER_" + scac + "_"
			k.APIKey = getenv(p + "API_KEY")
			if v := getenv(p + "API_KEY_HEADER"); v != "" {
				k.APIKeyHeader = v
			}
			k.ClientID, k.ClientSecret, k.TokenURL = getenv(p+"CLIENT_ID"), getenv(p+"CLIENT_SECRET"), getenv(p+"TOKEN_URL")
			if n := btoi(k.ClientID != "") + btoi(k.ClientSecret != "") + btoi(k.TokenURL != ""); n != 0 && n != 3 {
				return c, fmt.Errorf("%sCLIENT_ID, %sCLIENT_SECRET and %sTOKEN_URL: OAuth2 needs all three", p, p, p)
			}
			if k.APIKey != "" && k.ClientID != "" {
				return c, fmt.Errorf("%sAPI_KEY and %sCLIENT_ID: one way to authenticate, not both", p, p)
			}
			for _, d := range []struct {
				env string
				dst *int
			}{{p + "RATE", &k.RatePerMinute}, {p + "CONCURRENCY", &k.Concurrency}} {
				if v := getenv(d.env); v != "" {
					x, err := strconv.Atoi(v)
					if err != nil || x < 0 {
						return c, fmt.Errorf("%s: %q is not a whole number ≥ 0", d.env, v)
					}
					*d.dst = x
				}
			}
			if v := getenv(p + "TIMEOUT"); v != "" {
				x, err := time.ParseDuration(v)
				if err != nil || x <= 0 {
					return c, fmt.Errorf("%sTIMEOUT: %q is not a duration > 0", p, v)
				}
				k.Timeout = x
			}
			c.Carriers = append(c.Carriers, k)
		}
	}
	return c, c.check()
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// check reports a configuration the engine cannot run with.
func (c Config) check() error {
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
	case c.PollTimeout <= 0:
		return fmt.Errorf("TRACKING_POLL_TIMEOUT: must be > 0")
	case c.RescueAfter <= c.PollTimeout:
		return fmt.Errorf("TRACKING_RESCUE_AFTER (%s): must be more than TRACKING_POLL_TIMEOUT (%s)", c.RescueAfter, c.PollTimeout)
	case c.FetchInterval <= 0:
		return fmt.Errorf("TRACKING_FETCH_INTERVAL: must be > 0")
	}
	return nil
}
