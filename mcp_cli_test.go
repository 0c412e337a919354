package main

import (
	"context"
	"strings"
	"testing"
)

// TestCLIMCP: `shipgraph mcp` takes its key from SHIPGRAPH_API_KEY only:
// without it, one line and exit 1; there is no flag for it.
func TestCLIMCP(t *testing.T) {
	t.Setenv("SHIPGRAPH_API_KEY", "")
	ctx := context.Background()
	code, _, errOut := runCmd(t, ctx, "mcp", "--url", "http://127.0.0.1:1/mcp")
	if code != 1 || !strings.Contains(errOut, "SHIPGRAPH_API_KEY") {
		t.Errorf("no key: exit %d, %q", code, errOut)
	}
	if code, _, _ := runCmd(t, ctx, "mcp", "--key", "sg_x"); code != 2 {
		t.Errorf("--key: exit %d, want 2 (no such flag)", code)
	}
	code, out, _ := runCmd(t, ctx, "mcp", "--help")
	if code != 0 || !strings.Contains(out, "--shipgraph-url") || !strings.Contains(out, "SHIPGRAPH_API_KEY") {
		t.Errorf("mcp --help: exit %d, %q", code, out)
	}
}
