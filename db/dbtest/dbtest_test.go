package dbtest_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"shipgraph/db/dbtest"
	"shipgraph/testkit/pg"
)

var migrations atomic.Int32

func TestMain(m *testing.M) {
	// These tests check a process's own template (its name, its drop):
	// not the run's shared one, which make test-citus asks for.
	os.Unsetenv(dbtest.EnvTemplate)
	dbtest.Main(m, func(ctx context.Context, db *sql.DB) error {
		migrations.Add(1)
		_, err := db.ExecContext(ctx, `
			CREATE TABLE widget (id int PRIMARY KEY, name text NOT NULL);
			INSERT INTO widget VALUES (1, 'seed');`)
		return err
	})
}

func widgets(t *testing.T, db *sql.DB) []string {
	t.Helper()
	return pg.Column[string](t, db, "SELECT name FROM widget ORDER BY id")
}

func TestIsolatedDatabases(t *testing.T) {
	begin := time.Now()
	urlA := dbtest.NewDB(t)
	t.Logf("first NewDB (server start + template, if not yet done): %v", time.Since(begin).Round(time.Millisecond))
	begin = time.Now()
	urlB := dbtest.NewDB(t)
	t.Logf("second NewDB: %v", time.Since(begin).Round(time.Millisecond))
	if urlA == urlB {
		t.Fatalf("same URL twice: %s", urlA)
	}
	a, b := dbtest.Open(t, urlA), dbtest.Open(t, urlB)

	if _, err := a.Exec("INSERT INTO widget VALUES (2, 'only in a')"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(widgets(t, a), ","); got != "seed,only in a" {
		t.Errorf("a has %q", got)
	}
	if got := strings.Join(widgets(t, b), ","); got != "seed" {
		t.Errorf("b has %q, want only the template's row", got)
	}
	if n := migrations.Load(); n != 1 {
		t.Errorf("migrate ran %d times, want once", n)
	}
}

func TestParallelAndDropped(t *testing.T) {
	names := make([]string, 8)
	t.Run("group", func(t *testing.T) {
		for i := range names {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				db := dbtest.Open(t, dbtest.NewDB(t))
				if _, err := db.Exec("INSERT INTO widget VALUES ($1, 'mine')", 100+i); err != nil {
					t.Fatal(err)
				}
				if got := widgets(t, db); len(got) != 2 {
					t.Errorf("widgets = %q", got)
				}
				if err := db.QueryRow("SELECT current_database()").Scan(&names[i]); err != nil {
					t.Fatal(err)
				}
				// Left open on purpose: the cleanup's DROP ... WITH (FORCE)
				// must cope with it.
				if _, err := db.Exec("SELECT 1"); err != nil {
					t.Fatal(err)
				}
			})
		}
	})

	admin := dbtest.Open(t, dbtest.AdminURL())
	for _, name := range names {
		var n int
		if err := admin.QueryRow("SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 || !strings.HasPrefix(name, "sg_test_") {
			t.Errorf("database %q still exists after its test (count %d)", name, n)
		}
	}

	// Nothing may connect to the template, so no clone can fail on it.
	var allow bool
	err := admin.QueryRow("SELECT datallowconn FROM pg_database WHERE datname LIKE $1",
		fmt.Sprintf("sg_tmpl_%d_%%", os.Getpid())).Scan(&allow)
	if err != nil || allow {
		t.Errorf("template allows connections: %v, %v", allow, err)
	}
}

// TestExternalServer runs this test binary again with
// SHIPGRAPH_TEST_DATABASE_URL pointing at our server: it must use it,
// start nothing, and drop its template when done.
func TestExternalServer(t *testing.T) {
	admin := dbtest.AdminURL()
	cmd := exec.Command(os.Args[0], "-test.run=^TestExternalHelper$", "-test.v")
	cmd.Env = append(os.Environ(), dbtest.EnvURL+"="+admin, "DBTEST_HELPER=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestExternalHelper") {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	pid := cmd.Process.Pid

	var n int
	if err := dbtest.Open(t, admin).QueryRow("SELECT count(*) FROM pg_database WHERE datname LIKE $1",
		fmt.Sprintf("sg_%%_%d_%%", pid)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("helper left %d databases behind", n)
	}
	if dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("shipgraph-dbtest-%d-*", pid))); len(dirs) > 0 {
		t.Errorf("helper made a server directory on an external server: %v", dirs)
	}
}

func TestExternalHelper(t *testing.T) {
	if os.Getenv("DBTEST_HELPER") == "" {
		t.Skip("helper process for TestExternalServer")
	}
	if got, want := dbtest.AdminURL(), os.Getenv(dbtest.EnvURL); got != want {
		t.Errorf("AdminURL = %q, want %q", got, want)
	}
	db := dbtest.Open(t, dbtest.NewDB(t))
	if got := widgets(t, db); len(got) != 1 {
		t.Errorf("widgets = %q", got)
	}
	var tmpl int
	if err := db.QueryRow("SELECT count(*) FROM pg_database WHERE datname LIKE $1",
		fmt.Sprintf("sg_tmpl_%d_%%", os.Getpid())).Scan(&tmpl); err != nil || tmpl != 1 {
		t.Errorf("own template on the external server: %d, %v", tmpl, err)
	}
}

// TestNewServer: a private server with a migrated database of its own,
// restarted on the same data directory and socket: the data is still there,
// a pool opened before makes new connections to the same URL, and the
// package's shared server, with its tests' connections, is not disturbed.
func TestNewServer(t *testing.T) {
	shared := dbtest.Open(t, dbtest.NewDB(t))
	var sharedPid int
	if err := shared.QueryRow("SELECT pg_backend_pid()").Scan(&sharedPid); err != nil {
		t.Fatal(err)
	}
	shared.SetMaxOpenConns(1)

	s := dbtest.NewServer(t)
	url := s.URL()
	db := dbtest.Open(t, url)
	if got := strings.Join(widgets(t, db), ","); got != "seed" {
		t.Fatalf("private database has %q", got)
	}
	if _, err := db.Exec("INSERT INTO widget VALUES (2, 'before restart')"); err != nil {
		t.Fatal(err)
	}
	s.Stop(t)
	if err := db.Ping(); err == nil {
		t.Fatal("the stopped server answers")
	}
	s.Start(t)
	if s.URL() != url {
		t.Fatalf("URL %s after the restart, was %s", s.URL(), url)
	}
	if got := strings.Join(widgets(t, db), ","); got != "seed,before restart" {
		t.Fatalf("after the restart the private database has %q", got)
	}
	var pid int
	if err := shared.QueryRow("SELECT pg_backend_pid()").Scan(&pid); err != nil || pid != sharedPid {
		t.Fatalf("the shared server's connection: backend %d (%v), was %d", pid, err, sharedPid)
	}
}
