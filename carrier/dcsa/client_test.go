package dcsa_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"shipgraph/carrier/dcsa"
	"shipgraph/carrier/numbers"
	"shipgraph/carrier/sim"
	"shipgraph/testkit/simtest"
)

var epoch = simtest.Epoch

// start runs the simulator on 127.0.0.1:0 over real HTTP, its clock 20
// days past the epoch.
func start(t *testing.T, o sim.Options) *simtest.Server {
	t.Helper()
	return simtest.Start(t, o, epoch.Add(20*24*time.Hour))
}

func query(n sim.Number) dcsa.Query {
	switch n.RequestType {
	case "bill_of_lading":
		return dcsa.Query{TransportDocumentReference: n.RequestNumber}
	case "booking_number":
		return dcsa.Query{CarrierBookingReference: n.RequestNumber}
	}
	return dcsa.Query{EquipmentReference: n.RequestNumber}
}

func client(t *testing.T, cfg dcsa.Config) *dcsa.Client {
	t.Helper()
	c, err := dcsa.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEventsPages: the client follows Next-Page over small pages and gets
// exactly the events of one big page, each valid, for every kind of number.
func TestEventsPages(t *testing.T) {
	s := start(t, sim.Options{Seed: 1})
	small := client(t, dcsa.Config{BaseURL: s.URL + "/MAEU", PageSize: 5})
	big := client(t, dcsa.Config{BaseURL: s.URL + "/MAEU/", PageSize: 1000})
	ctx := context.Background()
	kinds := map[dcsa.EventType]int{}
	for _, typ := range []string{"bill_of_lading", "booking_number", "container"} {
		n := s.Number(t, "MAEU", typ, "tracked")
		paged, err := small.Events(ctx, query(n))
		if err != nil {
			t.Fatalf("%s: %v", n.RequestNumber, err)
		}
		whole, err := big.Events(ctx, query(n))
		if err != nil {
			t.Fatalf("%s: %v", n.RequestNumber, err)
		}
		if len(paged) <= 5 || len(paged) != len(whole) {
			t.Fatalf("%s: %d events over pages of 5, %d in one page", n.RequestNumber, len(paged), len(whole))
		}
		for i := range paged {
			if paged[i].EventID != whole[i].EventID {
				t.Fatalf("%s: event %d differs between paged and whole", n.RequestNumber, i)
			}
			kinds[paged[i].EventType]++
			if e := paged[i]; e.EventType == dcsa.EventTypeEquipment && !numbers.ValidContainer(e.EquipmentReference) {
				t.Errorf("equipment reference %q", e.EquipmentReference)
			}
		}
	}
	if kinds[dcsa.EventTypeShipment] == 0 || kinds[dcsa.EventTypeTransport] == 0 || kinds[dcsa.EventTypeEquipment] == 0 {
		t.Fatalf("event types read: %v", kinds)
	}
	// An event type filter: only those, and an empty answer is no error.
	n := s.Number(t, "MAEU", "bill_of_lading", "tracked")
	q := query(n)
	q.EventTypes = []dcsa.EventType{dcsa.EventTypeTransport}
	got, err := small.Events(ctx, q)
	if err != nil || len(got) == 0 {
		t.Fatalf("TRANSPORT only: %d events, %v", len(got), err)
	}
	for _, e := range got {
		if e.EventType != dcsa.EventTypeTransport || e.TransportCall == nil || e.TransportCall.TransportCallID == "" {
			t.Fatalf("TRANSPORT only gave %+v", e)
		}
	}
	w := s.Number(t, "MAEU", "booking_number", "awaiting_manifest")
	q = query(w)
	q.EventTypes = []dcsa.EventType{dcsa.EventTypeEquipment}
	s.Clock.Set(epoch)
	if got, err := small.Events(ctx, q); err != nil || len(got) != 0 {
		t.Fatalf("equipment of a booking awaiting its manifest: %d events, %v; want none and no error", len(got), err)
	}
	if got, err := small.Events(ctx, query(w)); err != nil || len(got) == 0 || got[0].ShipmentEventTypeCode != dcsa.ShipmentConfirmed {
		t.Fatalf("booking awaiting its manifest: %v, %v; want its confirmation", got, err)
	}
	// MaxPages holds.
	few := client(t, dcsa.Config{BaseURL: s.URL + "/MAEU", PageSize: 1, MaxPages: 3})
	if _, err := few.Events(ctx, query(n)); dcsa.KindOf(err) != dcsa.Unrecognized {
		t.Fatalf("over MaxPages: %v, want Unrecognized", err)
	}
	// Queries name exactly one reference.
	for _, bad := range []dcsa.Query{{}, {TransportDocumentReference: "A1", CarrierBookingReference: "B1"}, {EquipmentReference: "X", EventTypes: []dcsa.EventType{"BOAT"}}} {
		if _, err := small.Events(ctx, bad); !errors.Is(err, dcsa.ErrInvalidQuery) {
			t.Errorf("%+v: %v, want ErrInvalidQuery", bad, err)
		}
	}
}

// TestNotFound: a number the carrier does not know is ErrNotFound, whether
// the carrier answers an empty list (the standard's way, the simulator's
// default) or 404 with a DCSA error (the not_found fault).
func TestNotFound(t *testing.T) {
	s := start(t, sim.Options{Seed: 1})
	c := client(t, dcsa.Config{BaseURL: s.URL + "/MSCU"})
	ctx := context.Background()
	for _, q := range []dcsa.Query{{EquipmentReference: "CSQU3054383"}, {TransportDocumentReference: "MEDU000000001"}, {CarrierBookingReference: "1"}} {
		if _, err := c.Events(ctx, q); !errors.Is(err, dcsa.ErrNotFound) {
			t.Errorf("%+v: %v, want ErrNotFound", q, err)
		}
	}
	n := s.Number(t, "MSCU", "container", "tracked")
	if err := s.SetFaults([]sim.Fault{{SCAC: "MSCU", Number: n.RequestNumber, Mode: sim.FaultNotFound}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Events(ctx, query(n))
	if !errors.Is(err, dcsa.ErrNotFound) || !strings.Contains(err.Error(), "404") {
		t.Fatalf("404 with a DCSA error: %v, want ErrNotFound", err)
	}
	// A 404 that is not DCSA's (a wrong base URL behind some proxy) is not "not found".
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	other := serve(t, mux)
	if _, err := client(t, dcsa.Config{BaseURL: other}).Events(ctx, query(n)); dcsa.KindOf(err) != dcsa.Unrecognized {
		t.Fatalf("plain 404: %v, want Unrecognized", err)
	}
}

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// TestErrorKinds: each fault of the simulator comes back as the kind the
// tracking jobs decide on.
func TestErrorKinds(t *testing.T) {
	s := start(t, sim.Options{Seed: 1})
	n := s.Number(t, "CMDU", "bill_of_lading", "tracked")
	c := client(t, dcsa.Config{BaseURL: s.URL + "/CMDU", MaxBodyBytes: 64 << 10, Timeout: 200 * time.Millisecond})
	ctx := context.Background()
	cases := []struct {
		fault      sim.Fault
		kind       dcsa.Kind
		status     int
		retryAfter time.Duration
	}{
		{sim.Fault{Mode: sim.FaultDown}, dcsa.Unreachable, 0, 0},
		{sim.Fault{Mode: sim.FaultUnavailable, RetryAfter: 30}, dcsa.Unreachable, 503, 30 * time.Second},
		{sim.Fault{Mode: sim.FaultRateLimited, RetryAfter: 5}, dcsa.Unreachable, 429, 5 * time.Second},
		{sim.Fault{Mode: sim.FaultServerError}, dcsa.Unreachable, 500, 0},
		{sim.Fault{Mode: sim.FaultSlow, Delay: sim.Duration(5 * time.Second)}, dcsa.Unreachable, 0, 0},
		{sim.Fault{Mode: sim.FaultMalformed}, dcsa.Unrecognized, 200, 0},
		{sim.Fault{Mode: sim.FaultWrongTypes}, dcsa.Unrecognized, 200, 0},
		{sim.Fault{Mode: sim.FaultMissingFields}, dcsa.Unrecognized, 200, 0},
		{sim.Fault{Mode: sim.FaultOversized, Size: 1 << 20}, dcsa.Unrecognized, 200, 0},
		{sim.Fault{Mode: sim.FaultUnauthorized}, dcsa.Unauthorized, 401, 0},
		{sim.Fault{Mode: sim.FaultForbidden}, dcsa.Unauthorized, 403, 0},
	}
	for _, tc := range cases {
		tc.fault.SCAC = "CMDU"
		if err := s.SetFaults([]sim.Fault{tc.fault}); err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		_, err := c.Events(ctx, query(n))
		var e *dcsa.Error
		if !errors.As(err, &e) || e.Kind != tc.kind || e.Status != tc.status || e.RetryAfter != tc.retryAfter {
			t.Errorf("%s: %v (%#v), want kind %s, status %d, retry after %s", tc.fault.Mode, err, e, tc.kind, tc.status, tc.retryAfter)
			continue
		}
		if tc.fault.Mode == sim.FaultSlow && time.Since(begin) > 2*time.Second {
			t.Errorf("slow: the 200ms timeout took %s", time.Since(begin))
		}
		if tc.fault.Mode == sim.FaultOversized && !strings.Contains(e.Error(), "body over") {
			t.Errorf("oversized: %v", e)
		}
	}
	// Connection refused: nobody listens.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	if _, err := client(t, dcsa.Config{BaseURL: "http://" + addr}).Events(ctx, query(n)); dcsa.KindOf(err) != dcsa.Unreachable {
		t.Errorf("connection refused: %v, want Unreachable", err)
	}
	// Fail twice, then recover: the third call succeeds.
	_ = s.SetFaults([]sim.Fault{{SCAC: "CMDU", Mode: sim.FaultUnavailable, Count: 2}})
	for i, want := range []dcsa.Kind{dcsa.Unreachable, dcsa.Unreachable, 0} {
		if _, err := c.Events(ctx, query(n)); dcsa.KindOf(err) != want || (want == 0 && err != nil) {
			t.Errorf("call %d: %v, want %v", i+1, err, want)
		}
	}
	// The caller's own cancellation is its error, not the carrier's.
	_ = s.SetFaults([]sim.Fault{{SCAC: "CMDU", Mode: sim.FaultSlow, Delay: sim.Duration(5 * time.Second)}})
	patient := client(t, dcsa.Config{BaseURL: s.URL + "/CMDU"})
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := patient.Events(cctx, query(n)); !errors.Is(err, context.DeadlineExceeded) || dcsa.KindOf(err) != 0 {
		t.Errorf("caller's deadline: %v, want context.DeadlineExceeded unclassified", err)
	}
}

// TestBodyCap: a page exactly at the cap is read, one byte less is refused.
func TestBodyCap(t *testing.T) {
	s := start(t, sim.Options{Seed: 1})
	n := s.Number(t, "ONEY", "bill_of_lading", "tracked")
	res, err := http.Get(s.URL + "/ONEY/v2/events?transportDocumentReference=" + n.RequestNumber + "&limit=1000")
	if err != nil {
		t.Fatal(err)
	}
	size := res.ContentLength
	res.Body.Close()
	if size <= 0 {
		t.Fatalf("Content-Length %d", size)
	}
	ctx := context.Background()
	if _, err := client(t, dcsa.Config{BaseURL: s.URL + "/ONEY", PageSize: 1000, MaxBodyBytes: size}).Events(ctx, query(n)); err != nil {
		t.Fatalf("page of %d bytes at a cap of %d: %v", size, size, err)
	}
	if _, err := client(t, dcsa.Config{BaseURL: s.URL + "/ONEY", PageSize: 1000, MaxBodyBytes: size - 1}).Events(ctx, query(n)); dcsa.KindOf(err) != dcsa.Unrecognized {
		t.Fatalf("page of %d bytes at a cap of %d: %v, want Unrecognized", size, size-1, err)
	}
}

// TestCredentials: an API key and OAuth2 client credentials both work
// against a carrier that wants them, and both are refused when wrong.
func TestCredentials(t *testing.T) {
	s := start(t, sim.Options{Seed: 1, APIKeyHeader: "X-Api-Key", APIKey: "k3y", ClientID: "shipgraph", ClientSecret: "s3cret"})
	n := s.Number(t, "EGLV", "container", "tracked")
	base := s.URL + "/EGLV"
	ctx := context.Background()
	for name, tc := range map[string]struct {
		cfg  dcsa.Config
		want dcsa.Kind
	}{
		"api key":            {dcsa.Config{BaseURL: base, APIKeyHeader: "X-Api-Key", APIKey: "k3y"}, 0},
		"wrong api key":      {dcsa.Config{BaseURL: base, APIKeyHeader: "X-Api-Key", APIKey: "nope"}, dcsa.Unauthorized},
		"none":               {dcsa.Config{BaseURL: base}, dcsa.Unauthorized},
		"oauth2":             {dcsa.Config{BaseURL: base, OAuth2: &dcsa.OAuth2{TokenURL: s.URL + "/oauth/token", ClientID: "shipgraph", ClientSecret: "s3cret", Scopes: []string{"tnt"}}}, 0},
		"oauth2 wrong":       {dcsa.Config{BaseURL: base, OAuth2: &dcsa.OAuth2{TokenURL: s.URL + "/oauth/token", ClientID: "shipgraph", ClientSecret: "nope"}}, dcsa.Unauthorized},
		"oauth2 unreachable": {dcsa.Config{BaseURL: base, OAuth2: &dcsa.OAuth2{TokenURL: "http://127.0.0.1:1/oauth/token", ClientID: "shipgraph", ClientSecret: "s3cret"}}, dcsa.Unreachable},
	} {
		got, err := client(t, tc.cfg).Events(ctx, query(n))
		if dcsa.KindOf(err) != tc.want || (tc.want == 0 && (err != nil || len(got) == 0)) {
			t.Errorf("%s: %d events, %v; want kind %v", name, len(got), err, tc.want)
		}
	}
	for _, bad := range []dcsa.Config{
		{BaseURL: "carrier.example/tnt"},
		{BaseURL: "http://x", APIKey: "k"},
		{BaseURL: "http://x", APIKey: "k", APIKeyHeader: "K", OAuth2: &dcsa.OAuth2{TokenURL: "http://x/t", ClientID: "c"}},
		{BaseURL: "http://x", OAuth2: &dcsa.OAuth2{}},
	} {
		if _, err := dcsa.New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
}

// TestNextPageStaysOnHost: a Next-Page pointing at another host is refused
// (the credentials would follow it).
func TestNextPageStaysOnHost(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/v2/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Next-Page", "http://attacker.example/v2/events?cursor=x")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"eventID":"4a7f0e0e-1b1c-4f45-9d0a-2f2e3b1c9d11","eventType":"SHIPMENT","eventClassifierCode":"ACT","eventDateTime":"2026-03-01T00:00:00Z","eventCreatedDateTime":"2026-03-01T00:00:00Z","shipmentEventTypeCode":"CONF","documentTypeCode":"BKG","documentID":"123"}]`))
	})
	u := serve(t, mux)
	_, err := client(t, dcsa.Config{BaseURL: u, APIKeyHeader: "K", APIKey: "secret"}).Events(context.Background(), dcsa.Query{CarrierBookingReference: "123"})
	if dcsa.KindOf(err) != dcsa.Unrecognized || !strings.Contains(err.Error(), "leaves the carrier's host") {
		t.Fatalf("%v, want Unrecognized", err)
	}
}

// TestRejected: a 400 with the DCSA error object is Rejected, with the
// carrier's reason in the error.
func TestRejected(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/v2/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"httpMethod":"GET","requestUri":"/v2/events","statusCode":400,"statusCodeText":"Bad Request","errorDateTime":"2026-03-01T00:00:00Z","errors":[{"reason":"invalidInput","message":"equipmentReference too long"}]}`))
	})
	_, err := client(t, dcsa.Config{BaseURL: serve(t, mux)}).Events(context.Background(), dcsa.Query{EquipmentReference: "X"})
	var e *dcsa.Error
	if !errors.As(err, &e) || e.Kind != dcsa.Rejected || e.Status != 400 || !strings.Contains(e.Detail, "equipmentReference too long") {
		t.Fatalf("%v, want Rejected with the carrier's reason", err)
	}
}
