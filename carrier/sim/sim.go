package sim

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"shipgraph/carrier/numbers"
	"shipgraph/config"
)

// Options configure a simulator.
type Options struct {
	Seed int64
	// Now is the simulator's clock (default time.Now): an event is
	// published once its eventCreatedDateTime is not after Now().
	Now func() time.Time
	// Epoch anchors the voyages (default: Now() at New, truncated to the
	// day, UTC). At the epoch, three shipments in four have departed or are
	// about to, with containers; the fourth is booked but not manifested.
	Epoch time.Time
	// SCACs served, each under /{SCAC}/v2/events (default DefaultSCACs);
	// each must be a SCAC of shipping_lines.csv.
	SCACs []string
	// Shipments per carrier (default 12).
	Shipments int

	// Credentials. With none set every request is served. APIKey: requests
	// carrying it in header APIKeyHeader (default "API-Key") are served.
	// ClientID and ClientSecret: POST /oauth/token grants bearer tokens
	// (client credentials) valid for an hour of Now, which are served.
	APIKeyHeader string
	APIKey       string
	ClientID     string
	ClientSecret string

	// Faults in force from the start (see SetFaults).
	Faults []Fault
}

// Sim is a carrier simulator; its Handler serves every carrier.
type Sim struct {
	o     Options
	epoch time.Time
	w     *world

	mu     sync.Mutex
	faults []*Fault
	tokens map[string]time.Time // OAuth2 access token → expiry
}

// New builds the simulator's world from o. It fails on a SCAC that is not
// in the reference data, or an invalid fault.
func New(o Options) (*Sim, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Epoch.IsZero() {
		o.Epoch = o.Now().UTC().Truncate(24 * time.Hour)
	}
	if len(o.SCACs) == 0 {
		o.SCACs = DefaultSCACs
	}
	if o.Shipments <= 0 {
		o.Shipments = 12
	}
	if o.APIKeyHeader == "" {
		o.APIKeyHeader = "API-Key"
	}
	w, err := newWorld(o.Seed, o.SCACs, o.Shipments, o.Epoch)
	if err != nil {
		return nil, err
	}
	s := &Sim{o: o, epoch: o.Epoch, w: w, tokens: map[string]time.Time{}}
	if err := s.SetFaults(o.Faults); err != nil {
		return nil, err
	}
	return s, nil
}

// Epoch is the time the voyages are anchored to.
func (s *Sim) Epoch() time.Time { return s.epoch }

// Handler serves GET /{SCAC}/v2/events, GET /sim/numbers, GET and POST
// /sim/faults and POST /oauth/token.
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{scac}/v2/events", s.events)
	mux.HandleFunc("GET /sim/numbers", s.numbers)
	mux.HandleFunc("GET /sim/faults", s.getFaults)
	mux.HandleFunc("POST /sim/faults", s.postFaults)
	mux.HandleFunc("POST /oauth/token", s.token)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "notFound", "no such resource: the events of a carrier are at /{SCAC}/v2/events")
	})
	return mux
}

// Number is one number the simulator knows, as GET /sim/numbers lists it.
// State is what the number is at the epoch: "tracked" (containers and
// voyage events published) or "awaiting_manifest" (only the booking is
// confirmed; the containers gate out a few days after the epoch). Voyage
// is where its shipment is now (the simulator's clock): "not_departed",
// "at_sea" (departed, not yet at its last call: tracking goes on) or
// "finished" (arrived at its last call: a tracker stops tracking it at
// once, or soon).
type Number struct {
	RequestNumber string    `json:"request_number"`
	RequestType   string    `json:"request_type"` // bill_of_lading, booking_number or container
	SCAC          string    `json:"scac"`
	State         string    `json:"state"`
	Voyage        string    `json:"voyage"`
	DepartsAt     time.Time `json:"departs_at"` // the first leg's departure (actual, else planned)
	ArrivesAt     time.Time `json:"arrives_at"` // the last leg's arrival (actual, else planned)
}

// Voyage states of Number.
const (
	VoyageNotDeparted = "not_departed"
	VoyageAtSea       = "at_sea"
	VoyageFinished    = "finished"
)

