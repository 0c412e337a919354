//go:build browser

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq"
	"shipgraph/db/dbtest"
	"shipgraph/graph/playground"
	"shipgraph/testkit"
	"shipgraph/testkit/browsertest"
)

// servePlayground serves a database of its own seeded with shipments, its
// playground prefilled with who's key ("acme admin"); it returns the
// database's URL and the server's base URL.
func servePlayground(t *testing.T, shipments, who string) (url, base string) {
	t.Helper()
	if !playground.Embedded() {
		t.Fatal("playground assets are not embedded: run `make assets` (the browser test proves the offline page)")
	}
	url = dbtest.NewDB(t)
	keys := seedKeys(t, url, shipments)
	return url, serve(t, "--database-url", url, "--playground-key", keys[who])
}

// TestBrowserPlaygroundDashboard opens the playground of the real server in
// headless Chromium with no network beyond loopback, runs the example
// dashboard query with the prefilled demo key, and reads the results.
func TestBrowserPlaygroundDashboard(t *testing.T) {
	_, base := servePlayground(t, "30", "acme admin")

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
	url, base := servePlayground(t, "5", "acme viewer")
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

// TestBrowserFederationGateway composes the real server with a second
// subgraph (customers, extending Shipment) through Apollo Gateway with
// IntrospectAndCompose inside Apollo Server (npm; scripts/federation-gateway.sh)
// and runs queries across both: customers → their shipments (Shipgraph's
// _entities) and shipments → their customer (the other subgraph's).
func TestBrowserFederationGateway(t *testing.T) {
	needNPM(t, "the federation gateway test")
	_, base, keys := serveSeeded(t, "5")
	auth := "Token " + keys["acme viewer"]

	// Four of the account's shipments, in the order shipments(first:) lists them.
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader([]byte(`{"query":"{ shipments(first: 4) { nodes { id billOfLadingNumber } } }"}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Data struct {
			Shipments struct {
				Nodes []struct{ ID, BillOfLadingNumber string }
			}
		}
	}
	err = json.NewDecoder(res.Body).Decode(&page)
	res.Body.Close()
	if err != nil || len(page.Data.Shipments.Nodes) != 4 {
		t.Fatalf("shipments: %v %+v", err, page)
	}
	bl := map[string]string{}
	var ids []string
	for _, n := range page.Data.Shipments.Nodes {
		bl[n.ID] = n.BillOfLadingNumber
		ids = append(ids, n.ID)
	}

	out := runScript(t, "gateway", "SHIPGRAPH_AUTHORIZATION="+auth,
		filepath.Join("scripts", "federation-gateway.sh"), append([]string{base + "/graphql"}, ids...)...)
	answers := map[string]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue // Apollo Server's own notes
		}
		var a struct {
			Query  string
			Status int
			Data   json.RawMessage
			Errors []any
		}
		if err := json.Unmarshal([]byte(line), &a); err != nil || a.Status != 200 || len(a.Errors) > 0 {
			t.Fatalf("gateway answer %q: %v", line, err)
		}
		answers[a.Query] = a.Data
	}
	if len(answers) != 2 {
		t.Fatalf("gateway answered %d queries, want 2", len(answers))
	}

	// Customers (their subgraph) with their shipments' attributes and
	// containers (Shipgraph's, by _entities).
	var cs struct {
		Customers []struct {
			Name      string
			Shipments []struct {
				ID, BillOfLadingNumber string
				Containers             []struct{ Number string }
				Customer               struct{ Name string } `json:"crmCustomer"`
			}
		}
	}
	if err := json.Unmarshal(answers["customers"], &cs); err != nil || len(cs.Customers) != 2 {
		t.Fatalf("customers: %v %s", err, answers["customers"])
	}
	seen := 0
	for _, c := range cs.Customers {
		for _, s := range c.Shipments {
			seen++
			if s.BillOfLadingNumber == "" || s.BillOfLadingNumber != bl[s.ID] || s.Customer.Name != c.Name {
				t.Errorf("customer %s: shipment %+v, want bill of lading %q", c.Name, s, bl[s.ID])
			}
		}
	}
	if seen != len(ids) {
		t.Errorf("customers hold %d shipments, want %d", seen, len(ids))
	}

	// Shipments (Shipgraph) with their customer (the other subgraph).
	var ss struct {
		Shipments struct {
			Nodes []struct {
				ID       string
				Customer *struct{ Name string } `json:"crmCustomer"`
			}
		}
	}
	if err := json.Unmarshal(answers["shipments"], &ss); err != nil || len(ss.Shipments.Nodes) != 3 {
		t.Fatalf("shipments: %v %s", err, answers["shipments"])
	}
	for i, n := range ss.Shipments.Nodes {
		want := []string{"Initech", "Hooli"}[i%2]
		if n.ID != ids[i] || n.Customer == nil || n.Customer.Name != want {
			t.Errorf("shipment %d: %+v, want %s of customer %s", i, n, ids[i], want)
		}
	}
}

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
	out := runScript(t, "client", "SHIPGRAPH_AUTHORIZATION=Token "+keys["acme member"],
		script, "client", base+"/graphql", manifest, `[{"name":"Viewer","variables":{}},{"name":"Shipments","variables":{"first":2}}]`)
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

// runScript runs a script with env added to the environment and returns
// its output; both its output and its stderr are logged, and the test
// fails (naming what) when the script does.
func runScript(t *testing.T, what, env, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Logf("%s%s", out, stderr.Bytes())
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return out
}
