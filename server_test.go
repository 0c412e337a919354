package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"shipgraph/db/dbtest"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

func TestMain(m *testing.M) { pg.Main(m) }

// runCmd runs one verb of the real CLI and returns its exit code and output.
func runCmd(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut strings.Builder
	if len(args) > 0 && (args[0] == "seed" || args[0] == "serve") {
		// Demo files and their secret go to a directory of the test's
		// own (an explicit --data-dir later in args still wins).
		args = append([]string{args[0], "--data-dir", t.TempDir()}, args[1:]...)
	}
	code := run(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

var tokenLine = regexp.MustCompile(`^token (\w+) (admin|member|viewer) (sg_[a-z0-9]+)$`)

// seedKeys seeds url and returns the demo keys by "account role".
func seedKeys(t *testing.T, url string, shipments string) map[string]string {
	t.Helper()
	code, out, errOut := runCmd(t, context.Background(), "seed", "--database-url", url, "--shipments", shipments)
	if code != 0 {
		t.Fatalf("seed exit %d: %s", code, errOut)
	}
	keys := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		m := tokenLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("seed printed %q, want 'token <account> <role> <key>'", line)
		}
		keys[m[1]+" "+m[2]] = m[3]
	}
	for _, k := range []string{"acme admin", "acme member", "acme viewer", "globex admin", "globex member", "globex viewer"} {
		if keys[k] == "" {
			t.Fatalf("seed printed no key for %s: %q", k, out)
		}
	}
	return keys
}

// serveSeeded seeds a database of the test's own with shipments and
// serves it with args: the database's URL, the server's base URL and the
// demo keys.
func serveSeeded(t *testing.T, shipments string, args ...string) (url, base string, keys map[string]string) {
	t.Helper()
	url = dbtest.NewDB(t)
	keys = seedKeys(t, url, shipments)
	return url, serve(t, append([]string{"--database-url", url}, args...)...), keys
}

// serve starts `shipgraph serve` on 127.0.0.1:0 and returns its base URL;
// the server stops (and run returns 0) when the test ends.
func serve(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	base, done, stderr := startServe(t, ctx, append([]string{"--shutdown-delay", "0", "--data-dir", t.TempDir()}, args...)...)
	t.Cleanup(func() { stopServe(t, cancel, done, stderr) })
	return base
}

// stopServe cancels a serve run and waits for it to return: the test fails
// unless it returns 0 within 30 s.
func stopServe(t *testing.T, cancel func(), done <-chan int, stderr *testkit.Log) {
	t.Helper()
	cancel()
	if code := waitServe(t, done, 30*time.Second, "serve"); code > 0 {
		t.Errorf("serve exited %d: %s", code, stderr.String())
	}
}

// waitServe waits up to within for a serve run to return and returns its
// exit code: -1, and the test failed naming what, when it did not return.
func waitServe(t *testing.T, done <-chan int, within time.Duration, what string) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(within):
		t.Errorf("%s did not stop within %v", what, within)
		return -1
	}
}

// startServe runs `shipgraph serve --addr 127.0.0.1:0 --log-level warn`
// with args until ctx ends (its cancellation is the signal) and returns its
// base URL once it listens, the channel run's exit code arrives on, and
// its stderr.
func startServe(t *testing.T, ctx context.Context, args ...string) (base string, done <-chan int, stderr *testkit.Log) {
	t.Helper()
	pr, pw := io.Pipe()
	exit := make(chan int, 1)
	stderr = &testkit.Log{}
	go func() {
		code := run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}, args...), pw, stderr)
		pw.Close()
		exit <- code
	}()
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "shipgraph listening on "); ok {
			go func() { _, _ = io.Copy(io.Discard, pr) }()
			return rest, exit, stderr
		}
	}
	t.Fatalf("serve exited before listening: %s", stderr.String())
	return "", exit, stderr
}

