package dcsa

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Config says how to reach one carrier's Track & Trace API.
type Config struct {
	// BaseURL is the carrier's T&T base, before /v2/events
	// ("https://api.carrier.example/track-and-trace").
	BaseURL string

	// An API key sent in header APIKeyHeader (both set), or OAuth2 client
	// credentials (OAuth2 set), or neither.
	APIKeyHeader string
	APIKey       string
	OAuth2       *OAuth2

	// Timeout bounds each page's request, token fetch included (default 30s).
	Timeout time.Duration
	// MaxBodyBytes caps each page's body (default 4 MiB).
	MaxBodyBytes int64
	// MaxPages caps the pages of one Events call (default 20).
	MaxPages int
	// PageSize is the limit asked per page when the Query sets none
	// (default 100, the standard's default).
	PageSize int
	// HTTPClient, when set, carries the requests (its Transport and
	// CheckRedirect are kept; the per-page Timeout applies on top).
	HTTPClient *http.Client
	// UserAgent of the requests (default "shipgraph-dcsa/2.2").
	UserAgent string
}

// OAuth2 are client credentials (RFC 6749 4.4) for a carrier's token URL.
type OAuth2 struct {
	TokenURL     string
	ClientID     string
	ClientSecret string
	Scopes       []string
}

// Query selects the events of exactly one reference, optionally of some
// event types only, Limit events per page (0: Config.PageSize).
type Query struct {
	TransportDocumentReference string
	CarrierBookingReference    string
	EquipmentReference         string
	EventTypes                 []EventType
	Limit                      int
}

// Client polls one carrier. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base *url.URL
	hc   *http.Client
}

// New checks cfg and builds its client.
func New(cfg Config) (*Client, error) {
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("dcsa: BaseURL %q: an absolute http(s) URL", cfg.BaseURL)
	}
	if (cfg.APIKey == "") != (cfg.APIKeyHeader == "") {
		return nil, errors.New("dcsa: APIKey and APIKeyHeader go together")
	}
	if cfg.APIKey != "" && cfg.OAuth2 != nil {
		return nil, errors.New("dcsa: an API key or OAuth2 client credentials, not both")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 4 << 20
	}
	if cfg.MaxPages <= 0 {
		cfg.MaxPages = 20
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 100
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "shipgraph-dcsa/2.2"
	}
	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		*hc = *cfg.HTTPClient
	}
	if o := cfg.OAuth2; o != nil {
		if o.TokenURL == "" || o.ClientID == "" {
			return nil, errors.New("dcsa: OAuth2 needs TokenURL and ClientID")
		}
		cc := &clientcredentials.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, TokenURL: o.TokenURL, Scopes: o.Scopes}
		// Token fetches use the same transport, bounded by the same timeout.
		tokenClient := &http.Client{Transport: hc.Transport, Timeout: cfg.Timeout}
		src := cc.TokenSource(context.WithValue(context.Background(), oauth2.HTTPClient, tokenClient))
		base := hc.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		hc.Transport = &oauth2.Transport{Source: src, Base: base}
	}
	return &Client{cfg: cfg, base: base, hc: hc}, nil
}

