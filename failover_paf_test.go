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

// pafNames names the formation's processes by index: its data directory
// and log file under the test's directory.
var pafNames = [...]string{"monitor", "node_1", "node_2", "node_3"}

// pafCluster is a pg_auto_failover formation started by the test: a
// monitor and three keepers (pg_autoctl), each with its PostgreSQL on a
// port of 127.0.0.1, run as the postgres OS user when the test runs as
// root. node_1 and node_2 are failover candidates; node_3 is a quorum
// standby that is never promoted (candidate priority 0), and the formation
// waits for one synchronous standby (number_sync_standbys 1).
type pafCluster struct {
	t     *testing.T
	dir   string
	bin   string
	cred  *syscall.Credential
	ports [4]int // monitor, node_1, node_2, node_3
	cmds  [4]*exec.Cmd
	done  [4]chan struct{}
	mon   *sql.DB
	state func(node string) string // reported state, by the monitor
}

// startPAF starts the formation and returns once node_1 is primary,
// node_2 and node_3 its secondaries, and node_1 replicates synchronously to
// one of them (ANY 1). The monitor's timings are shortened so
// that a failover takes seconds, not the defaults' minute, but only where a
// dead node and a slow one differ:
//
//   - a node is unhealthy when its keeper has not reported for 3 s AND the
//     monitor's connection to its PostgreSQL failed twice (refused at once
//     when the node is gone; given 5 s, the default, to answer). A slow node
//     must never look dead: a two-node formation runs asynchronously while
//     its standby is unhealthy (the primary goes to wait_primary) and after
//     every failover until the old primary has rejoined, and a standby that
//     came within 16 MB of such a primary counts as caught up and may be
//     promoted. The test's earlier 1 s / 500 ms checks judged live nodes of
//     a loaded machine dead (the keeper reports only every second, so 1 s
//     of silence is the normal case, and one slow connection decided), and
//     a CI run's switchover with them lost 3,097 of 4,879 acknowledged
//     writes;
//   - a primary that does not answer is given 10 s to demote itself: the
//     monitor's guard against two primaries.
//
// docs/failures.md says the same for production.
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
			for _, n := range pafNames {
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
	for _, s := range []string{"health_check_period=1000", "health_check_timeout=5000", "health_check_max_retries=2",
		"health_check_retry_delay=500", "node_considered_unhealthy_timeout=3000", "primary_demote_timeout=10000"} {
		k, v, _ := strings.Cut(s, "=")
		if _, err := monDB.Exec("ALTER SYSTEM SET pgautofailover." + k + " = " + v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := monDB.Exec("SELECT pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
	monitorURI := fmt.Sprintf("postgres://autoctl_node@127.0.0.1:%d/pg_auto_failover?sslmode=disable", c.ports[0])
	node := func(i int, extra ...string) {
		args := append([]string{"create", "postgres", "--pgdata", filepath.Join(dir, fmt.Sprintf("node_%d", i)), "--pgport", strconv.Itoa(c.ports[i]),
			"--hostname", "127.0.0.1", "--listen", "127.0.0.1", "--name", fmt.Sprintf("node_%d", i), "--monitor", monitorURI,
			"--auth", "trust", "--no-ssl", "--dbname", "shipgraph", "--run"}, extra...)
		c.start(i, autoctl, args...)
	}
	state := func(name string) string {
		var s string
		_ = monDB.QueryRow("SELECT reportedstate::text FROM pgautofailover.node WHERE nodename = $1", name).Scan(&s)
		return s
	}
	c.state = state
	c.mon = monDB
	// On failure, the monitor's history: which node was in which state
	// when (registered after monDB's own cleanup, so it runs before that
	// closes the pool, and before the formation is stopped).
	t.Cleanup(func() {
		if t.Failed() {
			c.logEvents()
		}
	})
	node(1)
	c.waitFor("node_1 single", func(*sql.DB) (bool, error) { return state("node_1") == "single", nil }, mon)
	// Both standbys at once (their base backups overlap): node_2 a
	// failover candidate, node_3 in the replication quorum but never
	// promoted. With two quorum standbys and number_sync_standbys 1 the
	// primary stays synchronous while one of them is away or being
	// promoted: a two-node formation's old primary, its report racing
	// perform_failover, was set to wait_primary (asynchronous) instead of
	// draining because its only standby was in prepare_promotion, and
	// acknowledged writes the promoted node never got.
	node(2)
	node(3, "--candidate-priority", "0", "--replication-quorum", "true")
	// pg_basebackup of a standby waits for a spread checkpoint on node_1
	// (minutes on an idle server): an immediate CHECKPOINT finishes it.
	n1 := c.open(c.url(1, "postgres"))
	c.waitFor("node_2 and node_3 secondary", func(*sql.DB) (bool, error) {
		_, _ = n1.Exec("CHECKPOINT")
		return state("node_1") == "primary" && state("node_2") == "secondary" && state("node_3") == "secondary", nil
	}, mon)
	// What `pg_autoctl set formation number-sync-standbys 1` runs.
	if _, err := monDB.Exec("SELECT pgautofailover.set_formation_number_sync_standbys('default', 1)"); err != nil {
		t.Fatal(err)
	}
	c.waitFor("node_1 replicating synchronously to one of two standbys", func(*sql.DB) (bool, error) {
		var names string
		if err := n1.QueryRow("SHOW synchronous_standby_names").Scan(&names); err != nil {
			return false, err
		}
		// "ANY 1 (pgautofailover_standby_2, pgautofailover_standby_3)"
		return strings.HasPrefix(names, "ANY 1 (") && strings.Count(names, "pgautofailover_standby_") == 2 &&
			state("node_1") == "primary" && c.goal("node_1") == "primary", nil
	}, mon)
	t.Logf("pg_auto_failover: monitor and three nodes ready in %v", time.Since(begin).Round(time.Millisecond))
	return c
}

// logEvents logs the monitor's event history (pgautofailover.event): every
// state the monitor assigned or a node reported, with its time, so that a
// failure shows what the formation did around the writes it lost.
func (c *pafCluster) logEvents() {
	c.t.Logf("pg_auto_failover events (the monitor's history, oldest first):\n%s", c.eventsSince(0))
}

// lastEvent is the id of the monitor's latest event.
func (c *pafCluster) lastEvent() int64 {
	var id int64
	if err := c.mon.QueryRow("SELECT coalesce(max(eventid), 0) FROM pgautofailover.event").Scan(&id); err != nil {
		c.t.Fatal(err)
	}
	return id
}

// eventsSince is the monitor's history after event id since, one line an
// event.
func (c *pafCluster) eventsSince(since int64) string {
	rows, err := c.mon.Query(`SELECT eventtime, nodename, reportedstate::text, goalstate::text,
		coalesce(reportedrepstate, ''), reportedlsn::text, coalesce(description, '')
		FROM pgautofailover.event WHERE eventid > $1 ORDER BY eventid`, since)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var at time.Time
		var node, reported, goal, rep, lsn, desc string
		if err := rows.Scan(&at, &node, &reported, &goal, &rep, &lsn, &desc); err != nil {
			return err.Error()
		}
		fmt.Fprintf(&b, "%s %s reported %s goal %s (%s %s): %s\n", at.Format(time.StampMilli), node, reported, goal, rep, lsn, desc)
	}
	return b.String()
}

// goalSince counts the events after event id since that set node's goal
// to goal.
func (c *pafCluster) goalSince(since int64, node, goal string) int {
	return c.countSince(since, `nodename = $2 AND goalstate::text = $3`, node, goal)
}

// countSince counts the monitor's events after event id since that match
// where (its parameters from $2).
func (c *pafCluster) countSince(since int64, where string, args ...any) int {
	var n int
	if err := c.mon.QueryRow(`SELECT count(*) FROM pgautofailover.event WHERE eventid > $1 AND `+where,
		append([]any{since}, args...)...).Scan(&n); err != nil {
		c.t.Fatal(err)
	}
	return n
}

// unhealthySince counts the times the monitor judged a node unhealthy
// after event id since.
func (c *pafCluster) unhealthySince(since int64) int {
	return c.countSince(since, `description LIKE '%is marked as unhealthy%'`)
}

// goal is the state the monitor assigned node.
func (c *pafCluster) goal(node string) string {
	var s string
	if err := c.mon.QueryRow("SELECT goalstate::text FROM pgautofailover.node WHERE nodename = $1", node).Scan(&s); err != nil {
		c.t.Fatal(err)
	}
	return s
}

// failoversSince counts the failovers the monitor started on its own (a
// node judged unhealthy) after event id since.
func (c *pafCluster) failoversSince(since int64) int {
	return c.countSince(since, `goalstate = 'prepare_promotion' AND description LIKE '%became unhealthy%'`)
}

// expectPrimary: the monitor still reports node in state (primary, or
// wait_primary for a primary whose standby is gone). A check that read
// node's database read the primary only if no failover happened since: one
// would leave it reading a node being demoted or catching up, and blame the
// switchover for what that failover lost.
func (c *pafCluster) expectPrimary(node, state string) {
	c.t.Helper()
	if s := c.state(node); s != state {
		c.t.Errorf("after the check the monitor reports %s %s, want %s: the check may have read a node that was no longer the primary", node, s, state)
	}
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
// every node, target_session_attrs=read-write.
func (c *pafCluster) FormationURL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d/shipgraph?target_session_attrs=read-write&sslmode=disable",
		c.ports[2], c.ports[1], c.ports[3])
}

func (c *pafCluster) open(u string) *sql.DB {
	db := dbtest.Open(c.t, u)
	return db
}

func (c *pafCluster) start(i int, name string, args ...string) {
	logf, err := os.OpenFile(filepath.Join(c.dir, pafNames[i]+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
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
	b, err := os.ReadFile(filepath.Join(c.dir, pafNames[i], "postmaster.pid"))
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0]); err == nil && pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Stall stops node i's keeper and PostgreSQL (SIGSTOP to its process
// group: the postmaster and its backends are in it) for d, as a loaded
// machine can stall a live node, and returns when they run again.
func (c *pafCluster) Stall(i int, d time.Duration) time.Time {
	pid := c.cmds[i].Process.Pid
	if err := syscall.Kill(-pid, syscall.SIGSTOP); err != nil {
		c.t.Fatal(err)
	}
	time.Sleep(d) // the stall itself, not a wait for something
	if err := syscall.Kill(-pid, syscall.SIGCONT); err != nil {
		c.t.Fatal(err)
	}
	return time.Now()
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
// (every node, target_session_attrs=read-write, as `pg_autoctl show uri`
// prints it; three nodes, number_sync_standbys 1, as docs/failures.md
// says to configure), and a second instance, under reads, writes, both
// subscriptions and a webhook endpoint (underLoad, twice on one formation,
// which takes most of the time to start):
//
//  0. first, node_2 stalled for 2 s (SIGSTOP) must not be judged unhealthy
//     (a slow node taken for a dead one makes the formation asynchronous);
//  1. the planned switchover (pgautofailover.perform_failover, what
//     `pg_autoctl perform switchover` calls): no 500; the 503s (with
//     Retry-After) while neither node takes writes are counted and logged;
//     the old primary is never set to wait_primary (asynchronous);
//  2. then node_2's machine, the primary since, is lost (its keeper and
//     postmaster killed -9), the monitor promotes node_1 again and node_3
//     follows it (node_1 primary: synchronous again).
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

	// A stalled node is not a dead one. node_2 (the synchronous secondary)
	// stopped for 2 s, as a loaded machine stalls a node, must not be judged
	// unhealthy: node_1 would stop replicating synchronously (wait_primary)
	// and, as after every failover, acknowledge writes that a failover in
	// the next seconds loses.
	since := c.lastEvent()
	thawed := c.Stall(2, 2*time.Second)
	c.waitFor("the monitor's first health check of node_2 and reports of both nodes after the stall", func(db *sql.DB) (bool, error) {
		var ok bool
		err := db.QueryRow(`SELECT bool_and(reporttime > $1) AND bool_and(healthchecktime > $1 OR nodename <> 'node_2')
			FROM pgautofailover.node WHERE nodename IN ('node_1', 'node_2')`, thawed).Scan(&ok)
		return ok, err
	}, c.url(0, "pg_auto_failover"))
	if n, goal := c.unhealthySince(since), c.goal("node_1"); n > 0 || goal != "primary" {
		t.Errorf("node_2 stalled for 2 s: judged unhealthy %d times, node_1's goal %s (want primary): the monitor takes a slow node for a dead one", n, goal)
	}

	t.Log("pg_auto_failover: planned switchover, node_1 to node_2")
	since = c.lastEvent()
	r := underLoad(t, base, keys["acme admin"], func() {
		if _, err := c.mon.Exec("SELECT pgautofailover.perform_failover('default', 0)"); err != nil {
			t.Fatal(err)
		}
		c.waitFor("node_2 primary", func(*sql.DB) (bool, error) {
			return c.state("node_2") == "primary" && c.state("node_1") == "secondary" && c.state("node_3") == "secondary", nil
		}, c.url(0, "pg_auto_failover"))
	})
	r.check(t, c.url(2, "shipgraph"))
	c.expectPrimary("node_2", "primary")
	t.Logf("pg_auto_failover: the switchover's events:\n%s", c.eventsSince(since))
	// The two-node race: the old primary set to wait_primary (synchronous
	// replication off) during the switchover. node_3 stays a healthy quorum
	// standby while node_2 is prepare_promotion, so it must not happen.
	if n := c.goalSince(since, "node_1", "wait_primary"); n > 0 {
		t.Errorf("pg_auto_failover: the old primary node_1 was set to wait_primary %d time(s) during the switchover (asynchronous, writes may be lost)", n)
	}
	// A failover the monitor starts on its own during a planned switchover
	// means it judged a live node dead: the health check settings above
	// are then too tight for this machine (logged, the lost writes are
	// what fails).
	if n := c.failoversSince(since); n > 0 {
		t.Logf("pg_auto_failover: the monitor started %d failover(s) of its own during the switchover (a node judged unhealthy)", n)
	}

	t.Log("pg_auto_failover: node_2 (the primary) killed, the monitor promotes node_1")
	since = c.lastEvent()
	r = underLoad(t, base, keys["acme admin"], func() { c.KillNode(2) })
	r.check(t, c.url(1, "shipgraph"))
	// node_3 follows node_1, which is then primary again (synchronous to
	// node_3, the one quorum standby left) rather than wait_primary.
	c.waitFor("node_1 primary with node_3 its secondary", func(*sql.DB) (bool, error) {
		return c.state("node_1") == "primary" && c.state("node_3") == "secondary", nil
	}, c.url(0, "pg_auto_failover"))
	t.Logf("pg_auto_failover: the kill's events:\n%s", c.eventsSince(since))
	if n := c.failoversSince(since); n > 1 {
		t.Logf("pg_auto_failover: the monitor started %d failovers after the kill, 1 expected", n)
	}
	second.revokeAfter(t, base, c.url(1, "shipgraph"))
}
