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

	"shipgraph/db/dbtest"
	"shipgraph/graph/playground"
	"shipgraph/graph/playground/browsertest"
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

// TestBrowserGraphQLHTTPAudit runs the graphql-http audit suite (npm) against
// the real server: no failed MUST and no SHOULD warning.
func TestBrowserGraphQLHTTPAudit(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is needed for the graphql-http audit")
	}
	url := dbtest.NewDB(t)
	keys := seedKeys(t, url, "5")
	base := serve(t, "--database-url", url)
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