func (q Query) check() error {
	n := 0
	for _, r := range []string{q.TransportDocumentReference, q.CarrierBookingReference, q.EquipmentReference} {
		if r != "" {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%w: exactly one of TransportDocumentReference, CarrierBookingReference, EquipmentReference", ErrInvalidQuery)
	}
	for _, t := range q.EventTypes {
		if !t.Valid() {
			return fmt.Errorf("%w: event type %q", ErrInvalidQuery, t)
		}
	}
	if q.Limit < 0 {
		return fmt.Errorf("%w: negative limit", ErrInvalidQuery)
	}
	return nil
}

// Transport is the round tripper the client's requests go through
// (nil: http.DefaultTransport).
func (c *Client) Transport() http.RoundTripper { return c.hc.Transport }

// Events returns every event of q's reference, following the Next-Page
// cursor to the last page, oldest page first; an event repeated on a later
// page (same eventID) is kept once. It fails with ErrInvalidQuery,
// ErrNotFound, an *Error (see Kind), or ctx's error when ctx ends.
func (c *Client) Events(ctx context.Context, q Query) ([]Event, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	u := c.base.JoinPath("v2", "events")
	v := u.Query()
	for name, val := range map[string]string{
		"transportDocumentReference": q.TransportDocumentReference,
		"carrierBookingReference":    q.CarrierBookingReference,
		"equipmentReference":         q.EquipmentReference,
	} {
		if val != "" {
			v.Set(name, val)
		}
	}
	if len(q.EventTypes) > 0 {
		types := make([]string, len(q.EventTypes))
		for i, t := range q.EventTypes {
			types[i] = string(t)
		}
		v.Set("eventType", strings.Join(types, ","))
	}
	limit := q.Limit
	if limit == 0 {
		limit = c.cfg.PageSize
	}
	v.Set("limit", strconv.Itoa(limit))
	u.RawQuery = v.Encode()

	var all []Event
	var seenEvent map[string]bool
	seenPage := map[string]bool{}
	for page := 0; ; page++ {
		if page == c.cfg.MaxPages {
			return nil, &Error{Kind: Unrecognized, URL: u.String(), Detail: fmt.Sprintf("more than %d pages", c.cfg.MaxPages)}
		}
		seenPage[u.String()] = true
		events, next, err := c.page(ctx, u, page == 0)
		if err != nil {
			return nil, err
		}
		if all == nil {
			// The first page's events kept in its own slice, in place
			// (an event is written at or before where it was read): no
			// slice grown by doubling, each event copied into it.
			all, seenEvent = events[:0], make(map[string]bool, len(events))
		}
		for _, e := range events {
			if e.EventID != "" {
				if seenEvent[e.EventID] {
					continue
				}
				seenEvent[e.EventID] = true
			}
			all = append(all, e)
		}
		if next == "" {
			break
		}
		nu, err := c.nextURL(u, next)
		if err != nil {
			return nil, err
		}
		if seenPage[nu.String()] {
			return nil, &Error{Kind: Unrecognized, URL: u.String(), Detail: "Next-Page points back to a page already read"}
		}
		u = nu
	}
	if len(all) == 0 && len(q.EventTypes) == 0 {
		return nil, ErrNotFound
	}
	return all, nil
}

// nextURL resolves a Next-Page link against the page it came with. It must
// stay on the carrier's host (the credentials go with it) and not drop
// from https to http.
func (c *Client) nextURL(cur *url.URL, link string) (*url.URL, error) {
	ref, err := url.Parse(strings.TrimSpace(link))
	if err != nil {
		return nil, &Error{Kind: Unrecognized, URL: cur.String(), Detail: "Next-Page is not a URL", Err: err}
	}
	nu := cur.ResolveReference(ref)
	if nu.Host != c.base.Host || (nu.Scheme != c.base.Scheme && nu.Scheme != "https") {
		return nil, &Error{Kind: Unrecognized, URL: cur.String(), Detail: fmt.Sprintf("Next-Page %q leaves the carrier's host", link)}
	}
	return nu, nil
}

// page fetches one page: its events and the Next-Page header.
func (c *Client) page(ctx context.Context, u *url.URL, first bool) ([]Event, string, error) {
	pctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", &Error{Kind: Unrecognized, URL: u.String(), Err: err}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("API-Version", "2")
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	if c.cfg.APIKey != "" {
		req.Header.Set(c.cfg.APIKeyHeader, c.cfg.APIKey)
	}
	fail := func(kind Kind, status int, detail string, cause error) error {
		return &Error{Kind: kind, Status: status, URL: u.String(), Detail: detail, Err: cause}
	}
	res, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err() // the caller gave up: not the carrier's fault
		}
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			if re.Response != nil && re.Response.StatusCode < 500 && re.Response.StatusCode != http.StatusTooManyRequests {
				return nil, "", fail(Unauthorized, re.Response.StatusCode, "token endpoint refused the client credentials", err)
			}
			return nil, "", fail(Unreachable, 0, "token endpoint failed", err)
		}
		return nil, "", fail(Unreachable, 0, "", err)
	}
	defer res.Body.Close()
	body, err := readBody(res.Body, res.ContentLength, c.cfg.MaxBodyBytes)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, "", fail(Unreachable, res.StatusCode, "reading the body", err)
	}
	if int64(len(body)) > c.cfg.MaxBodyBytes {
		return nil, "", fail(Unrecognized, res.StatusCode, fmt.Sprintf("body over %d bytes", c.cfg.MaxBodyBytes), nil)
	}
	status := res.StatusCode
	switch {
	case status == http.StatusOK:
		events, err := decodePage(body)
		if err != nil {
			return nil, "", fail(Unrecognized, status, "", err)
		}
		return events, res.Header.Get("Next-Page"), nil
	case status == http.StatusNotFound:
		detail, isDCSA := errorDetail(body)
		if !isDCSA {
			return nil, "", fail(Unrecognized, status, "404 without a DCSA error body: is the base URL right?", nil)
		}
		if !first {
			return nil, "", fail(Unreachable, status, "a later page vanished: "+detail, nil)
		}
		return nil, "", fmt.Errorf("%w (404: %s)", ErrNotFound, detail)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		detail, _ := errorDetail(body)
		return nil, "", fail(Unauthorized, status, detail, nil)
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500:
		detail, _ := errorDetail(body)
		e := &Error{Kind: Unreachable, Status: status, URL: u.String(), Detail: detail}
		e.RetryAfter = retryAfter(res.Header.Get("Retry-After"), time.Now())
		return nil, "", e
	case status >= 400:
		detail, _ := errorDetail(body)
		return nil, "", fail(Rejected, status, detail, nil)
	default:
		return nil, "", fail(Unrecognized, status, "unexpected status", nil)
	}
}