func TestServeEndToEnd(t *testing.T) {
	_, base, keys := serveSeeded(t, "20")

	if res, body := testkit.Get(t, base+"/healthz", ""); res.StatusCode != 200 || string(body) != "ok\n" {
		t.Fatalf("/healthz: %d %q", res.StatusCode, body)
	}
	if res, _ := testkit.Get(t, base+"/readyz", ""); res.StatusCode != 200 {
		t.Fatalf("/readyz: %d", res.StatusCode)
	}

	// /v2 without a key: the JSON:API 401 of the spec.
	res, body := testkit.Get(t, base+"/v2/documents", "")
	if res.StatusCode != 401 || res.Header.Get("Content-Type") != "application/vnd.api+json" {
		t.Fatalf("/v2/documents without key: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var errDoc struct {
		Errors []struct{ Status, Title, Detail string }
	}
	if err := json.Unmarshal(body, &errDoc); err != nil || len(errDoc.Errors) != 1 ||
		errDoc.Errors[0].Status != "401" || errDoc.Errors[0].Title != "Unauthorized" || errDoc.Errors[0].Detail == "" {
		t.Fatalf("401 body: %s", body)
	}
	if res, _ := testkit.Get(t, base+"/v2/documents", "sg_0000000000000000000000000000000000000000"); res.StatusCode != 401 {
		t.Fatalf("unknown key: %d", res.StatusCode)
	}

	// GraphQL with a key: the viewer is the key's account.
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(`{"query":"{ viewer { account { companyName } role } shipments(first: 5) { totalCount nodes { id containers { number } } } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Token "+keys["acme viewer"])
	gres, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	gbody, _ := io.ReadAll(gres.Body)
	gres.Body.Close()
	var gql struct {
		Data struct {
			Viewer struct {
				Account struct{ CompanyName string }
				Role    string
			}
			Shipments struct {
				TotalCount int
				Nodes      []struct{ ID string }
			}
		}
		Errors []any
	}
	if err := json.Unmarshal(gbody, &gql); err != nil || len(gql.Errors) > 0 {
		t.Fatalf("graphql: %s", gbody)
	}
	if gql.Data.Viewer.Account.CompanyName != "Acme Logistics" || gql.Data.Viewer.Role != "VIEWER" ||
		gql.Data.Shipments.TotalCount == 0 || len(gql.Data.Shipments.Nodes) != 5 {
		t.Fatalf("graphql data: %s", gbody)
	}

	// /metrics exposes the statement counter, which the requests above moved.
	_, metrics := testkit.Get(t, base+"/metrics", "")
	m := regexp.MustCompile(`(?m)^shipgraph_db_queries_total\{target="primary"\} (\d+)`).FindSubmatch(metrics)
	if m == nil || string(m[1]) == "0" {
		t.Fatalf("/metrics has no non-zero shipgraph_db_queries_total{target=\"primary\"}:\n%s", metrics)
	}
}

func TestCLIErrors(t *testing.T) {
	ctx := context.Background()
	if code, _, _ := runCmd(t, ctx); code != 2 {
		t.Errorf("no verb: exit %d, want 2", code)
	}
	if code, _, errOut := runCmd(t, ctx, "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown verb") {
		t.Errorf("unknown verb: exit %d %q", code, errOut)
	}
	// Help goes to stdout (`serve --help | less`), with exit 0.
	for _, verb := range [][]string{{"serve"}, {"migrate"}, {"seed"}, {"token", "create"}, {"carrier-sim"}, {"help"}} {
		code, out, errOut := runCmd(t, ctx, append(verb, "--help")...)
		want := "DATABASE_URL"
		if verb[0] == "carrier-sim" {
			want = "--addr string"
		} else if verb[0] == "help" {
			want = "carrier-sim"
		}
		if code != 0 || !strings.Contains(out, want) || errOut != "" {
			t.Errorf("%v --help: exit %d, stdout %q, stderr %q", verb, code, out, errOut)
		}
	}
	if code, out, errOut := runCmd(t, ctx, "carrier-sim", "-bogus"); code != 2 || out != "" || !strings.Contains(errOut, "--addr") {
		t.Errorf("carrier-sim with a bad flag: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// An unreachable database: one clear line, exit 1, quickly.
	code, _, errOut := runCmd(t, ctx, "migrate", "--database-url", "postgres://nobody@127.0.0.1:1/x?sslmode=disable&connect_timeout=2")
	if code != 1 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "unreachable") {
		t.Errorf("unreachable database: exit %d, %q", code, errOut)
	}
	code, _, errOut = runCmd(t, ctx, "migrate", "--database-url", "mysql://x")
	if code != 1 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("bad DATABASE_URL: exit %d, %q", code, errOut)
	}
	// A port in use is reported before anything starts.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, _, errOut = runCmd(t, ctx, "serve", "--addr", ln.Addr().String(), "--database-url", "postgres://nobody@127.0.0.1:1/x")
	if code != 1 || !strings.Contains(errOut, "cannot listen") {
		t.Errorf("port in use: exit %d, %q", code, errOut)
	}
	// Bad flags and roles.
	if code, _, _ := runCmd(t, ctx, "token", "create", "--account", "acme", "--role", "owner", "--database-url", "postgres://x@127.0.0.1:1/x"); code != 1 {
		t.Errorf("bad role: exit %d", code)
	}
	if code, _, _ := runCmd(t, ctx, "seed", "--shipments", "0", "--database-url", "postgres://x@127.0.0.1:1/x"); code != 1 {
		t.Errorf("--shipments 0: exit %d", code)
	}
}

func TestSeedRefusesNonEmptyAndTokenCreate(t *testing.T) {
	url := dbtest.NewDB(t)
	keys := seedKeys(t, url, "10")
	code, _, errOut := runCmd(t, context.Background(), "seed", "--database-url", url, "--shipments", "10")
	if code != 1 || !strings.Contains(errOut, "--force") {
		t.Fatalf("second seed: exit %d %q", code, errOut)
	}
	code, out, _ := runCmd(t, context.Background(), "seed", "--database-url", url, "--if-empty")
	if code != 0 || out != "" {
		t.Fatalf("seed --if-empty on a seeded database: exit %d %q", code, out)
	}

	code, out, errOut = runCmd(t, context.Background(), "token", "create", "--database-url", url, "--account", "globex", "--role", "member")
	m := tokenLine.FindStringSubmatch(strings.TrimSpace(out))
	if code != 0 || m == nil || m[1] != "globex" || m[2] != "member" {
		t.Fatalf("token create: exit %d %q %q", code, out, errOut)
	}
	base := serve(t, "--database-url", url)
	if res, _ := testkit.Get(t, base+"/v2/documents", m[3]); res.StatusCode != 200 {
		t.Fatalf("new key: %d", res.StatusCode)
	}
	if res, _ := testkit.Get(t, base+"/v2/documents", keys["acme admin"]); res.StatusCode != 200 {
		t.Fatalf("seeded key: %d", res.StatusCode)
	}
	code, _, errOut = runCmd(t, context.Background(), "token", "create", "--database-url", url, "--account", "nope", "--role", "member")
	if code != 1 || !strings.Contains(errOut, "not found") {
		t.Fatalf("unknown account: exit %d %q", code, errOut)
	}
}

// TestEmbeddedDatabase runs serve with no DATABASE_URL: the binary starts
// its own PostgreSQL under DATA_DIR, and stops it when the server stops.
func TestEmbeddedDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	// t.TempDir's parent is 0700, which the unprivileged postgres user
	// (used when tests run as root) cannot enter.
	parent, err := os.MkdirTemp("", "shipgraph-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	dir := filepath.Join(parent, "data")
	t.Setenv("DATABASE_URL", "")
	t.Cleanup(func() {
		// Registered before serve's cleanup, so it runs after the server
		// stopped (LIFO): no postgres may be left on dir.
		if pids := processesWith(t, "postgres\x00-D\x00"+dir); len(pids) > 0 {
			t.Errorf("postgres still running on %s: pids %v", dir, pids)
		}
		if _, err := os.Stat(filepath.Join(dir, "postgres", "PG_VERSION")); err != nil {
			t.Errorf("cluster not kept in DATA_DIR: %v", err)
		}
	})
	base := serve(t, "--data-dir", dir)
	if res, _ := testkit.Get(t, base+"/readyz", ""); res.StatusCode != 200 {
		t.Fatalf("/readyz with the embedded database: %d", res.StatusCode)
	}
	if pids := processesWith(t, "postgres\x00-D\x00"+dir); len(pids) == 0 {
		t.Fatal("the leftover check cannot see the running postgres: it would pass vacuously")
	}
	// The owner's way in while it serves: there is no TCP port.
	code, out, errOut := runCmd(t, context.Background(), "psql", "--data-dir", dir, "--", "-XAtc", "SELECT current_database()")
	if code != 0 || out != "shipgraph\n" {
		t.Fatalf("shipgraph psql: exit %d %q %q", code, out, errOut)
	}
}

// processesWith lists the pids whose NUL-separated command line contains
// sub, from /proc; it fails the test when /proc cannot be read, so a
// leftover check never passes for want of a way to look.
func processesWith(t *testing.T, sub string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("cannot list processes: %v", err)
	}
	var pids []string
	seen := 0
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone meanwhile
		}
		seen++
		if strings.Contains(string(cmdline), sub) {
			pids = append(pids, e.Name())
		}
	}
	if seen == 0 {
		t.Fatal("cannot list processes: no command line readable in /proc")
	}
	return pids
}

func TestMigrateIdempotent(t *testing.T) {
	url := dbtest.NewDB(t) // already migrated from the template
	for i := 0; i < 2; i++ {
		code, out, errOut := runCmd(t, context.Background(), "migrate", "--database-url", url)
		if code != 0 || out != "migrations applied\n" {
			t.Fatalf("migrate #%d: exit %d %q %q", i+1, code, out, errOut)
		}
	}
}
