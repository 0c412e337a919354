//go:build browser

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBrowserApolloDefer reads a dashboard whose grouped counts are
// deferred with Apollo Client 4 (npm, pinned) from the real server: the
// client first shows the shipments while the counts are outstanding
// (dataState "streaming", no containerStats yet), then the whole answer
// ("complete") with the counts merged in.
func TestBrowserApolloDefer(t *testing.T) {
	needNPM(t, "Apollo Client")
	_, base, keys := serveSeeded(t, "20")
	query := `query Dashboard {
		shipments(first: 3) { nodes { id billOfLadingNumber } }
		... @defer(label: "stats") { containerStats(groupBy: [STATUS]) { status count } }
	}`
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join("scripts", "apollo-defer-client.sh"), base+"/graphql", query)
	cmd.Env = append(os.Environ(), "APOLLO_AUTHORIZATION=Token "+keys["acme viewer"])
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("apollo client: %v", err)
	}
	type data struct {
		Shipments *struct {
			Nodes []struct{ BillOfLadingNumber string }
		}
		ContainerStats []struct {
			Status string
			Count  int
		}
	}
	var results []string
	var datas []data
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		state, body, ok := strings.Cut(line, " ")
		if !ok || (state != "streaming" && state != "complete") {
			continue
		}
		var d data
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		results, datas = append(results, state), append(datas, d)
	}
	if len(results) != 2 || results[0] != "streaming" || results[1] != "complete" {
		t.Fatalf("results %v; want streaming, then complete", results)
	}
	if d := datas[0]; d.Shipments == nil || len(d.Shipments.Nodes) != 3 || d.ContainerStats != nil {
		t.Fatalf("the streaming result should show the 3 shipments and no counts yet: %+v", d)
	}
	d := datas[1]
	sum := 0
	for _, g := range d.ContainerStats {
		if g.Status == "" || g.Count < 1 {
			t.Fatalf("group %+v", g)
		}
		sum += g.Count
	}
	if d.Shipments == nil || len(d.Shipments.Nodes) != 3 || sum == 0 {
		t.Fatalf("the complete result should hold the shipments and the counts: %+v", d)
	}
}
