//go:build linux

package main

import (
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"shipgraph/db/dbtest"
	"shipgraph/db/pgembed"
)

// pafCluster is a pg_auto_failover formation started by the test: a
// monitor and two keepers (pg_autoctl), each with its PostgreSQL on a port
// of 127.0.0.1, run as the postgres OS user when the test runs as root.
type pafCluster struct {
	t     *testing.T
	dir   string
	bin   string
	cred  *syscall.Credential
	ports [3]int // monitor, node_1, node_2
	cmds  [3]*exec.Cmd
	done  [3]chan struct{}
	mon   *sql.DB
	state func(node string) string // reported state, by the monitor
}

// startPAF starts the formation and returns once node_1 is primary and
// node_2 its synchronous secondary. The monitor's health checks are
// tightened (a node unreachable for a second is unhealthy, a primary that
// does not answer is given 10 s to demote itself) so that a failover takes
// seconds, not the defaults' half a minute. The demote timeout is the
// monitor's guard against two primaries: it promotes the standby only once
// the old primary has had that long to stop taking writes. At 2 s a keeper
// slowed by a loaded machine was still taking writes on the old primary
// when the standby was promoted, and a switchover lost 730 of 2,138
// acknowledged writes (one CI run).
func startPAF(t *testing.T) *pafCluster {
	t.Helper()
	autoctl, err := exec.LookPath("pg_autoctl")
	if err != nil {
		t.Skip("pg_autoctl not installed (Debian package postgresql-15-auto-failover; .ci/run installs it)")
	}
	bin, err := pgembed.FindBinDir()
	if err != nil {
		t.Skipf("PostgreSQL server binaries: %v", err)
	}
	if _, err := os.Stat(filepath.Join(bin, "pg_config")); err != nil {
		t.Skipf("pg_config not beside %s: %v", bin, err)
	}
	cred, err := pgembed.ServerCredential()
	if err != nil {
		t.Skip(err)
	}
	dir, err := os.MkdirTemp("", "shipgraph-paf-")
	if err != nil {
		t.Fatal(err)
	}
	c := &pafCluster{t: t, dir: dir, bin: bin, cred: cred}
	c.own(dir)
	for i := range c.ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		c.ports[i] = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
	}
	t.Cleanup(func() {
		for i := range c.cmds {
			c.stop(i)
		}
		if t.Failed() {
			for _, n := range []string{"monitor", "node_1", "node_2"} {
				b, _ := os.ReadFile(filepath.Join(dir, n+".log"))
				if len(b) > 3000 {
					b = b[len(b)-3000:]
				}
				t.Logf("%s.log:\n%s", n, b)
			}
		}
		_ = os.RemoveAll(dir)
	})
	begin := time.Now()
	c.start(0, autoctl, "create", "monitor", "--pgdata", filepath.Join(dir, "monitor"), "--pgport", strconv.Itoa(c.ports[0]),
		"--hostname", "127.0.0.1", "--listen", "127.0.0.1", "--auth", "trust", "--no-ssl", "--run")
	mon := c.url(0, "pg_auto_failover")
	c.waitFor("the monitor", func(db *sql.DB) (bool, error) { return true, db.Ping() }, mon)
	monDB := c.open(mon)
	for _, s := range []string{"health_check_period=500", "health_check_timeout=500", "health_check_max_retries=1",
		"health_check_retry_delay=200", "node_considered_unhealthy_timeout=1000", "primary_demote_timeout=10000"} {
		k, v, _ := strings.Cut(s, "=")
		if _, err := monDB.Exec("ALTER SYSTEM SET pgautofailover." + k + " = " + v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := monDB.Exec("SELECT pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
	monitorURI := fmt.Sprintf("postgres://autoctl_node@127.0.0.1:%d/pg_auto_failover?sslmode=disable", c.ports[0])
	node := func(i int) {
		c.start(i, autoctl, "create", "postgres", "--pgdata", filepath.Join(dir, fmt.Sprintf("node_%d", i)), "--pgport", strconv.Itoa(c.ports[i]),
			"--hostname", "127.0.0.1", "--listen", "127.0.0.1", "--name", fmt.Sprintf("node_%d", i), "--monitor", monitorURI,
			"--auth", "trust", "--no-ssl", "--dbname", "shipgraph", "--run")
	}
	state := func(name string) string {
		var s string
		_ = monDB.QueryRow("SELECT reportedstate::text FROM pgautofailover.node WHERE nodename = $1", name).Scan(&s)
		return s
	}
	c.state = state
	c.mon = monDB
	node(1)
	c.waitFor("node_1 single", func(*sql.DB) (bool, error) { return state("node_1") == "single", nil }, mon)
	node(2)
	// pg_basebackup of node_2 waits for a spread checkpoint on node_1
	// (minutes on an idle server): an immediate CHECKPOINT finishes it.
	n1 := c.open(c.url(1, "postgres"))
	c.waitFor("node_2 secondary", func(*sql.DB) (bool, error) {
		_, _ = n1.Exec("CHECKPOINT")
		return state("node_1") == "primary" && state("node_2") == "secondary", nil
	}, mon)
	t.Logf("pg_auto_failover: monitor and two nodes ready in %v", time.Since(begin).Round(time.Millisecond))
	return c
}

func (c *pafCluster) own(path string) {
	if c.cred != nil {
		if err := os.Chown(path, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			c.t.Fatal(err)
		}
	}
}

// url is the URL of node i's database name, as the postgres superuser.
func (c *pafCluster) url(i int, name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.ports[i], name)
}

// FormationURL is the formation's URL as `pg_autoctl show uri` gives it:
// both nodes, target_session_attrs=read-write.
func (c *pafCluster) FormationURL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/shipgraph?target_session_attrs=read-write&sslmode=disable", c.ports[2], c.ports[1])
}

