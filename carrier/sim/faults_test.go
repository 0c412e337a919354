package sim_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"shipgraph/carrier/sim"
	"shipgraph/testkit"
)

func firstOf(t *testing.T, s *server, scac, typ string) sim.Number {
	t.Helper()
	for _, n := range s.Numbers() {
		if n.SCAC == scac && n.RequestType == typ && n.State == "tracked" {
			return n
		}
	}
	t.Fatalf("no %s of %s", typ, scac)
	return sim.Number{}
}

func postFaults(t *testing.T, s *server, body string) (*http.Response, []byte) {
	t.Helper()
	return testkit.Fetch(t, testkit.Request(t, http.MethodPost, s.URL+"/sim/faults", "", []byte(body)))
}

// TestFaults sets each fault over POST /sim/faults and checks what the
// carrier then answers, per carrier and per number, and the recovery after
// Count requests.
func TestFaults(t *testing.T) {
	_, errSchema := schemas(t)
	s := start(t, sim.Options{Seed: 4})
	n := firstOf(t, s, "MAEU", "bill_of_lading")
	other := firstOf(t, s, "MAEU", "container")
	u := eventsURL(s.URL, n, "")
	cases := []struct {
		mode   string
		status int
		check  func(*http.Response, []byte) error
	}{
		{sim.FaultUnavailable, 503, retryAfter},
		{sim.FaultRateLimited, 429, retryAfter},
		{sim.FaultServerError, 500, nil},
		{sim.FaultNotFound, 404, nil},
		{sim.FaultUnauthorized, 401, nil},
		{sim.FaultForbidden, 403, nil},
		{sim.FaultMalformed, 200, notJSON},
		{sim.FaultWrongTypes, 200, wrongTypes},
		{sim.FaultMissingFields, 200, nil},
	}
	for _, c := range cases {
		res, b := postFaults(t, s, `[{"scac":"MAEU","number":"`+n.RequestNumber+`","mode":"`+c.mode+`","retry_after":7}]`)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("POST /sim/faults %s: %s %s", c.mode, res.Status, b)
		}
		res, b = get(t, u)
		if res.StatusCode != c.status {
			t.Errorf("%s: %s, want %d", c.mode, res.Status, c.status)
		}
		if c.status != 200 {
			validate(t, errSchema, c.mode, b)
		}
		if c.check != nil {
			if err := c.check(res, b); err != nil {
				t.Errorf("%s: %v", c.mode, err)
			}
		}
		// Another number of the same carrier is served.
		if res, _ := get(t, eventsURL(s.URL, other, "")); res.StatusCode != http.StatusOK {
			t.Errorf("%s on %s hit %s: %s", c.mode, n.RequestNumber, other.RequestNumber, res.Status)
		}
	}

	// Down: the connection closes without an answer.
	postFaults(t, s, `[{"scac":"MAEU","mode":"down"}]`)
	if _, err := http.Get(u); err == nil {
		t.Error("down: an answer came")
	}
	// Other carriers are up.
	if res, _ := get(t, eventsURL(s.URL, firstOf(t, s, "MSCU", "container"), "")); res.StatusCode != http.StatusOK {
		t.Errorf("MAEU down took MSCU down: %s", res.Status)
	}

	// Oversized: the body is as big as asked.
	postFaults(t, s, `[{"scac":"MAEU","mode":"oversized","size":300000}]`)
	if res, b := get(t, u); res.StatusCode != 200 || len(b) < 290000 || len(b) > 300000 || !json.Valid(b) {
		t.Errorf("oversized: %s, %d bytes, valid JSON %v", res.Status, len(b), json.Valid(b))
	}

	// Fail the next 2 requests, then recover.
	postFaults(t, s, `[{"scac":"MAEU","mode":"unavailable","count":2}]`)
	for i, want := range []int{503, 503, 200, 200} {
		if res, _ := get(t, u); res.StatusCode != want {
			t.Errorf("count 2, request %d: %s, want %d", i+1, res.Status, want)
		}
	}
	if len(s.Faults()) != 0 {
		t.Errorf("spent fault still listed: %+v", s.Faults())
	}

	// Slow: the answer comes after the delay; a client that gives up first
	// gets nothing.
	postFaults(t, s, `[{"scac":"MAEU","mode":"slow","delay":"300ms"}]`)
	begin := time.Now()
	if res, _ := get(t, u); res.StatusCode != 200 || time.Since(begin) < 300*time.Millisecond {
		t.Errorf("slow: %s after %s", res.Status, time.Since(begin))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow with a 50ms client deadline: %v", err)
	}

	// Bad fault documents are refused; an empty array heals.
	for _, bad := range []string{`[{"mode":"explode"}]`, `{"mode":"down"}`, `[{"mode":"slow","delay":"soon"}]`, `[{"mode":"down","colour":"red"}]`} {
		if res, _ := postFaults(t, s, bad); res.StatusCode != http.StatusBadRequest {
			t.Errorf("POST /sim/faults %s: %s, want 400", bad, res.Status)
		}
	}
	postFaults(t, s, `[]`)
	if res, _ := get(t, u); res.StatusCode != 200 {
		t.Errorf("healed: %s", res.Status)
	}

	// Faults from Options, for every carrier.
	s2 := start(t, sim.Options{Seed: 4, Faults: []sim.Fault{{Mode: sim.FaultServerError}}})
	if res, _ := get(t, eventsURL(s2.URL, n, "")); res.StatusCode != 500 {
		t.Errorf("fault from Options: %s", res.Status)
	}
	if _, err := sim.New(sim.Options{Faults: []sim.Fault{{Mode: "explode"}}}); err == nil {
		t.Error("New accepted an unknown fault mode")
	}
}

