//go:build linux

// Package replicatest runs a real hot standby of a test primary: a
// private server of db/dbtest (dbtest.NewServer, whose replication it
// allows), copied with `pg_basebackup -R` and started as a streaming
// standby, optionally applying WAL only after a delay
// (recovery_min_apply_delay). Like pgembed it listens on a Unix socket
// only, in a directory of its own, and runs as the postgres OS user when
// the test runs as root. Tests skip, saying why, only when a server binary
// is missing.
package replicatest

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq" // the driver

	"shipgraph/db/dbtest"
	"shipgraph/db/pgembed"
)

// Options shape the standby.
type Options struct {
	// ApplyDelay is recovery_min_apply_delay: the standby receives WAL at
	// once but applies each commit only this long after it was made.
	ApplyDelay time.Duration
}

// Standby is one running (or stopped) hot standby.
type Standby struct {
	bin     string
	dir     string // ours: data/ and socket/ below
	data    string
	sock    string
	o       Options
	cred    *syscall.Credential
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	log     string
}

// database is the name of dbtest.Server's database.
const database = "shipgraph"

// Start makes primary replicable, copies it and starts the copy as a hot
// standby streaming from it; the standby is stopped and removed when tb
// ends. It returns once the standby accepts reads.
func Start(tb testing.TB, primary *dbtest.Server, o Options) *Standby {
	tb.Helper()
	primary.AllowReplication(tb)
	return start(tb, primary.SocketDir(), "", o)
}

// Cascade copies primary and starts the copy as a cascading standby
// streaming from upstream, a running standby of primary (a base backup of
// a standby that replayed WAL written with full_page_writes off, as
// dbtest's servers run, is refused). When upstream is promoted, the copy
// follows it onto its new timeline (recovery_target_timeline is latest).
func Cascade(tb testing.TB, primary *dbtest.Server, upstream *Standby, o Options) *Standby {
	tb.Helper()
	primary.AllowReplication(tb)
	return start(tb, primary.SocketDir(), upstream.sock, o)
}

