//go:build browser

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"shipgraph/db/dbtest"
	"shipgraph/graph/playground"
	"shipgraph/testkit/browsertest"
)

// TestBrowserPlaygroundDashboard opens the playground of the real server in
// headless Chromium with no network beyond loopback, runs the example
// dashboard query with the prefilled demo key, and reads the results.
func TestBrowserPlaygroundDashboard(t *testing.T) {
	if !playground.Embedded() {
		t.Fatal("playground assets are not embedded: run `make assets` (the browser test proves the offline page)")
	}
	url := dbtest.NewDB(t)
	keys := seedKeys(t, url, "30")
	base := serve(t, "--database-url", url, "--playground-key", keys["acme admin"])

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, page := range []string{"/playground", "/graphql"} {
		text, err := browsertest.RunExampleQuery(ctx, base+page, `"billOfLadingNumber"`)
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		for _, want := range []string{`"totalCount"`, `"containers"`, `"podTerminal"`, `"customFields"`} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: result has no %s:\n%.2000s", page, want, text)
			}
		}
		if strings.Contains(text, `"errors"`) {
			t.Errorf("%s: result has errors:\n%.2000s", page, text)
		}
	}
	if png := os.Getenv("BROWSERTEST_SCREENSHOT"); png != "" {
		if err := browsertest.Screenshot(ctx, base+"/playground", png); err != nil {
			t.Error(err)
		}
	}
}

// TestBrowserPlaygroundSubscription runs a subscription in the playground
// (over a WebSocket, the key in connection_init) while plain SQL changes a
// container, and sees the event in the result pane.
func TestBrowserPlaygroundSubscription(t *testing.T) {
	if !playground.Embedded() {
		t.Fatal("playground assets are not embedded: run `make assets` (the browser test proves the offline page)")
	}
	url := dbtest.NewDB(t)
	keys := seedKeys(t, url, "5")
	base := serve(t, "--database-url", url, "--playground-key", keys["acme viewer"])
	conn := dbtest.Open(t, url)
	var number string
	if err := conn.QueryRow(`SELECT c.number FROM containers c JOIN accounts a ON a.id = c.account_id
		WHERE a.slug = 'acme' ORDER BY c.id LIMIT 1`).Scan(&number); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := browsertest.RunSubscription(ctx, base+"/playground",
		`subscription { containerUpdated { operation changedFields container { number currentStatus } } }`,
		`"GROUNDED"`, func() error {
			_, err := conn.Exec(`UPDATE containers SET current_status = 'grounded', seal_number = md5(random()::text) WHERE number = $1`, number)
			return err
		})
	if err != nil {
		t.Fatalf("%v\nconsole errors: %v", err, res.ConsoleErrors)
	}
	if !strings.Contains(res.Text, number) || !strings.Contains(res.Text, `"UPDATE"`) {
		t.Errorf("result pane:\n%.2000s", res.Text)
	}
	if len(res.Blocked) > 0 {
		t.Errorf("page tried to reach non-loopback hosts: %v", res.Blocked)
	}
}

// needNPM fails the test when npm, which installs the client it runs
// (for what), is not on PATH.
func needNPM(t testing.TB, what string) {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is needed for " + what)
	}
}

// TestBrowserGraphQLWSLibrary subscribes with the graphql-ws npm library's
// own client to the real server, whose demo activity moves containers:
// three events arrive. A wrong key is refused with 4401.
func TestBrowserGraphQLWSLibrary(t *testing.T) {
	needNPM(t, "the graphql-ws client")
	_, base, keys := serveSeeded(t, "5", "--demo-activity", "200ms")
	ws := "ws" + strings.TrimPrefix(base, "http") + "/graphql"
	query := `subscription { containerUpdated { operation changedFields container { number currentStatus podTerminal { name } } } }`
	client := func(key string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join("scripts", "graphql-ws-client.sh"), ws, query, "3")
		cmd.Env = append(os.Environ(), "GRAPHQL_WS_AUTHORIZATION=Token "+key)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := client(keys["acme viewer"])
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("graphql-ws client: %v", err)
	}
	if n := strings.Count(out, `next {"data":{"containerUpdated":{"operation":"UPDATE"`); n != 3 || !strings.Contains(out, `"currentStatus"`) {
		t.Fatalf("want 3 container events, got %d", n)
	}
	out, err = client("sg_wrong")
	if err == nil || !strings.Contains(out, "closed 4401") {
		t.Fatalf("wrong key: %v\n%s", err, out)
	}
}

// TestBrowserGraphQLHTTPAudit runs the graphql-http audit suite (npm) against
// the real server: no failed MUST and no SHOULD warning.
func TestBrowserGraphQLHTTPAudit(t *testing.T) {
	needNPM(t, "the graphql-http audit")
	_, base, keys := serveSeeded(t, "5")
	cmd := exec.Command(filepath.Join("scripts", "graphql-http-audit.sh"), base+"/graphql")
	cmd.Env = append(os.Environ(), "GRAPHQL_AUDIT_AUTHORIZATION=Token "+keys["acme viewer"])
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("audit failed: %v", err)
	}
	if !strings.Contains(string(out), " 0 warn, 0 fail") {
		t.Fatalf("audit summary is not clean")
	}
}
