package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"shipgraph/db/dbtest"
	"shipgraph/httpapi"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

// TestReadyzWithinItsTimeout: with every backend of the store frozen
// (SIGSTOP: the database accepts but never answers), /readyz answers 503
// within its timeout instead of hanging with the database.
func TestReadyzWithinItsTimeout(t *testing.T) {
	url, _ := seeded(t)
	in := start(t, url, nil)
	if r := in.do(t, http.MethodGet, "/readyz", "", ""); r.status != http.StatusOK {
		t.Fatalf("/readyz: %d %s", r.status, r.body)
	}
	admin := dbtest.Open(t, url)
	pids := pg.Column[int](t, admin, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if len(pids) == 0 {
		t.Fatal("no backends to freeze")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Skipf("cannot stop backend %d: %v", pid, err)
		}
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	}
	for i := range 3 {
		begin := time.Now()
		r := in.do(t, http.MethodGet, "/readyz", "", "")
		took := time.Since(begin)
		if r.status != http.StatusServiceUnavailable || took > httpapi.ReadyTimeout+time.Second {
			t.Errorf("probe %d with a frozen database: %d after %v, want 503 within %v", i, r.status, took, httpapi.ReadyTimeout)
		}
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	deadline := time.Now().Add(10 * time.Second)
	for in.do(t, http.MethodGet, "/readyz", "", "").status != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("/readyz not ready again after the database thawed")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRequestTimeout: a request past RequestTimeout has its statements
// cancelled and answers 503, without a statement_timeout. The lock it
// waits behind is held until it is answered (a minute at most): it must
// answer 503, no sooner than its timeout, and before that release (without
// the timeout it answers only after it). No upper bound in seconds: on a
// loaded machine the answer may come late, never with the lock released.
func TestRequestTimeout(t *testing.T) {
	url, keys := seeded(t)
	c := testkit.Defaults()
	c.KeyCache = 0
	c.RequestTimeout = 300 * time.Millisecond
	in := start(t, url+"&statement_timeout=0", &c)
	tx := lockShipments(t, url)
	release := time.AfterFunc(time.Minute, func() { _ = tx.Rollback() })
	begin := time.Now()
	r := in.do(t, http.MethodGet, "/v2/shipments", keys["acme/admin"], "")
	took := time.Since(begin)
	released := !release.Stop()
	if r.status != http.StatusServiceUnavailable || released || took < c.RequestTimeout {
		t.Errorf("a request behind a lock: %d after %v (lock released before: %v), want 503 after its %v timeout, with the lock still held: %s",
			r.status, took, released, c.RequestTimeout, r.body)
	}
}

// slowBody opens a connection to addr and sends a request announcing
// length bytes of body, then only the first few: a client trickling it.
func slowBody(t *testing.T, addr, path, key string, length int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Token %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"q", path, key, length)
	return c
}

// answered waits up to within for the server to answer on c or close it,
// and returns the status line ("" when closed without an answer) and how
// long it took. A server still silent after within fails the test.
func answered(t *testing.T, c net.Conn, within time.Duration) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(within))
	line, err := bufio.NewReader(c).ReadString('\n')
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server still waits for the body after %v", within)
	}
	return strings.TrimSpace(line), time.Since(start)
}

// silentFor is how long a client waits in TestBodyTimeouts for the server
// to give up on a body that never comes: far beyond the body timeout (and
// any delay of a loaded machine); a server that waited for it would never
// answer.
const silentFor = 30 * time.Second

// TestBodyTimeouts: a body that does not arrive within BodyTimeout is cut;
// an announced Content-Length over BodyLimit is answered 413 before a byte
// of the body is sent; a shutdown does not wait for a slow body. The
// bodies never come: a server that waited for them would not answer at all
// (silentFor), so no bound of a second or two is asserted.
func TestBodyTimeouts(t *testing.T) {
	url, keys := seeded(t)
	k := keys["acme/admin"]
	c := testkit.Defaults()
	c.BodyTimeout = 300 * time.Millisecond
	in := start(t, url, &c)
	addr := strings.TrimPrefix(in.url, "http://")

	for _, path := range []string{"/graphql", "/v2/custom_field_definitions"} {
		begin := time.Now() // before the request: the server's timeout starts later
		line, _ := answered(t, slowBody(t, addr, path, k, 100), silentFor)
		if took := time.Since(begin); took < c.BodyTimeout || strings.Contains(line, " 2") {
			t.Errorf("%s slow body: %q after %v, want cut after its %v timeout", path, line, took, c.BodyTimeout)
		}
	}

	// 10 GB announced, nothing sent: 413 in the API's shape, before the
	// body timeout (a server that read the body first would answer that
	// timeout instead, never 413: no byte comes).
	for _, path := range []string{"/graphql", "/v2/custom_field_definitions"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Token %s\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n", path, k)
		if line, took := answered(t, conn, silentFor); !strings.Contains(line, " 413 ") {
			t.Errorf("%s 10 GB announced: %q after %v, want 413 before a byte of the body", path, line, took)
		}
	}

	// Normal bodies still pass.
	if r := in.gql(t, k, `{ viewer { role } }`); r.status != http.StatusOK {
		t.Errorf("a normal body: %d %s", r.status, r.body)
	}

	// Shutdown with a slow body open (a long body timeout): it is cut at
	// once, and Shutdown returns without waiting for it.
	c.BodyTimeout = time.Minute
	store := open(t, url)
	c.Logger = slog.New(slog.DiscardHandler)
	h := testkit.Start(t, store, c)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.RegisterOnShutdown(h.CutBodies)
	// The request's headers read (StateActive): the shutdown cuts its body
	// whether the handler is reading it yet or not. A connection still new
	// would be waited for as if idle for 5 s by Shutdown itself.
	active := make(chan struct{}, 1)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateActive {
			select {
			case active <- struct{}{}:
			default:
			}
		}
	}
	srv.Start()
	defer srv.Close()
	conn := slowBody(t, strings.TrimPrefix(srv.URL, "http://"), "/graphql", k, 100)
	testkit.Recv(t, active, 30*time.Second, "the slow request's headers read")
	// The body would time out after a minute: a shutdown that waited for
	// it would still be waiting when its context ends, half-way there.
	ctx, cancel := context.WithTimeout(context.Background(), c.BodyTimeout/2)
	defer cancel()
	begin := time.Now()
	if err := srv.Config.Shutdown(ctx); err != nil {
		t.Errorf("shutdown after %v: %v, want it done without waiting for the slow body", time.Since(begin), err)
	}
	_, _ = answered(t, conn, silentFor)
}