// start copies the server listening in upstreamSocket and starts the
// copy, streaming from there or, if streamFrom is set, from the server
// listening in that socket directory.
func start(tb testing.TB, upstreamSocket, streamFrom string, o Options) *Standby {
	tb.Helper()
	bin, err := pgembed.FindBinDir()
	if err != nil {
		tb.Skipf("replicatest: %v", err)
	}
	for _, b := range []string{"pg_basebackup", "postgres"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			tb.Skipf("replicatest: %s not installed beside %s (Debian package postgresql)", b, bin)
		}
	}
	dir, err := os.MkdirTemp("", "shipgraph-standby-")
	if err != nil {
		tb.Fatal(err)
	}
	s := &Standby{bin: bin, dir: dir, data: filepath.Join(dir, "data"), sock: filepath.Join(dir, "socket"), o: o, log: filepath.Join(dir, "postgres.log")}
	tb.Cleanup(func() {
		if s.cmd != nil {
			s.stop()
		}
		_ = os.RemoveAll(dir)
	})
	cred, err := pgembed.ServerCredential()
	if err != nil {
		tb.Skipf("replicatest: %v", err)
	}
	s.cred = cred
	s.own(tb, dir)
	if err := os.Mkdir(s.sock, 0o700); err != nil {
		tb.Fatal(err)
	}
	s.own(tb, s.sock)

	// The primary's hba line takes effect on its reload, which is
	// asynchronous: retry a refused copy for a moment.
	begin := time.Now()
	args := []string{"-D", s.data, "-R", "-X", "stream", "-c", "fast", "-h", upstreamSocket, "-p", "5432", "-U", "postgres", "--no-sync"}
	for attempt := 0; ; attempt++ {
		cmd := exec.Command(filepath.Join(bin, "pg_basebackup"), args...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL}
		out, err := cmd.CombinedOutput()
		if err == nil {
			break
		}
		if attempt >= 20 {
			tb.Fatalf("replicatest: pg_basebackup: %v\n%s", err, out)
		}
		_ = os.RemoveAll(s.data)
		time.Sleep(100 * time.Millisecond)
	}
	tb.Logf("replicatest: base backup in %v", time.Since(begin).Round(time.Millisecond))
	if streamFrom != "" {
		// The last setting in postgresql.auto.conf wins over -R's.
		f, err := os.OpenFile(filepath.Join(s.data, "postgresql.auto.conf"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			tb.Fatal(err)
		}
		_, err = fmt.Fprintf(f, "primary_conninfo = 'host=%s port=5432 user=postgres'\n", streamFrom)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	s.Start(tb)
	return s
}

// own gives path to the server's OS user when the test runs as root.
func (s *Standby) own(tb testing.TB, path string) {
	if s.cred == nil {
		return
	}
	if err := os.Chown(path, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
		tb.Fatal(err)
	}
}

// URL is the standby's URL for the primary's database (dbtest.Server's).
func (s *Standby) URL() string {
	q := url.Values{"host": {s.sock}, "port": {"5432"}, "sslmode": {"disable"}}
	return "postgres://postgres@/" + database + "?" + q.Encode()
}

// Start starts the standby (again), returning once it accepts reads.
func (s *Standby) Start(tb testing.TB) {
	tb.Helper()
	if s.cmd != nil {
		tb.Fatal("replicatest: Start: the standby is running")
	}
	logf, err := os.OpenFile(s.log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	defer logf.Close()
	args := []string{"-D", s.data, "-p", "5432",
		"-c", "listen_addresses=", "-c", "unix_socket_directories=" + s.sock, "-c", "unix_socket_permissions=0700",
		"-c", "hot_standby=on", "-c", "max_connections=200", "-c", "fsync=off",
		"-c", fmt.Sprintf("recovery_min_apply_delay=%dms", s.o.ApplyDelay.Milliseconds()),
		// The standby answers its own polls faster than the default.
		"-c", "wal_receiver_status_interval=1s",
	}
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), args...)
	cmd.Dir = s.data
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGINT}
	exited, err := pgembed.StartPinned(cmd, &s.waitErr)
	if err != nil {
		tb.Fatalf("replicatest: starting the standby: %v", err)
	}
	s.cmd, s.exited = cmd, exited
	begin := time.Now()
	sdb, err := sql.Open("postgres", s.URL()+"&connect_timeout=2")
	if err != nil {
		tb.Fatal(err)
	}
	defer sdb.Close()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var recovering bool
		err := sdb.QueryRowContext(ctx, "SELECT pg_is_in_recovery()").Scan(&recovering)
		cancel()
		if err == nil && recovering {
			break
		}
		if err == nil {
			tb.Fatal("replicatest: the standby is not in recovery")
		}
		select {
		case <-exited:
			tb.Fatalf("replicatest: the standby exited: %v\n%s", s.waitErr, s.logTail())
		default:
		}
		if time.Since(begin) > 30*time.Second {
			tb.Fatalf("replicatest: the standby is not ready after 30s: %v\n%s", err, s.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Logf("replicatest: standby ready in %v", time.Since(begin).Round(time.Millisecond))
}

// Stop shuts the standby down (fast shutdown) and returns once it exited.
func (s *Standby) Stop(tb testing.TB) {
	tb.Helper()
	if s.cmd == nil {
		tb.Fatal("replicatest: Stop: the standby is not running")
	}
	s.stop()
}

func (s *Standby) stop() {
	_ = syscall.Kill(s.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
	s.cmd = nil
}

// Replayed is the standby's pg_last_wal_replay_lsn, as text.
func (s *Standby) Replayed(tb testing.TB) string {
	tb.Helper()
	sdb, err := sql.Open("postgres", s.URL())
	if err != nil {
		tb.Fatal(err)
	}
	defer sdb.Close()
	var lsn string
	if err := sdb.QueryRow("SELECT pg_last_wal_replay_lsn()::text").Scan(&lsn); err != nil {
		tb.Fatal(err)
	}
	return lsn
}

// PauseReplay pauses the standby's WAL replay (it still receives WAL) and
// returns once it is paused: what is written next is not on the standby
// until ResumeReplay, whatever the machine's speed.
func (s *Standby) PauseReplay(tb testing.TB) {
	tb.Helper()
	sdb := dbtest.Open(tb, s.URL())
	defer sdb.Close() // called in wait loops: one pool per call would outlast them
	if _, err := sdb.Exec(`SELECT pg_wal_replay_pause()`); err != nil {
		tb.Fatalf("replicatest: pausing the standby's replay: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var state string
		if err := sdb.QueryRow(`SELECT pg_get_wal_replay_pause_state()`).Scan(&state); err != nil {
			tb.Fatal(err)
		}
		if state == "paused" {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("replicatest: the standby's replay is %s 10s after the pause", state)
		}
	}
}

// ResumeReplay resumes the standby's WAL replay.
func (s *Standby) ResumeReplay(tb testing.TB) {
	tb.Helper()
	sdb := dbtest.Open(tb, s.URL())
	defer sdb.Close()
	if _, err := sdb.Exec(`SELECT pg_wal_replay_resume()`); err != nil {
		tb.Fatalf("replicatest: resuming the standby's replay: %v", err)
	}
}

func (s *Standby) logTail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(bytes.TrimSpace(b))
}

// Promote makes the standby a primary with `pg_ctl promote` (its own
// timeline from here on) and returns once it accepts writes.
func (s *Standby) Promote(tb testing.TB) {
	tb.Helper()
	cmd := exec.Command(filepath.Join(s.bin, "pg_ctl"), "promote", "-w", "-t", "60", "-D", s.data)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("replicatest: pg_ctl promote: %v\n%s\n%s", err, out, s.logTail())
	}
}

// SocketDir is the directory of the standby's Unix socket.
func (s *Standby) SocketDir() string { return s.sock }