// readBody reads up to limit+1 bytes of r into a buffer of the announced
// size (Content-Length; -1 unknown) when it is within limit, instead of
// io.ReadAll's buffer grown from 512 bytes (a page's body allocated about
// twice over); a body longer than announced is read on as io.ReadAll would.
func readBody(r io.Reader, size, limit int64) ([]byte, error) {
	lr := io.LimitReader(r, limit+1)
	if size < 0 || size > limit {
		return io.ReadAll(lr)
	}
	b := make([]byte, 0, size+1)
	for {
		n, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		switch {
		case err == io.EOF:
			return b, nil
		case err != nil:
			return b, err
		case len(b) == cap(b):
			rest, err := io.ReadAll(lr)
			return append(b, rest...), err
		}
	}
}

// decodeOptions are encoding/json's semantics where a page is plain
// (plainPage): names matched without case, invalid UTF-8 taken as U+FFFD.
// Duplicate names are refused here: encoding/json merges a repeated member
// into what the first one decoded (a later null keeps the earlier value,
// a later array reuses the earlier elements), so a page that repeats one
// is decoded by encoding/json itself. Only the root packages' options: the
// go-json-experiment/json/v1 package, whose DefaultOptionsV1 said all of
// encoding/json's semantics in one option, put 16 KB into the image
// (docs/decisions.md, "The image's bound taken back").
var decodeOptions = jsonv2.JoinOptions(
	jsonv2.MatchCaseInsensitiveNames(true),
	jsontext.AllowInvalidUTF8(true),
	jsontext.AllowDuplicateNames(false),
)

// decodePage reads a page's body: a JSON array of events that each pass
// Event.Validate, each with its own JSON (Event.Raw, the element's bytes as
// sent). JSON null is an empty page. NUL characters are refused
// (PostgreSQL, where the events go, cannot hold them in text): JSON writes
// one only as \u0000 (no lowered copy of the body to look for it: its hex
// digits have no case, and \U is not JSON).
//
// The page is read in one pass by a streaming decoder
// (github.com/go-json-experiment/json, with encoding/json's semantics:
// decodeOptions), each element decoded straight from the body into its
// event, its Raw cut from the body by the decoder's offsets: json.Unmarshal
// scanned the whole body to validate it before decoding it, then copied each
// element through Event.UnmarshalJSON into a second decode (docs/tracking.md,
// "The carrier's page decoded in one pass").
func decodePage(body []byte) ([]Event, error) {
	if bytes.Contains(body, []byte(`\u0000`)) {
		return nil, errors.New("a string holds a NUL character")
	}
	var events []Event
	plain := plainPage(body)
	var err error
	if plain {
		events, err = decodeEvents(body)
	}
	if err != nil || !plain {
		// What the one pass does not decode as encoding/json would (an
		// escape, a name with '_' or '-', a repeated name), or what it
		// refused: encoding/json decides, each event's Raw kept by
		// Event.UnmarshalJSON. A page it refuses too is refused with the
		// one pass's error (the member's JSON pointer), when there is one.
		var slow []Event
		if serr := json.Unmarshal(body, &slow); serr != nil {
			return nil, fmt.Errorf("not a JSON array of DCSA events: %w", cmp.Or(err, serr))
		}
		events, err = slow, nil
	}
	for i := range events {
		if err := events[i].Validate(); err != nil {
			return nil, fmt.Errorf("event %d (%q): %w", i, events[i].EventID, err)
		}
	}
	return events, nil
}

