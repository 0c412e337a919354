package httpapi_test

import (
	"net/http"
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
// cancelled and answers 503, without a statement_timeout.
func TestRequestTimeout(t *testing.T) {
	url, keys := seeded(t)
	c := testkit.Defaults()
	c.KeyCache = 0
	c.RequestTimeout = 300 * time.Millisecond
	in := start(t, url+"&statement_timeout=0", &c)
	tx := lockShipments(t, url)
	release := time.AfterFunc(5*time.Second, func() { _ = tx.Rollback() })
	defer release.Stop()
	begin := time.Now()
	r := in.do(t, http.MethodGet, "/v2/shipments", keys["acme/admin"], "")
	if took := time.Since(begin); r.status != http.StatusServiceUnavailable || took > 2*time.Second {
		t.Errorf("a request behind a lock: %d after %v, want 503 after about 300ms: %s", r.status, took, r.body)
	}
}