func (c *pafCluster) open(u string) *sql.DB {
	db := dbtest.Open(c.t, u)
	return db
}

func (c *pafCluster) start(i int, name string, args ...string) {
	logf, err := os.OpenFile(filepath.Join(c.dir, []string{"monitor", "node_1", "node_2"}[i]+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(name, args...)
	cmd.Dir = c.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	home := filepath.Join(c.dir, fmt.Sprintf("home%d", i))
	if err := os.Mkdir(home, 0o700); err != nil {
		c.t.Fatal(err)
	}
	c.own(home)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_DATA_HOME="+home,
		"PG_CONFIG="+filepath.Join(c.bin, "pg_config"), "PATH="+c.bin+":"+os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	c.cmds[i], c.done[i] = cmd, done
}

// stop ends keeper i and its PostgreSQL (SIGINT: a fast shutdown), killing
// them after 20 s.
func (c *pafCluster) stop(i int) {
	if c.cmds[i] == nil {
		return
	}
	pid := c.cmds[i].Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGINT)
	select {
	case <-c.done[i]:
	case <-time.After(20 * time.Second):
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	c.killPostmaster(i)
	c.cmds[i] = nil
}

// killPostmaster sends SIGKILL to node i's postmaster (from its
// postmaster.pid), if one runs.
func (c *pafCluster) killPostmaster(i int) {
	names := []string{"monitor", "node_1", "node_2"}
	b, err := os.ReadFile(filepath.Join(c.dir, names[i], "postmaster.pid"))
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0]); err == nil && pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// KillNode is the loss of node i's machine: its keeper (which would
// restart a killed postmaster at once) and its postmaster, kill -9.
func (c *pafCluster) KillNode(i int) {
	_ = syscall.Kill(-c.cmds[i].Process.Pid, syscall.SIGKILL)
	c.killPostmaster(i)
	<-c.done[i]
	c.cmds[i] = nil
}

// waitFor polls ok (every 50 ms: the state is on another process) until it
// holds, failing after a minute.
func (c *pafCluster) waitFor(what string, ok func(*sql.DB) (bool, error), u string) {
	c.t.Helper()
	db := c.open(u)
	deadline := time.Now().Add(time.Minute)
	var last error
	for {
		done, err := ok(db)
		if done && err == nil {
			return
		}
		last = err
		if time.Now().After(deadline) {
			c.t.Fatalf("pg_auto_failover: %s not reached within a minute (%v)", what, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFailoverAutoFailover: serve given a pg_auto_failover formation's URL
// (both nodes, target_session_attrs=read-write, as `pg_autoctl show uri`
// prints it), and a second instance, under reads, writes, both
// subscriptions and a webhook endpoint (underLoad, twice on one formation,
// which takes most of the time to start):
//
//  1. the planned switchover (pgautofailover.perform_failover, what
//     `pg_autoctl perform switchover` calls): no 500; the 503s (with
//     Retry-After) while neither node takes writes are counted and logged;
//  2. then node_2's machine, the primary since, is lost (its keeper and
//     postmaster killed -9) and the monitor promotes node_1 again.
//
// Each time: every acknowledged write on the new primary (the formation's
// standby is synchronous), no subscription event skipped or doubled, no
// webhook notification lost or doubled beyond those in flight, /readyz 200
// afterwards; at the end a key revoked through the first instance ends the
// second instance's subscription held with it.
func TestFailoverAutoFailover(t *testing.T) {
	c := startPAF(t)
	keys := seedKeys(t, c.FormationURL(), "3")
	base := serveLogged(t, "--database-url", c.FormationURL(), "--db-connect-timeout", "2s", "--webhook-allow-private-urls", "--webhook-limit", "100000", "--rate-limit", "0")
	second := startSecond(t, c.FormationURL(), keys["acme member"])

	t.Log("pg_auto_failover: planned switchover, node_1 to node_2")
	r := underLoad(t, base, keys["acme admin"], func() {
		if _, err := c.mon.Exec("SELECT pgautofailover.perform_failover('default', 0)"); err != nil {
			t.Fatal(err)
		}
		c.waitFor("node_2 primary", func(*sql.DB) (bool, error) {
			return c.state("node_2") == "primary" && c.state("node_1") == "secondary", nil
		}, c.url(0, "pg_auto_failover"))
	})
	r.check(t, c.url(2, "shipgraph"))

	t.Log("pg_auto_failover: node_2 (the primary) killed, the monitor promotes node_1")
	r = underLoad(t, base, keys["acme admin"], func() { c.KillNode(2) })
	r.check(t, c.url(1, "shipgraph"))
	second.revokeAfter(t, base, c.url(1, "shipgraph"))
}