// Numbers lists the numbers the simulator knows, in a fixed order for a
// seed: per carrier and shipment, the bill of lading, the booking number
// and the containers of tracked shipments, the booking number alone of
// shipments awaiting their manifest; each with its voyage now.
func (s *Sim) Numbers() []Number {
	now := s.o.Now()
	var out []Number
	for _, sh := range s.w.shipments {
		scac := sh.line.scac
		n := Number{SCAC: scac, State: "tracked"}
		n.Voyage, n.DepartsAt, n.ArrivesAt = sh.voyageAt(now)
		add := func(number, typ string) {
			v := n
			v.RequestNumber, v.RequestType = number, typ
			out = append(out, v)
		}
		if !sh.manifested {
			n.State = "awaiting_manifest"
			add(sh.booking, "booking_number")
			continue
		}
		add(sh.bl, "bill_of_lading")
		add(sh.booking, "booking_number")
		for _, c := range sh.containers {
			add(c.number, "container")
		}
	}
	return out
}

// voyageAt is the shipment's voyage state at now (Number.Voyage), from
// its legs' actual times (planned when there is no actual).
func (sh *shipment) voyageAt(now time.Time) (state string, departs, arrives time.Time) {
	if len(sh.legs) == 0 {
		return VoyageNotDeparted, departs, arrives
	}
	at := func(c call) time.Time {
		if !c.actual.IsZero() {
			return c.actual
		}
		return c.planned
	}
	departs, arrives = at(sh.legs[0].from), at(sh.legs[len(sh.legs)-1].to)
	switch {
	case now.Before(departs):
		return VoyageNotDeparted, departs, arrives
	case now.Before(arrives):
		return VoyageAtSea, departs, arrives
	}
	return VoyageFinished, departs, arrives
}

// AtSea is a bill of lading whose voyage is under way (Numbers), for a
// first request that keeps being tracked; false when there is none.
func (s *Sim) AtSea() (Number, bool) {
	for _, n := range s.Numbers() {
		if n.RequestType == "bill_of_lading" && n.Voyage == VoyageAtSea {
			return n, true
		}
	}
	return Number{}, false
}

func (s *Sim) numbers(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Numbers())
}

func (s *Sim) getFaults(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Faults())
}

// postFaults replaces the faults in force with the JSON array of the body.
func (s *Sim) postFaults(w http.ResponseWriter, r *http.Request) {
	var faults []Fault
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&faults); err != nil {
		writeError(w, r, http.StatusBadRequest, "invalidInput", "a JSON array of faults: "+err.Error())
		return
	}
	if err := s.SetFaults(faults); err != nil {
		writeError(w, r, http.StatusBadRequest, "invalidInput", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, s.Faults())
}

// token is the OAuth2 token endpoint: the client credentials grant, the
// client authenticated by HTTP Basic or by form fields (RFC 6749 2.3.1).
func (s *Sim) token(w http.ResponseWriter, r *http.Request) {
	if s.o.ClientID == "" {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "invalid_request", "error_description": "OAuth2 is not configured"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if subtle.ConstantTimeCompare([]byte(id), []byte(s.o.ClientID)) != 1 || subtle.ConstantTimeCompare([]byte(secret), []byte(s.o.ClientSecret)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="carrier-sim"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	if r.PostForm.Get("grant_type") != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := hex.EncodeToString(b)
	s.mu.Lock()
	s.tokens[tok] = s.o.Now().Add(time.Hour)
	s.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
}

func (s *Sim) authorized(r *http.Request) bool {
	if s.o.APIKey == "" && s.o.ClientID == "" {
		return true
	}
	if s.o.APIKey != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get(s.o.APIKeyHeader)), []byte(s.o.APIKey)) == 1 {
		return true
	}
	if s.o.ClientID != "" {
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			s.mu.Lock()
			exp, found := s.tokens[tok]
			s.mu.Unlock()
			return found && s.o.Now().Before(exp)
		}
	}
	return false
}

// query is what GET /v2/events filters on, read from the parameters or
// carried in a cursor.
type query struct {
	BL      string              `json:"bl,omitempty"`
	Booking string              `json:"bkg,omitempty"`
	Box     string              `json:"box,omitempty"`
	Types   []string            `json:"types,omitempty"`
	Codes   map[string][]string `json:"codes,omitempty"` // per event type
	Created []cond              `json:"created,omitempty"`
	Limit   int                 `json:"limit"`
}

type cond struct {
	Op string    `json:"op"`
	At time.Time `json:"at"`
}

