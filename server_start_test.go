package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"shipgraph/db/dbtest"
	"shipgraph/testkit"
)

// TestServeWaitsForTheDatabase: serve started before its database listens
// at once, answers /healthz 200 and /readyz and the APIs 503 with
// Retry-After, says what it waits for, and serves once the database is up.
func TestServeWaitsForTheDatabase(t *testing.T) {
	pg := dbtest.NewServer(t)
	keys := seedKeys(t, pg.URL(), "3")
	pg.Stop(t)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr testkit.Log
	go func() {
		done <- run(ctx, []string{"serve", "--addr", addr, "--database-url", pg.URL(), "--shutdown-delay", "0"}, io.Discard, &stderr)
	}()
	defer stopServe(t, cancel, done, &stderr)
	base := "http://" + addr
	begin := time.Now()
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("/healthz without the database: %d", res.StatusCode)
			}
			break
		}
		if time.Since(begin) > 30*time.Second {
			t.Fatalf("serve does not listen without its database: %v; %s", err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	key := keys["acme admin"]
	check := func(what string, res *http.Response, media string) {
		t.Helper()
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" ||
			!strings.HasPrefix(res.Header.Get("Content-Type"), media) {
			t.Errorf("%s without the database: %d Retry-After %q %s: %s", what, res.StatusCode, res.Header.Get("Retry-After"), res.Header.Get("Content-Type"), body)
		}
		if media == "application/json" && !strings.Contains(string(body), `"UNAVAILABLE"`) {
			t.Errorf("%s: %s, want UNAVAILABLE", what, body)
		}
	}
	res, _ := testkit.Get(t, base+"/readyz", "")
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz without the database: %d", res.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/v2/shipments", nil)
	req.Header.Set("Authorization", "Token "+key)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	check("/v2/shipments", res, "application/vnd.api+json")
	req, _ = http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(`{"query":"{ viewer { role } }"}`))
	req.Header.Set("Authorization", "Token "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	check("/graphql", res, "application/json")
	stderr.WaitLine(t, 10*time.Second, "a log line saying what serve waits for", func(line string) bool {
		return strings.Contains(line, "waiting for the database")
	})

	pg.Start(t)
	begin = time.Now()
	for {
		res, body := testkit.Get(t, base+"/v2/shipments", key)
		if res.StatusCode == http.StatusOK {
			break
		}
		if time.Since(begin) > 20*time.Second {
			t.Fatalf("not serving 20s after the database came up: %d %s", res.StatusCode, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if res, _ := testkit.Get(t, base+"/readyz", ""); res.StatusCode != http.StatusOK {
		t.Errorf("/readyz with the database: %d", res.StatusCode)
	}
}
