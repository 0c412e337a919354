// Package dbtest gives every test its own migrated PostgreSQL database.
//
// A package's tests opt in with
//
//	func TestMain(m *testing.M) { dbtest.Main(m, db.Migrate) }
//
// and each test that needs a database calls NewDB. The migrations run once
// per test process, into a template database; NewDB clones it with CREATE
// DATABASE ... TEMPLATE, which takes milliseconds, so tests stay isolated
// from each other (and may use t.Parallel) without paying for migrations
// each time.
//
// The server is the one named by SHIPGRAPH_TEST_DATABASE_URL (its user must
// be allowed to CREATE DATABASE), or else a private pgembed server in a
// temporary directory, started on the first NewDB and stopped when the tests
// end. Nothing is started for a test run that calls no NewDB (e.g. -run
// selecting other tests).
//
// A test that stops and starts PostgreSQL itself must not do it to that
// shared server, under the other tests: NewServer gives it a private
// embedded server of its own, with one migrated database.
package dbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lib/pq"

	"shipgraph/db/pgembed"
)

// EnvURL names the variable holding an existing server's URL.
const EnvURL = "SHIPGRAPH_TEST_DATABASE_URL"

// EnvTemplate names a variable that, with EnvURL, lets the test processes
// of one run share their template: its value names the run (make
// test-citus sets it, and drops the template after the run). The first
// process to need it migrates it, under an advisory lock; the others clone
// it. On a Citus cluster building the template (migrations, then the
// distribution step on every node) is most of a small package's time.
// The template is also keyed by the migrate func's name, so a package
// with a migrate func of its own gets a template of its own.
const EnvTemplate = "SHIPGRAPH_TEST_TEMPLATE"

// tempPrefix starts the name of each embedded server's directory, followed
// by the owning test process' pid so that later runs can tell leftovers of
// dead runs from the directories of concurrently running ones.
const tempPrefix = "shipgraph-dbtest-"

var (
	migrateFn atomic.Pointer[func(context.Context, *sql.DB) error]

	setupOnce sync.Once
	env       *environment
	setupErr  error

	// cloneMu serialises CREATE DATABASE ... TEMPLATE: concurrent clones
	// of one template are not worth the contention and lock-wait risk.
	cloneMu sync.Mutex
	seq     atomic.Int64
)

// environment is what setup built and teardown undoes; fields are set as
// they come into existence, so a partial setup is undone too.
type environment struct {
	dir      string // embedded server's temporary directory
	srv      *pgembed.Server
	adminURL *url.URL
	admin    *sql.DB
	tmpl     string // template database, once created
	external bool
	shared   bool // tmpl is the run's (EnvTemplate): teardown leaves it
	// workers are the admin connections of a Citus coordinator's workers
	// (empty on plain PostgreSQL): each test database exists on every
	// node, cloned from a template of the same name on each.
	workers []*sql.DB
}

// Main runs the package's tests with a database server available to NewDB
// and AdminURL, and then shuts the server down and removes its files (when
// it started one) or drops its template database (on an external server).
// migrate brings an empty database to the current schema; it runs once, on
// the template. Main does not return: it calls os.Exit with m.Run's code.
func Main(m *testing.M, migrate func(ctx context.Context, db *sql.DB) error) {
	if migrate == nil {
		panic("dbtest.Main: migrate is nil")
	}
	migrateFn.Store(&migrate)
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// A panicking test kills the process without running this; then the
	// server still goes (pgembed's parent-death signal) and the temporary
	// directory is removed by a later run (removeStaleDirs).
	defer teardown()
	return m.Run()
}

// NewDB creates a database cloned from the migrated template, to be dropped
// when tb and its subtests finish, and returns its URL.
func NewDB(tb testing.TB) string {
	tb.Helper()
	e := ready(tb)
	name := fmt.Sprintf("sg_test_%d_%08x", seq.Add(1), rand.Uint32())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Each node (one on plain PostgreSQL; a Citus coordinator and its
	// workers) clones its own copy of the template, all at once: they are
	// separate servers.
	cloneMu.Lock()
	nodes := e.nodes()
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = n.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)+" TEMPLATE "+pq.QuoteIdentifier(e.tmpl))
		}()
	}
	wg.Wait()
	cloneMu.Unlock()
	err := errors.Join(errs...)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// FORCE: a test that leaked a connection must not leak the database
		// too.
		if err := e.drop(ctx, name); err != nil {
			tb.Errorf("dbtest: dropping test database %s: %v", name, err)
		}
	})
	if err != nil {
		tb.Fatalf("dbtest: creating test database from template: %v", err)
	}
	if len(e.workers) > 0 {
		// Citus records the database among its distributed objects, by
		// oid: the clone's record still names the template, which a node
		// added later (citus_add_node) would be asked to find.
		d, err := sql.Open("postgres", withDB(e.adminURL, name))
		if err == nil {
			_, err = d.ExecContext(ctx, `UPDATE pg_catalog.pg_dist_object SET objid = (SELECT oid FROM pg_database WHERE datname = current_database())
				WHERE classid = 'pg_database'::regclass`)
			d.Close()
		}
		if err != nil {
			tb.Fatalf("dbtest: the clone's Citus metadata: %v", err)
		}
	}
	return withDB(e.adminURL, name)
}

