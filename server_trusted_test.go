package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A trusted documents manifest that does not load, or trusted-only without
// one, stops serve at once with a line naming the setting: a server that
// would refuse every operation never starts.
func TestServeTrustedDocumentsErrors(t *testing.T) {
	ctx := context.Background()
	stale := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(stale, []byte(`{"format":"apollo-persisted-query-manifest","version":1,"operations":[{"id":"x","name":"Gone","type":"query","body":"query Gone { viewer { gone } }"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"stale manifest":    {"--trusted-documents", stale},
		"missing manifest":  {"--trusted-documents", filepath.Join(t.TempDir(), "none.json")},
		"only, no manifest": {"--trusted-only=true"},
	} {
		code, _, errOut := runCmd(t, ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--database-url", "postgres://nobody@127.0.0.1:1/x"}, args...)...)
		if code != 1 || !strings.Contains(errOut, "GRAPHQL_TRUSTED") {
			t.Errorf("%s: exit %d, %q", name, code, errOut)
		}
	}
}