// cursor is a page of a listing: the query, the instant the listing was
// taken at (so the pages of a listing never shift while the clock moves)
// and the offset.
type cursor struct {
	Q      query     `json:"q"`
	AsOf   time.Time `json:"t"`
	Offset int       `json:"o"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

var eventTypeCodeParams = map[string]string{
	"SHIPMENT": "shipmentEventTypeCode", "TRANSPORT": "transportEventTypeCode", "EQUIPMENT": "equipmentEventTypeCode",
}

// parseQuery reads the standard's filters. It answers an error for the
// client (400) when a value is invalid or no reference is given.
func parseQuery(v url.Values) (query, error) {
	q := query{
		BL:      numbers.NormalizeReference(v.Get("transportDocumentReference")),
		Booking: numbers.NormalizeReference(v.Get("carrierBookingReference")),
		Box:     numbers.NormalizeContainer(v.Get("equipmentReference")),
		Limit:   100,
	}
	if q.Booking == "" {
		q.Booking = numbers.NormalizeReference(v.Get("bookingReference")) // deprecated name
	}
	if q.BL == "" && q.Booking == "" && q.Box == "" {
		return q, errors.New("one of transportDocumentReference, carrierBookingReference or equipmentReference is required")
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return q, fmt.Errorf("limit %q: an integer of at least 1", l)
		}
		q.Limit = min(n, 1000)
	}
	if t := v.Get("eventType"); t != "" {
		for _, e := range strings.Split(t, ",") {
			if eventTypeCodeParams[e] == "" {
				return q, fmt.Errorf("eventType %q: SHIPMENT, TRANSPORT or EQUIPMENT", e)
			}
			q.Types = append(q.Types, e)
		}
	}
	for typ, param := range eventTypeCodeParams {
		if c := v.Get(param); c != "" {
			if q.Codes == nil {
				q.Codes = map[string][]string{}
			}
			q.Codes[typ] = strings.Split(c, ",")
		}
	}
	for key, vals := range v {
		name, op, _ := strings.Cut(key, ":")
		if name != "eventCreatedDateTime" || len(vals) == 0 {
			continue
		}
		if op == "" {
			op = "eq"
		}
		switch op {
		case "gte", "gt", "lte", "lt", "eq":
		default:
			return q, fmt.Errorf("eventCreatedDateTime:%s: the operators are gte, gt, lte, lt and eq", op)
		}
		at, err := time.Parse(time.RFC3339, vals[0])
		if err != nil {
			return q, fmt.Errorf("%s: a date-time (RFC 3339): %v", key, err)
		}
		q.Created = append(q.Created, cond{op, at})
	}
	return q, nil
}

func (q query) refs() []string {
	var out []string
	for _, r := range []string{q.BL, q.Booking, q.Box} {
		if r != "" {
			out = append(out, r)
		}
	}
	return out
}

// find returns the events of scac the query selects, published at asOf.
// A bill of lading is known once its transport document is issued, a
// container once its first event is published, a booking once confirmed;
// an unknown number selects nothing. A container selects its own equipment
// events and the transport events of the voyages it is on.
func (s *Sim) find(scac string, q query, asOf time.Time) []*event {
	var sh *shipment
	for _, c := range []struct {
		ref string
		by  map[string]*shipment
	}{{q.BL, s.w.byBL}, {q.Booking, s.w.byBooking}, {q.Box, s.w.byBox}} {
		if c.ref == "" {
			continue
		}
		found := c.by[c.ref]
		if found == nil || found.line.scac != scac || (sh != nil && found != sh) {
			return nil
		}
		sh = found
	}
	if sh == nil {
		return nil
	}
	if q.BL != "" && sh.issued.After(asOf) {
		return nil
	}
	if q.Box != "" {
		known := false
		for _, e := range sh.events {
			if e.box == q.Box && !e.created.After(asOf) {
				known = true
				break
			}
		}
		if !known {
			return nil
		}
	}
	var out []*event
	for _, e := range sh.events {
		if e.created.After(asOf) {
			break // sorted by created
		}
		if q.Box != "" && !(e.typ == "TRANSPORT" || e.box == q.Box) {
			continue
		}
		if len(q.Types) > 0 && !contains(q.Types, e.typ) {
			continue
		}
		if codes, ok := q.Codes[e.typ]; ok && !contains(codes, e.code) {
			continue
		}
		if !createdMatches(q.Created, e.created) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func createdMatches(conds []cond, t time.Time) bool {
	for _, c := range conds {
		var ok bool
		switch c.Op {
		case "gte":
			ok = !t.Before(c.At)
		case "gt":
			ok = t.After(c.At)
		case "lte":
			ok = !t.After(c.At)
		case "lt":
			ok = t.Before(c.At)
		default:
			ok = t.Equal(c.At)
		}
		if !ok {
			return false
		}
	}
	return true
}

// events serves GET /{SCAC}/v2/events: a page of the events the filters
// select, oldest created first, with the standard's Current-Page and (when
// more follow) Next-Page headers holding the URL of the page, whose cursor
// carries the whole query.
func (s *Sim) events(w http.ResponseWriter, r *http.Request) {
	scac := r.PathValue("scac")
	if s.w.lines[scac] == nil {
		writeError(w, r, http.StatusNotFound, "notFound", fmt.Sprintf("no carrier %q here", scac))
		return
	}
	var c cursor
	var qerr error
	v := r.URL.Query()
	if raw := v.Get("cursor"); raw != "" {
		b, err := base64.RawURLEncoding.DecodeString(raw)
		if err == nil {
			err = json.Unmarshal(b, &c)
		}
		if err != nil || c.Offset < 0 || c.Q.Limit < 1 || len(c.Q.refs()) == 0 {
			qerr = errors.New("cursor: not one this server gave")
		}
		c.Q.Limit = min(c.Q.Limit, 1000) // a forged cursor's numbers must not overflow the page bounds
		c.Offset = min(c.Offset, 1<<30)
	} else {
		c.Q, qerr = parseQuery(v)
		c.AsOf = s.o.Now()
	}
	if f := s.takeFault(scac, c.Q.refs()); f != nil && s.misbehave(w, r, f) {
		return
	}
	if !s.authorized(r) {
		writeError(w, r, http.StatusUnauthorized, "unauthorized", "missing or wrong credentials")
		return
	}
	if qerr != nil {
		writeError(w, r, http.StatusBadRequest, "invalidQuery", qerr.Error())
		return
	}
	all := s.find(scac, c.Q, c.AsOf)
	page := all[min(c.Offset, len(all)):min(c.Offset+c.Q.Limit, len(all))]
	here := *r.URL
	here.Scheme, here.Host = "http", r.Host
	if r.TLS != nil {
		here.Scheme = "https"
	}
	here.RawQuery = "cursor=" + c.cursor(c.Offset).encode()
	w.Header().Set("Current-Page", here.String())
	if c.Offset > 0 {
		here.RawQuery = "cursor=" + c.cursor(0).encode()
		w.Header().Set("First-Page", here.String())
	}
	if next := c.Offset + c.Q.Limit; next < len(all) {
		here.RawQuery = "cursor=" + c.cursor(next).encode()
		w.Header().Set("Next-Page", here.String())
	}
	// The page's bytes in one buffer of their size (no buffer grown by
	// doubling: the same bytes, a third of the allocation).
	size := 2 + max(len(page)-1, 0)
	for _, e := range page {
		size += len(e.raw)
	}
	body := bytes.NewBuffer(make([]byte, 0, size))
	body.WriteByte('[')
	for i, e := range page {
		if i > 0 {
			body.WriteByte(',')
		}
		body.Write(e.raw)
	}
	body.WriteByte(']')
	w.Header().Set("API-Version", "2.2.0")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
	_, _ = w.Write(body.Bytes())
}

func (c cursor) cursor(offset int) cursor { c.Offset = offset; return c }

// misbehave answers as fault f says, reporting whether it answered (slow
// only delays the normal answer).
func (s *Sim) misbehave(w http.ResponseWriter, r *http.Request, f *Fault) bool {
	retry := strconv.Itoa(max(f.RetryAfter, 1))
	switch f.Mode {
	case FaultSlow:
		t := time.NewTimer(time.Duration(f.Delay))
		defer t.Stop()
		select {
		case <-t.C:
			return false
		case <-r.Context().Done():
			return true
		}
	case FaultDown:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return true
			}
		}
		writeError(w, r, http.StatusServiceUnavailable, "unavailable", "carrier down")
	case FaultUnavailable:
		w.Header().Set("Retry-After", retry)
		writeError(w, r, http.StatusServiceUnavailable, "unavailable", "carrier temporarily unavailable")
	case FaultRateLimited:
		w.Header().Set("Retry-After", retry)
		writeError(w, r, http.StatusTooManyRequests, "tooManyRequests", "rate limit exceeded")
	case FaultServerError:
		writeError(w, r, http.StatusInternalServerError, "internalError", "internal error")
	case FaultNotFound:
		writeError(w, r, http.StatusNotFound, "notFound", "no events found for the reference")
	case FaultUnauthorized:
		writeError(w, r, http.StatusUnauthorized, "unauthorized", "credentials refused")
	case FaultForbidden:
		writeError(w, r, http.StatusForbidden, "forbidden", "not allowed")
	case FaultMalformed:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"eventID":"4a7f0e0e-1b1c-4f45-9d0a-2f2e3b1c9d11","eventType":"EQUIPM`)
	case FaultWrongTypes:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"eventID":42,"eventType":["EQUIPMENT"],"eventClassifierCode":true,"eventDateTime":1700000000,"eventCreatedDateTime":{"at":"now"},"transportCall":"ARRI"}]`)
	case FaultMissingFields:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"eventID":"4a7f0e0e-1b1c-4f45-9d0a-2f2e3b1c9d11","eventType":"EQUIPMENT","eventCreatedDateTime":"2024-05-01T10:00:00Z"}]`)
	case FaultOversized:
		size := f.Size
		if size <= 0 {
			size = 8 << 20
		}
		w.Header().Set("Content-Type", "application/json")
		one := s.w.shipments[0].events[0].raw
		written := int64(1)
		_, _ = io.WriteString(w, "[")
		for written+int64(len(one))+2 < size {
			if written > 1 {
				_, _ = io.WriteString(w, ",")
				written++
			}
			if _, err := w.Write(one); err != nil {
				return true
			}
			written += int64(len(one))
		}
		_, _ = io.WriteString(w, "]")
	}
	return true
}