// drop drops database name on every node, the coordinator first: its
// sessions hold connections to the workers' databases, which go with them;
// then the workers, all at once (separate servers). A worker's database
// may still be held by such a connection for a moment after (DROP … FORCE
// ends the worker's own sessions, not the closing ones): that error is
// retried until ctx ends.
//
// On Citus every node's maintenance daemon connects to the other nodes'
// copies of the database (deadlock detection, transaction recovery) every
// few seconds: a loaded machine saw those connections come back between
// FORCE's ending them and the drop for a minute. So no node takes new
// connections to it first (best effort: a node that refuses still gets
// the drop and its retries).
func (e *environment) drop(ctx context.Context, name string) error {
	if len(e.workers) > 0 {
		for _, n := range e.nodes() {
			_, _ = n.ExecContext(ctx, "ALTER DATABASE "+pq.QuoteIdentifier(name)+" WITH ALLOW_CONNECTIONS false")
		}
	}
	if err := dropOn(ctx, e.admin, name); err != nil {
		return err
	}
	errs := make([]error, len(e.workers))
	var wg sync.WaitGroup
	for i, n := range e.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = dropOn(ctx, n, name)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func dropOn(ctx context.Context, n *sql.DB, name string) error {
	for {
		_, err := n.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name)+" WITH (FORCE)")
		var pqErr *pq.Error
		if err == nil || !errors.As(err, &pqErr) || pqErr.Code != "55006" || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// nodes returns the admin connections of every server a test database lives
// on: the workers first, then the coordinator (or the one server).
func (e *environment) nodes() []*sql.DB {
	return append(append([]*sql.DB(nil), e.workers...), e.admin)
}

// Citus reports whether the test databases are distributed: the server of
// SHIPGRAPH_TEST_DATABASE_URL is a Citus coordinator with workers. Tests
// of what only one PostgreSQL server can do skip on it, saying why.
func Citus(tb testing.TB) bool {
	tb.Helper()
	return len(ready(tb).workers) > 0
}

// AdminURL returns the URL of the server's maintenance database ("postgres"
// on the embedded server; SHIPGRAPH_TEST_DATABASE_URL as given otherwise),
// for tests that need to work outside their own database. It starts the
// server if needed, and panics if that fails, having no test to fail.
func AdminURL() string {
	if migrateFn.Load() == nil {
		panic("dbtest.AdminURL: call dbtest.Main(m, migrate) from TestMain first")
	}
	setupOnce.Do(doSetup)
	if setupErr != nil {
		panic("dbtest: " + setupErr.Error())
	}
	return env.adminURL.String()
}

// ready sets the environment up on first use and fails tb if it is unusable.
func ready(tb testing.TB) *environment {
	tb.Helper()
	if migrateFn.Load() == nil {
		tb.Fatal("dbtest: call dbtest.Main(m, migrate) from TestMain in this package before using NewDB")
	}
	setupOnce.Do(doSetup)
	if setupErr != nil {
		tb.Fatalf("dbtest: %v", setupErr)
	}
	return env
}

func doSetup() {
	env = &environment{}
	begin := time.Now()
	setupErr = env.setup(*migrateFn.Load())
	if testing.Verbose() && setupErr == nil {
		fmt.Fprintf(os.Stderr, "dbtest: template %s ready in %v\n", env.tmpl, time.Since(begin).Round(time.Millisecond))
	}
}

func (e *environment) setup(migrate func(context.Context, *sql.DB) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	if raw := os.Getenv(EnvURL); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return fmt.Errorf("%s must be a postgres:// URL, got %q", EnvURL, raw)
		}
		e.adminURL, e.external = u, true
	} else {
		removeStaleDirs()
		dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", tempPrefix, os.Getpid()))
		if err != nil {
			return err
		}
		e.dir = dir
		if e.srv, err = pgembed.Start(ctx, pgembed.Options{DataDir: dir, Fast: true}); err != nil {
			return fmt.Errorf("starting embedded PostgreSQL (set %s to use an existing server): %w", EnvURL, err)
		}
		e.adminURL, _ = url.Parse(e.srv.URL("postgres"))
	}

	admin, err := sql.Open("postgres", e.adminURL.String())
	if err != nil {
		return err
	}
	e.admin = admin
	if err := admin.PingContext(ctx); err != nil {
		return fmt.Errorf("connecting to %s: %w", e.adminURL.Redacted(), err)
	}

	coordinator, err := e.findWorkers(ctx)
	if err != nil {
		return err
	}

	tmpl := fmt.Sprintf("sg_tmpl_%d_%08x", os.Getpid(), rand.Uint32())
	if run := os.Getenv(EnvTemplate); run != "" && e.external {
		tmpl = sharedTemplateName(run, migrate)
		conn, err := e.admin.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		// Session lock, released when conn goes back (closed) at return.
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(hashtext($1))`, tmpl); err != nil {
			return fmt.Errorf("waiting for the shared template: %w", err)
		}
		defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(hashtext($1))`, tmpl) //nolint:errcheck
		// Ready once its connections are refused, which setup does last
		// (the coordinator after the workers).
		var ready bool
		if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1 AND NOT datallowconn)`, tmpl).Scan(&ready); err != nil {
			return err
		}
		e.shared = true
		if ready {
			e.tmpl = tmpl
			return nil
		}
		// What a process that failed half-way left.
		if err := e.drop(ctx, tmpl); err != nil {
			return fmt.Errorf("dropping a half-built shared template: %w", err)
		}
	}
	for _, n := range e.nodes() {
		if _, err := n.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(tmpl)); err != nil {
			return fmt.Errorf("creating template database: %w", err)
		}
	}
	e.tmpl = tmpl
	if err := e.citusTemplate(ctx, coordinator); err != nil {
		return err
	}

	db, err := sql.Open("postgres", withDB(e.adminURL, tmpl))
	if err != nil {
		return err
	}
	err = migrate(ctx, db)
	// Cloning fails while anyone is connected to the template, so the
	// migration's connections go before any NewDB.
	db.Close()
	if err != nil {
		return fmt.Errorf("migrating template database: %w", err)
	}
	// Closing only starts the backends' exit, and a migrate func may have
	// leaked a connection that Close leaves open; end them all, and refuse
	// new ones so nothing can ever connect to the template again.
	for _, n := range e.nodes() {
		if _, err := n.ExecContext(ctx, "ALTER DATABASE "+pq.QuoteIdentifier(tmpl)+" WITH ALLOW_CONNECTIONS false"); err != nil {
			return fmt.Errorf("locking template database: %w", err)
		}
		if _, err := n.ExecContext(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", tmpl); err != nil {
			return fmt.Errorf("disconnecting from template database: %w", err)
		}
	}
	return nil
}

// findWorkers connects to the workers when the admin database is a Citus
// coordinator's (scripts/citus-cluster.sh sets its "postgres" database up
// so), and returns the coordinator's own host and port then.
func (e *environment) findWorkers(ctx context.Context) (string, error) {
	var citus bool
	if err := e.admin.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&citus); err != nil || !citus {
		return "", err
	}
	rows, err := e.admin.QueryContext(ctx, `SELECT nodename, nodeport, groupid FROM pg_dist_node WHERE noderole = 'primary' AND isactive ORDER BY nodeid`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var coordinator string
	var workers []string
	for rows.Next() {
		var host string
		var port, group int
		if err := rows.Scan(&host, &port, &group); err != nil {
			return "", err
		}
		if group == 0 {
			coordinator = fmt.Sprintf("%s:%d", host, port)
		} else {
			workers = append(workers, fmt.Sprintf("%s:%d", host, port))
		}
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	for _, w := range workers {
		u := *e.adminURL
		u.Host = w
		db, err := sql.Open("postgres", u.String())
		if err != nil {
			return "", err
		}
		e.workers = append(e.workers, db)
		if err := db.PingContext(ctx); err != nil {
			return "", fmt.Errorf("connecting to Citus worker %s: %w", w, err)
		}
	}
	if len(workers) > 0 && coordinator == "" {
		coordinator = e.adminURL.Host
	}
	return coordinator, nil
}

// citusTemplate makes the template database a Citus cluster of its own:
// the extension on every node, the workers added on the coordinator. The
// migrations then distribute its tables (db.Distribute), and each test
// database is cloned from the template on every node.
func (e *environment) citusTemplate(ctx context.Context, coordinator string) error {
	if len(e.workers) == 0 {
		return nil
	}
	var dbs []*sql.DB
	defer func() {
		for _, d := range dbs {
			d.Close()
		}
	}()
	open := func(host string) (*sql.DB, error) {
		u := *e.adminURL
		u.Host = host
		d, err := sql.Open("postgres", withDB(&u, e.tmpl))
		if err == nil {
			dbs = append(dbs, d)
		}
		return d, err
	}
	rows, err := e.admin.QueryContext(ctx, `SELECT nodename || ':' || nodeport FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' AND isactive ORDER BY nodeid`)
	if err != nil {
		return err
	}
	var workers []string
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			rows.Close()
			return err
		}
		workers = append(workers, w)
	}
	rows.Close()
	for _, w := range workers {
		d, err := open(w)
		if err != nil {
			return err
		}
		if _, err := d.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS citus`); err != nil {
			return fmt.Errorf("citus on worker %s: %w", w, err)
		}
	}
	d, err := open(coordinator)
	if err != nil {
		return err
	}
	host, port, _ := strings.Cut(coordinator, ":")
	if _, err := d.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS citus`); err != nil {
		return fmt.Errorf("citus on the coordinator: %w", err)
	}
	if _, err := d.ExecContext(ctx, `SELECT citus_set_coordinator_host($1, $2::int)`, host, port); err != nil {
		return fmt.Errorf("citus coordinator: %w", err)
	}
	for _, w := range workers {
		h, p, _ := strings.Cut(w, ":")
		if _, err := d.ExecContext(ctx, `SELECT citus_add_node($1, $2::int)`, h, p); err != nil {
			return fmt.Errorf("adding Citus worker %s: %w", w, err)
		}
	}
	return nil
}