func retryAfter(res *http.Response, _ []byte) error {
	if res.Header.Get("Retry-After") != "7" {
		return errors.New("Retry-After " + res.Header.Get("Retry-After") + ", want 7")
	}
	return nil
}

func notJSON(_ *http.Response, b []byte) error {
	if json.Valid(b) {
		return errors.New("body is valid JSON")
	}
	return nil
}

func wrongTypes(_ *http.Response, b []byte) error {
	var v []struct {
		EventID string `json:"eventID"`
	}
	if !json.Valid(b) || json.Unmarshal(b, &v) == nil {
		return errors.New("body is not valid JSON of the wrong types")
	}
	return nil
}

// TestAuth: API key and OAuth2 client credentials each open the events;
// wrong or missing credentials get 401.
func TestAuth(t *testing.T) {
	s := start(t, sim.Options{Seed: 4, APIKey: "k3y", ClientID: "shipgraph", ClientSecret: "s3cret"})
	n := firstOf(t, s, "HLCU", "booking_number")
	u := eventsURL(s.URL, n, "")
	if res, _ := get(t, u); res.StatusCode != 401 {
		t.Errorf("no credentials: %s", res.Status)
	}
	if res, _ := get(t, u, "API-Key", "wrong"); res.StatusCode != 401 {
		t.Errorf("wrong key: %s", res.Status)
	}
	if res, _ := get(t, u, "API-Key", "k3y"); res.StatusCode != 200 {
		t.Errorf("right key: %s", res.Status)
	}
	token := func(form url.Values, user, pass string) (*http.Response, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/oauth/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(res.Body).Decode(&m)
		return res, m
	}
	if res, m := token(url.Values{"grant_type": {"client_credentials"}}, "shipgraph", "wrong"); res.StatusCode != 401 || m["error"] != "invalid_client" {
		t.Errorf("wrong secret: %s %v", res.Status, m)
	}
	if res, m := token(url.Values{"grant_type": {"password"}}, "shipgraph", "s3cret"); res.StatusCode != 400 || m["error"] != "unsupported_grant_type" {
		t.Errorf("wrong grant: %s %v", res.Status, m)
	}
	res, m := token(url.Values{"grant_type": {"client_credentials"}, "client_id": {"shipgraph"}, "client_secret": {"s3cret"}}, "", "")
	tok, _ := m["access_token"].(string)
	if res.StatusCode != 200 || tok == "" || m["token_type"] != "Bearer" {
		t.Fatalf("token: %s %v", res.Status, m)
	}
	if res, _ := get(t, u, "Authorization", "Bearer "+tok); res.StatusCode != 200 {
		t.Errorf("bearer token: %s", res.Status)
	}
	if res, _ := get(t, u, "Authorization", "Bearer x"+tok); res.StatusCode != 401 {
		t.Errorf("made-up token: %s", res.Status)
	}
	s.Clock.Set(epoch.Add(2 * time.Hour))
	if res, _ := get(t, u, "Authorization", "Bearer "+tok); res.StatusCode != 401 {
		t.Errorf("expired token: %s", res.Status)
	}
}

// TestMainVerb runs the carrier-sim verb on port 0: it prints where it
// listens, serves, and stops when its context ends.
func TestMainVerb(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- sim.Main(ctx, []string{"--addr", "127.0.0.1:0", "--seed", "9", "--scacs", "MAEU,ONEY"}, pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatal("no output")
	}
	line := sc.Text()
	if !strings.HasPrefix(line, "carrier-sim listening on http://127.0.0.1:") {
		t.Fatalf("first line %q", line)
	}
	base := strings.Fields(line)[3]
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	res, b := get(t, base+"/sim/numbers")
	var ns []sim.Number
	if res.StatusCode != 200 || json.Unmarshal(b, &ns) != nil || len(ns) == 0 {
		t.Fatalf("/sim/numbers: %s %.200s", res.Status, b)
	}
	for _, n := range ns {
		if n.SCAC != "MAEU" && n.SCAC != "ONEY" {
			t.Fatalf("carrier %s served, not asked for", n.SCAC)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Main: %v", err)
	}
	if err := sim.Main(context.Background(), []string{"--scacs", "NOPE"}, io.Discard, io.Discard); err == nil {
		t.Fatal("Main accepted an unknown SCAC")
	}
}