// plainPage reports whether body holds no escape and no member name with
// a '_' or a '-': a page the one pass decodes as encoding/json would. The
// one pass's case-insensitive match also ignores '_' and '-' in a name,
// encoding/json's does not; it unquotes a time's string before parsing it,
// encoding/json hands time.Time.UnmarshalJSON the string as sent (escapes
// refused). Without escapes a string ends at the next '"': a '_' or '-' in
// a string followed by ':' is a name's. In doubt not plain (the page is
// then decoded by encoding/json: as before the one pass, never wrong).
func plainPage(body []byte) bool {
	if bytes.IndexByte(body, '\\') >= 0 {
		return false
	}
	for _, c := range []byte{'_', '-'} {
		for i := 0; ; {
			j := bytes.IndexByte(body[i:], c)
			if j < 0 {
				break
			}
			q := bytes.IndexByte(body[i+j:], '"')
			if q < 0 {
				break
			}
			// Past the string's end (or, for a byte outside any string,
			// past the next string's start: what follows is looked at
			// again).
			i += j + q + 1
			k := i
			for k < len(body) && (body[k] == ' ' || body[k] == '\t' || body[k] == '\r' || body[k] == '\n') {
				k++
			}
			if k < len(body) && body[k] == ':' {
				return false
			}
		}
	}
	return true
}

// decoders are the pages' decoders, reused: a decoder keeps its cache of
// the short strings it decoded (jsontext.Decoder's StringCache, 256
// entries of up to 256 bytes, which Reset leaves), so the codes, places
// and vessels a carrier repeats page after page are decoded into the
// strings of an earlier page instead of new ones, and the cache (4 KB) is
// not made again for every page.
var decoders = sync.Pool{New: func() any { return jsontext.NewDecoder(noBody) }}

// noBody is what a decoder in the pool reads: nothing (it is never read).
var noBody = new(bytes.Buffer)

// decodeEvents decodes a JSON array of events (null: none), each element
// with its own bytes as Raw, and nothing after the array but whitespace.
func decodeEvents(body []byte) ([]Event, error) {
	dec := decoders.Get().(*jsontext.Decoder)
	dec.Reset(bytes.NewBuffer(body), decodeOptions)
	defer func() {
		dec.Reset(noBody) // the page is not kept by the pool
		decoders.Put(dec)
	}()
	var events []Event
	switch k := dec.PeekKind(); k {
	case 'n':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		// A page's length is not announced: about 600 bytes an event
		// (the simulator's 550-1,000) sizes the slice once for most pages.
		events = make([]Event, 0, len(body)/600+1)
		// The events' Raw are slices of one copy of the body (one
		// allocation a page instead of one an event; the caller's
		// buffer is not kept).
		kept := bytes.Clone(body)
		for dec.PeekKind() != ']' {
			start := dec.InputOffset()
			events = append(events, Event{})
			e := &events[len(events)-1]
			if err := jsonv2.UnmarshalDecode(dec, (*plainEvent)(e)); err != nil {
				return nil, err
			}
			// The element's bytes: from the end of what came before
			// (the '[' or the previous element) past the separator.
			end := dec.InputOffset()
			for start < end && (body[start] == ' ' || body[start] == '\t' || body[start] == '\r' || body[start] == '\n' || body[start] == ',') {
				start++
			}
			e.Raw = json.RawMessage(kept[start:end:end])
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
	default:
		if _, err := dec.ReadValue(); err == io.EOF {
			return nil, errors.New("an empty body")
		} else if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("a JSON %s, not an array", kindName(k))
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("more JSON after the array")
		}
		return nil, err
	}
	return events, nil
}

// kindName names a JSON value's kind in an error.
func kindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "object"
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	}
	return "value"
}

// errorDetail reads a DCSA error object's reasons, reporting whether body
// was one.
func errorDetail(body []byte) (string, bool) {
	var e ErrorResponse
	if json.Unmarshal(body, &e) != nil || e.StatusCode == 0 {
		return "", false
	}
	var parts []string
	for _, s := range e.Errors {
		parts = append(parts, strings.TrimSpace(s.Reason+": "+s.Message))
	}
	d := strings.Join(parts, "; ")
	if len(d) > 500 {
		d = d[:500]
	}
	return d, true
}

// retryAfter reads Retry-After: seconds or an HTTP date; 0 when absent,
// unreadable or past; at most a day.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.Atoi(h); err == nil {
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), 24*time.Hour)
}