// teardown undoes whatever setup got done. Errors can only be reported: the
// tests have already run.
func teardown() {
	e := env
	if e == nil {
		return
	}
	var errs []error
	if e.external && e.tmpl != "" && !e.shared {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := e.drop(ctx, e.tmpl)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("dropping template database %s: %w", e.tmpl, err))
		}
	}
	for _, w := range e.workers {
		w.Close()
	}
	if e.admin != nil {
		e.admin.Close()
	}
	if e.srv != nil {
		if err := e.srv.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if e.dir != "" {
		if err := os.RemoveAll(e.dir); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(os.Stderr, "dbtest: cleanup: %v\n", err)
	}
}

// sharedTemplateName is the name of the run's shared template for
// migrate: run and the func's name, reduced to what a database name holds.
func sharedTemplateName(run string, migrate func(context.Context, *sql.DB) error) string {
	h := fnv.New32a()
	h.Write([]byte(runtime.FuncForPC(reflect.ValueOf(migrate).Pointer()).Name()))
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '_'
	}, run)
	if len(clean) > 32 {
		clean = clean[:32]
	}
	return fmt.Sprintf("sg_tmpl_run_%s_%08x", clean, h.Sum32())
}

// withDB returns base with its database (the URL path) replaced by name.
func withDB(base *url.URL, name string) string {
	u := *base
	u.Path = "/" + name
	u.RawPath = ""
	return u.String()
}

