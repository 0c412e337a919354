//go:build browser

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"shipgraph/carrier/sim"
	"shipgraph/db/dbtest"
	"shipgraph/testkit/simtest"
)

// TestBrowserMCPClients runs the official MCP clients (npm, pinned:
// scripts/mcp-client.sh) against the real server on a seeded database: the
// TypeScript SDK's client calls every tool and compares it with /v2, the
// error cases, a viewer, an exhausted cost budget (a second server with
// a budget of 60 a minute); the MCP Inspector's CLI lists and calls tools
// over HTTP and over `shipgraph mcp` (stdio, the binary built here).
func TestBrowserMCPClients(t *testing.T) {
	needNPM(t, "the MCP clients")
	url := dbtest.NewDB(t)
	keys := seedKeys(t, url, "20")
	// track_container's line must be one a carrier connection serves (an
	// unserved SCAC is refused at create): the simulator serves MAEU.
	carriers := "MAEU=" + simtest.Start(t, sim.Options{Seed: 11}, time.Time{}).URL + "/MAEU"
	base := serve(t, "--database-url", url, "--carriers", carriers)
	budget := serve(t, "--database-url", url, "--cost-budget", "60", "--carriers", carriers)
	bin := filepath.Join(t.TempDir(), "shipgraph")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join("scripts", "mcp-client.sh"), base, budget, bin)
	cmd.Env = append(os.Environ(), "MCP_ADMIN_KEY="+keys["acme admin"], "MCP_VIEWER_KEY="+keys["acme viewer"], "MCP_OTHER_KEY="+keys["globex admin"])
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("MCP clients: %v", err)
	}
}