// writeError answers the DCSA error object.
func writeError(w http.ResponseWriter, r *http.Request, status int, reason, message string) {
	writeJSON(w, status, map[string]any{
		"httpMethod":     r.Method,
		"requestUri":     r.URL.RequestURI(),
		"statusCode":     status,
		"statusCodeText": http.StatusText(status),
		"errorDateTime":  time.Now().UTC().Format(time.RFC3339),
		"errors":         []map[string]string{{"reason": reason, "message": message}},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// Serve serves the simulator on ln until ctx ends.
func (s *Sim) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		case <-done:
		}
	}()
	err := srv.Serve(ln)
	close(done)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Run listens on addr and serves the simulator of o until ctx ends.
func Run(ctx context.Context, addr string, o Options) error {
	s, err := New(o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Main is the carrier-sim verb: it parses args, prints where each carrier
// is served, and serves until ctx ends.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("shipgraph carrier-sim", flag.ContinueOnError)
	config.DashUsage(fs)
	addr := fs.String("addr", "127.0.0.1:8091", "host:port to listen on (port 0: any free port)")
	seed := fs.Int64("seed", 1, "seed of the voyages, numbers and event ids")
	scacs := fs.String("scacs", strings.Join(DefaultSCACs, ","), "comma-separated SCACs to serve (of shipping_lines.csv)")
	shipments := fs.Int("shipments", 12, "shipments per carrier")
	epoch := fs.String("epoch", "", "RFC 3339 time the voyages are anchored to (default: today 00:00 UTC)")
	apiKey := fs.String("api-key", "", "require this API key (in the --api-key-header header)")
	apiKeyHeader := fs.String("api-key-header", "API-Key", "header carrying the API key")
	clientID := fs.String("client-id", "", "OAuth2 client id: require bearer tokens from POST /oauth/token")
	clientSecret := fs.String("client-secret", "", "OAuth2 client secret")
	if err := config.Parse(fs, args, stdout, stderr, false); err != nil {
		return err
	}
	o := Options{Seed: *seed, SCACs: strings.Split(*scacs, ","), Shipments: *shipments,
		APIKey: *apiKey, APIKeyHeader: *apiKeyHeader, ClientID: *clientID, ClientSecret: *clientSecret}
	if *epoch != "" {
		t, err := time.Parse(time.RFC3339, *epoch)
		if err != nil {
			return fmt.Errorf("--epoch: %w", err)
		}
		o.Epoch = t
	}
	s, err := New(o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "carrier-sim listening on %s (seed %d)\n", base, *seed)
	var carriers []string
	for _, sc := range o.SCACs {
		carriers = append(carriers, sc+"="+base+"/"+sc)
	}
	fmt.Fprintf(stdout, "CARRIERS=%s\n", strings.Join(carriers, ","))
	if n, ok := s.AtSea(); ok {
		// scripts/run.sh prints this one in its example request.
		fmt.Fprintf(stdout, "at sea: %s %s %s\n", n.RequestType, n.RequestNumber, n.SCAC)
	}
	fmt.Fprintf(stdout, "numbers: curl -s %s/sim/numbers\n", base) // the last line before serving
	return s.Serve(ctx, ln)
}