// Server is a private embedded PostgreSQL server of one test, with one
// migrated database, for tests that stop and start the server itself: the
// package's shared server, and every test on it, must not see that. Its
// data directory and socket stay the same across Stop and Start, so
// connections made before a restart are made again to the same URL.
type Server struct {
	dir string
	srv *pgembed.Server
	url string
	// replication: AllowReplication was called; every Start allows it
	// again (pgembed rewrites pg_hba.conf at each start).
	replication bool
}

// serverDB names the database of a Server.
const serverDB = "shipgraph"

// NewServer starts a private embedded server in a temporary directory of
// its own (named as the shared one's, so leftovers of a killed run go the
// same way), creates a database migrated as Main's migrate says, and stops
// the server and removes its files when tb ends. It needs the PostgreSQL
// server binaries even when SHIPGRAPH_TEST_DATABASE_URL is set; it skips tb
// then if they are not installed. Starting one costs an initdb and the
// migrations (a second or two): use NewDB unless the test restarts the
// server.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	migrate := migrateFn.Load()
	if migrate == nil {
		tb.Fatal("dbtest: call dbtest.Main(m, migrate) from TestMain in this package before using NewServer")
		return nil
	}
	if _, err := pgembed.FindBinDir(); err != nil && os.Getenv(EnvURL) != "" {
		tb.Skipf("dbtest: a private server needs the PostgreSQL server binaries: %v", err)
	}
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", tempPrefix, os.Getpid()))
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{dir: dir}
	tb.Cleanup(func() {
		if s.srv != nil {
			if err := s.srv.Stop(); err != nil {
				tb.Errorf("dbtest: stopping the private server: %v", err)
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			tb.Errorf("dbtest: %v", err)
		}
	})
	s.Start(tb)
	s.url = s.srv.URL(serverDB)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := sql.Open("postgres", s.srv.URL("postgres"))
	if err != nil {
		tb.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+serverDB); err != nil {
		tb.Fatalf("dbtest: creating the private server's database: %v", err)
	}
	db, err := sql.Open("postgres", s.url)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	if err := (*migrate)(ctx, db); err != nil {
		tb.Fatalf("dbtest: migrating the private server's database: %v", err)
	}
	return s
}

