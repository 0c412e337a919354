//go:build browser

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"shipgraph/testkit"
)

// TestBrowserTrustedDocuments generates the trusted documents manifest of a
// client's operations (testdata/trusted-client/*.graphql) with the real
// npm tool, @apollo/generate-persisted-query-manifest (scripts/trusted-documents.sh),
// serves it with GRAPHQL_TRUSTED_ONLY, and runs the operations by id with
// Apollo Client 4's PersistedQueryLink over POST and GET; other documents
// and ids are refused with their codes, and admin keys are exempt when
// the setting says so.
func TestBrowserTrustedDocuments(t *testing.T) {
	needNPM(t, "the trusted documents test")
	manifest := filepath.Join(t.TempDir(), "persisted-query-manifest.json")
	script := filepath.Join("scripts", "trusted-documents.sh")
	gen := exec.Command(script, "generate", filepath.Join("testdata", "trusted-client"), manifest)
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("generate: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Format     string
		Operations []struct{ ID, Name, Body string }
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.Format != "apollo-persisted-query-manifest" || len(m.Operations) != 2 {
		t.Fatalf("manifest: %v %s", err, raw)
	}
	ids := map[string]string{}
	for _, op := range m.Operations {
		sum := sha256.Sum256([]byte(op.Body))
		if op.ID != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: id %s is not the sha256 of its body", op.Name, op.ID)
		}
		ids[op.Name] = op.ID
	}

	_, base, keys := serveSeeded(t, "5", "--trusted-documents", manifest, "--trusted-only=true", "--trusted-exempt-admin=true")

	// Apollo Client runs both operations by id, over POST and GET.
	client := exec.Command(script, "client", base+"/graphql", manifest,
		`[{"name":"Viewer","variables":{}},{"name":"Shipments","variables":{"first":2}}]`)
	client.Env = append(os.Environ(), "SHIPGRAPH_AUTHORIZATION=Token "+keys["acme member"])
	var stderr bytes.Buffer
	client.Stderr = &stderr
	out, err := client.Output()
	t.Logf("%s%s", out, stderr.Bytes())
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var a struct {
			Name, Method, Error string
			Data                json.RawMessage
		}
		if err := json.Unmarshal([]byte(line), &a); err != nil || a.Error != "" {
			t.Fatalf("client answer %q: %v", line, err)
		}
		// Of the 5 seeded shipments, 4 are acme's.
		want := map[string][]string{"Viewer": {`"role":"MEMBER"`, `"companyName":"Acme`}, "Shipments": {`"totalCount":4`, `"billOfLadingNumber"`}}[a.Name]
		for _, w := range want {
			if !strings.Contains(string(a.Data), w) {
				t.Errorf("%s over %s: %s, want %s", a.Name, a.Method, a.Data, w)
			}
		}
		seen[a.Name+" "+a.Method] = true
	}
	if len(seen) != 4 {
		t.Errorf("answers %v, want both operations over POST and GET", seen)
	}

	// Anything else is refused for a member; an admin is exempt.
	post := func(key string, v any) string {
		t.Helper()
		b, _ := json.Marshal(v)
		res := testkit.Send(t, http.MethodPost, base+"/graphql", key, b)
		if res.Status != http.StatusOK {
			t.Errorf("status %d: %s", res.Status, res.Body)
		}
		return string(res.Body)
	}
	unknown := map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": strings.Repeat("0", 64)}}}
	if got := post(keys["acme member"], unknown); !strings.Contains(got, `"PERSISTED_QUERY_NOT_IN_LIST"`) || strings.Contains(got, `"data"`) {
		t.Errorf("unknown id: %s", got)
	}
	freeform := map[string]any{"query": `{ viewer { role } }`}
	if got := post(keys["acme member"], freeform); !strings.Contains(got, `"QUERY_NOT_IN_SAFELIST"`) || strings.Contains(got, `"data"`) {
		t.Errorf("a document as text: %s", got)
	}
	if got := post(keys["acme admin"], freeform); got != `{"data":{"viewer":{"role":"ADMIN"}}}` {
		t.Errorf("an exempt admin's document: %s", got)
	}
	byID := map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": ids["Viewer"]}}}
	if got := post(keys["globex viewer"], byID); !strings.Contains(got, `"role":"VIEWER"`) {
		t.Errorf("by id with curl's means: %s", got)
	}
}