// URL is the URL of the server's migrated database.
func (s *Server) URL() string { return s.url }

// Stop shuts the server down (fast shutdown: every connection is ended)
// and returns once postgres has exited.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	if s.srv == nil {
		tb.Fatal("dbtest: Stop: the private server is not running")
	}
	begin := time.Now()
	err := s.srv.Stop()
	s.srv = nil
	if err != nil {
		tb.Fatalf("dbtest: stopping the private server: %v", err)
	}
	tb.Logf("dbtest: private server stopped in %v", time.Since(begin).Round(time.Millisecond))
}

// Start starts the server on its data directory and socket again, and
// returns once it accepts connections.
func (s *Server) Start(tb testing.TB) {
	tb.Helper()
	if s.srv != nil {
		tb.Fatal("dbtest: Start: the private server is running")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	begin := time.Now()
	srv, err := pgembed.Start(ctx, pgembed.Options{DataDir: s.dir, Fast: true})
	if err != nil {
		tb.Fatalf("dbtest: starting the private server: %v", err)
	}
	s.srv = srv
	if s.replication {
		s.allowReplication(tb)
	}
	if s.url != "" && srv.URL(serverDB) != s.url {
		// pgembed falls back to a socket directory of a random name
		// when the usual one's path is too long for a Unix socket.
		tb.Fatalf("dbtest: the private server came back on %s, not %s (TMPDIR too long?)", srv.URL(serverDB), s.url)
	}
	tb.Logf("dbtest: private server ready in %v", time.Since(begin).Round(time.Millisecond))
}

// AllowReplication lets the server's OS user (and root) open replication
// connections on its socket, as pg_basebackup and a standby's walreceiver
// do (testkit/replicatest); wal_level and max_wal_senders are PostgreSQL's
// defaults (replica, 10). Opt-in: other tests' servers stay as they are.
func (s *Server) AllowReplication(tb testing.TB) {
	tb.Helper()
	s.replication = true
	s.allowReplication(tb)
}

func (s *Server) allowReplication(tb testing.TB) {
	tb.Helper()
	hba := filepath.Join(s.srv.Home(), "postgres", "pg_hba.conf")
	f, err := os.OpenFile(hba, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		tb.Fatalf("dbtest: allowing replication: %v", err)
	}
	_, err = f.WriteString("local replication all peer map=shipgraph\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatalf("dbtest: allowing replication: %v", err)
	}
	admin, err := sql.Open("postgres", s.srv.URL("postgres"))
	if err != nil {
		tb.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("SELECT pg_reload_conf()"); err != nil {
		tb.Fatalf("dbtest: reloading pg_hba.conf: %v", err)
	}
}

// SocketDir is the directory of the server's Unix socket.
func (s *Server) SocketDir() string { return s.srv.SocketDir() }

// Kill ends the server's postmaster with SIGKILL, as a crashed machine
// would (no shutdown checkpoint, backends left to die with their
// connections), and returns once it has exited. Failover tests
// (failover_test.go) kill the primary this way.
func (s *Server) Kill(tb testing.TB) {
	tb.Helper()
	if s.srv == nil {
		tb.Fatal("dbtest: Kill: the private server is not running")
	}
	if err := syscall.Kill(s.srv.Pid(), syscall.SIGKILL); err != nil {
		tb.Fatalf("dbtest: kill -9 %d: %v", s.srv.Pid(), err)
	}
	<-s.srv.Done()
	s.srv = nil
}

// Open is a plain database/sql pool on url (any database: a test's own, a
// server's admin database, a sync destination), closed when tb ends.
func Open(tb testing.TB, url string) *sql.DB {
	tb.Helper()
	q, err := sql.Open("postgres", url)
	if err != nil {
		tb.Fatalf("open %s: %v", url, err)
	}
	tb.Cleanup(func() { _ = q.Close() })
	return q
}
