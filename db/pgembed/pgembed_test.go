//go:build linux

package pgembed_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"shipgraph/db/dbtest"
	"shipgraph/db/pgembed"
)

// dataDir returns a fresh directory for a cluster. t.TempDir's own parent is
// created 0700 by os.MkdirTemp; as root, the postgres user could not reach
// anything below it (Start rightly refuses that, see
// TestUnreachableDataDir), so open the parent for traversal only.
func dataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func start(t *testing.T, dir string) *pgembed.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	begin := time.Now()
	s, err := pgembed.Start(ctx, pgembed.Options{DataDir: dir, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Start took %v", time.Since(begin).Round(time.Millisecond))
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// localAccount is the uid and gid of the local account name; the test is
// skipped when it cannot switch to it (not root, or no such account).
func localAccount(t *testing.T, name string) (uid, gid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("switching to another local account needs root")
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Skipf("no %s user", name)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

func exec1(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// processGone waits until pid no longer exists (or is a zombie, which our
// test's init may be slow to reap).
func processGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && len(stat) > i+2 && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("postgres pid %d still running %v later: %s", pid, within, stat)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStartStopReuse(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)

	s := start(t, dir)
	if want := "postgres://postgres@/postgres?host=" + url.QueryEscape(s.SocketDir()) + "&"; !strings.HasPrefix(s.URL("postgres"), want) {
		t.Errorf("URL = %q, want prefix %q", s.URL("postgres"), want)
	}
	db := dbtest.Open(t, s.URL("postgres"))
	exec1(t, db, "CREATE TABLE survivor (id int PRIMARY KEY, name text)")
	exec1(t, db, "INSERT INTO survivor VALUES (1, 'kept')")
	db.Close()

	pid := s.Pid()
	// Concurrent and repeated Stop calls all wait for the same shutdown.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = s.Stop() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("Stop: %v", err)
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	processGone(t, pid, 0)
	if _, err := os.Stat(filepath.Join(dir, "postgres", "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("postmaster.pid after clean stop: %v", err)
	}

	// A postmaster.pid naming a live process that is not postgres (here:
	// ourselves, as after a pid is reused) must not block the restart.
	pidFile := filepath.Join(dir, "postgres", "postmaster.pid")
	if err := os.WriteFile(pidFile, fmt.Appendf(nil, "%d\n%s/postgres\n", os.Getpid(), dir), 0o600); err != nil {
		t.Fatal(err)
	}

	s2 := start(t, dir)
	if s2.Pid() == pid {
		t.Errorf("same pid %d after restart", pid)
	}
	db2 := dbtest.Open(t, s2.URL("postgres"))
	var name string
	if err := db2.QueryRow("SELECT name FROM survivor WHERE id = 1").Scan(&name); err != nil || name != "kept" {
		t.Fatalf("table after restart: %q, %v", name, err)
	}
	db2.Close()
	if err := s2.Stop(); err != nil {
		t.Fatal(err)
	}
	processGone(t, s2.Pid(), 0)

	if log, err := os.ReadFile(s2.LogPath()); err != nil || !strings.Contains(string(log), "database system is shut down") {
		t.Errorf("postgres.log lacks the shutdown line (%v):\n%s", err, log)
	}
}

// Not parallel (nor is TestPortTaken): it changes package settings, which
// parallel tests, run only after all sequential ones, never see.
func TestInUse(t *testing.T) {
	defer pgembed.SetStaleWait(200 * time.Millisecond)()
	dir := dataDir(t)
	s := start(t, dir)

	// Another shipgraph on the same directory: refused by the lock.
	_, err := pgembed.Start(context.Background(), pgembed.Options{DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), "is already in use by pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second Start: %v", err)
	}

	// A live postgres on the cluster without a shipgraph holding the lock
	// (say one started by hand with pg_ctl): refused, naming its pid.
	err = pgembed.CheckClusterInUse(context.Background(), dir, filepath.Join(dir, "postgres"), t.Logf)
	want := fmt.Sprintf("database in DATA_DIR %s is already in use by pid %d", dir, s.Pid())
	if err == nil || err.Error() != want {
		t.Fatalf("CheckClusterInUse = %v, want %q", err, want)
	}

	// The failed attempts must not have disturbed the running server.
	db := dbtest.Open(t, s.URL("postgres"))
	exec1(t, db, "SELECT 1")
}

func TestStartupFailureShowsLog(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	s := start(t, dir)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "postgres", "postgresql.auto.conf")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "work_mem = 'lots'")
	f.Close()

	_, err = pgembed.Start(context.Background(), pgembed.Options{DataDir: dir})
	if err == nil {
		t.Fatal("Start succeeded with a broken config")
	}
	t.Logf("error: %v", err)
	for _, want := range []string{"exited during startup", "last lines of " + filepath.Join(dir, "postgres.log"), `"work_mem"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q", want)
		}
	}
}

// TestParentKilled: a SIGKILLed shipgraph must not leave its postgres behind,
// and the next start on the same directory must work.
func TestParentKilled(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.v")
	cmd.Env = append(os.Environ(), "PGEMBED_HELPER=hold", "PGEMBED_HELPER_DIR="+dir)
	cmd.Stderr = os.Stderr
	// Should this test die, its helper goes too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	waited := startPinned(t, cmd)
	pid := helperValue(t, out, "PID")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-waited
	begin := time.Now()
	processGone(t, pid, 10*time.Second)
	t.Logf("orphaned postgres %d exited %v after its parent was killed", pid, time.Since(begin).Round(time.Millisecond))

	s := start(t, dir)
	exec1(t, dbtest.Open(t, s.URL("postgres")), "SELECT 1")
}

// TestAsOtherUser runs Start as the unprivileged postgres user, which takes
// the non-root path: no chown, and a clear refusal of a cluster owned by
// someone else.
func TestAsOtherUser(t *testing.T) {
	t.Parallel()
	uid, gid := localAccount(t, "postgres")
	base := dataDir(t)
	if err := os.Chown(base, uid, gid); err != nil {
		t.Fatal(err)
	}
	// The test binary lives under a 0700 build directory: copy it.
	bin := filepath.Join(base, "pgembed.test")
	copyFile(t, os.Args[0], bin)
	// A cluster owned by root, which the postgres user may not run.
	foreign := filepath.Join(base, "foreign")
	if err := os.MkdirAll(filepath.Join(foreign, "postgres"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "postgres", "PG_VERSION"), []byte("15\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(foreign, uid, gid); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "-test.run=^TestHelperProcess$", "-test.v")
	cmd.Dir = base
	cmd.Env = append(os.Environ(), "PGEMBED_HELPER=nonroot", "PGEMBED_HELPER_DIR="+base, "HOME="+base)
	t.Logf("helper output:\n%s", runAs(t, cmd, uid, gid))
}

// runAs runs cmd (the test binary as a helper) as uid and gid and returns
// its output; the test fails when it does not exit 0.
func runAs(t *testing.T, cmd *exec.Cmd, uid, gid int) string {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
		Pdeathsig:  syscall.SIGKILL,
	}
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := <-startPinned(t, cmd); err != nil {
		t.Fatalf("helper as uid %d: %v\n%s", uid, err, buf.String())
	}
	return buf.String()
}

// startPinned starts cmd from a goroutine locked to its OS thread and waits
// for it there. Pdeathsig is tied to the thread that forked the child, not
// the process: forked from an ordinary thread, the helper was SIGKILLed at
// random whenever another test's pgembed launcher later locked and retired
// that same thread. The returned channel yields cmd.Wait's error.
func startPinned(t *testing.T, cmd *exec.Cmd) <-chan error {
	t.Helper()
	started, waited := make(chan error, 1), make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Never unlocked: the thread exits with this goroutine, after the child.
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		waited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	return waited
}

// TestHelperProcess is not a test: the tests above run the test binary with
// PGEMBED_HELPER set to get a separate process.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("PGEMBED_HELPER_DIR")
	switch os.Getenv("PGEMBED_HELPER") {
	case "":
		t.Skip("helper process for other tests")
	case "hold":
		s, err := pgembed.Start(context.Background(), pgembed.Options{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("PID %d\n", s.Pid())
		time.Sleep(time.Minute) // until killed
		t.Fatal("helper was not killed")
	case "connect":
		db, err := sql.Open("postgres", os.Getenv("PGEMBED_HELPER_URL")+"&connect_timeout=5")
		if err == nil {
			err = db.Ping()
			db.Close()
		}
		if err != nil {
			fmt.Printf("CONNECT REFUSED: %v\n", err)
		} else {
			fmt.Println("CONNECT OK")
		}
	case "nonroot":
		if os.Geteuid() == 0 {
			t.Fatal("helper still root")
		}
		s := start(t, filepath.Join(dir, "data"))
		db := dbtest.Open(t, s.URL("postgres"))
		var user string
		if err := db.QueryRow("SELECT current_user").Scan(&user); err != nil {
			t.Fatal(err)
		}
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
		processGone(t, s.Pid(), 0)

		_, err := pgembed.Start(context.Background(), pgembed.Options{DataDir: filepath.Join(dir, "foreign")})
		want := "database in DATA_DIR " + filepath.Join(dir, "foreign") + " belongs to uid 0, but shipgraph runs as uid " + strconv.Itoa(os.Geteuid())
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("Start on a foreign cluster: %v, want prefix %q", err, want)
		}
		t.Logf("foreign cluster refused: %v", err)
	}
}

func helperValue(t *testing.T, r io.Reader, key string) int {
	t.Helper()
	sc := bufio.NewScanner(r)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if v, ok := strings.CutPrefix(sc.Text(), key+" "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			go func() { _, _ = io.Copy(io.Discard, r) }()
			return n
		}
	}
	t.Fatalf("helper exited without printing %s (%v); its output:\n%s", key, sc.Err(), strings.Join(lines, "\n"))
	return 0
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestRelocatedDataDir: as root, a DATA_DIR the postgres user cannot reach
// (a checkout in root's 0700 home) gets its cluster in a per-DATA_DIR
// directory under the relocation root; nothing above DATA_DIR changes mode;
// a cluster an earlier run left in DATA_DIR/postgres is moved there with its
// data; later runs find it again.
func TestRelocatedDataDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root hands the cluster to another user")
	}
	defer pgembed.SetRelocateRoot(filepath.Join(dataDir(t), "var-lib-shipgraph"))()

	// An "old" cluster, made while DATA_DIR was reachable.
	home := dataDir(t)
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "checkout", ".data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := start(t, dir)
	if s.Home() != dir {
		t.Fatalf("reachable DATA_DIR: home %s", s.Home())
	}
	exec1(t, dbtest.Open(t, s.URL("postgres")), "CREATE TABLE survivor AS SELECT 'kept' AS name")
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	// Now the checkout sits in a 0700 home.
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	for range 2 { // moved, then found again
		s = start(t, dir)
		if want := pgembed.Relocated(dir); s.Home() != want {
			t.Fatalf("home %s, want %s", s.Home(), want)
		}
		var name string
		if err := dbtest.Open(t, s.URL("postgres")).QueryRow("SELECT name FROM survivor").Scan(&name); err != nil || name != "kept" {
			t.Fatalf("data after the move: %q, %v", name, err)
		}
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the 0700 home was changed: %v %v", fi.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "postgres")); !os.IsNotExist(err) {
		t.Fatalf("old cluster directory still there: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(pgembed.Relocated(dir), "DATA_DIR")); err != nil || strings.TrimSpace(string(got)) != dir {
		t.Fatalf("DATA_DIR note: %q %v", got, err)
	}
}

// TestOnlyOwnerAdmitted: the cluster listens on no TCP port at all, its
// socket refuses another local account (nobody) as any database user, the
// authentication files trust no one, and the owner (root here, or the user
// running the tests) still gets in.
func TestOnlyOwnerAdmitted(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	s := start(t, dir)
	exec1(t, dbtest.Open(t, s.URL("postgres")), "SELECT 1")

	if ports := tcpListeners(t, s.Pid()); len(ports) > 0 {
		t.Fatalf("postmaster listens on TCP: %v", ports)
	}
	hba, err := os.ReadFile(filepath.Join(s.Home(), "postgres", "pg_hba.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(hba), "\n") {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") && (f[0] != "local" || slices.Contains(f, "trust")) {
			t.Errorf("pg_hba.conf admits more than peer over the socket: %q", line)
		}
	}
	if fi, err := os.Stat(s.SocketDir()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory mode: %v %v", fi.Mode(), err)
	}

	uid, gid := localAccount(t, "nobody")
	bin := filepath.Join(dir, "pgembed.test")
	copyFile(t, os.Args[0], bin)
	asNobody := func(dbuser, want string) {
		t.Helper()
		target := strings.Replace(s.URL("postgres"), "postgres://postgres@", "postgres://"+dbuser+"@", 1)
		cmd := exec.Command(bin, "-test.run=^TestHelperProcess$")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PGEMBED_HELPER=connect", "PGEMBED_HELPER_URL="+target)
		out := runAs(t, cmd, uid, gid)
		if !strings.Contains(out, "CONNECT REFUSED") || !strings.Contains(out, want) {
			t.Fatalf("nobody connecting as %s was not refused with %q:\n%s", dbuser, want, out)
		}
		t.Logf("nobody as %s: %s", dbuser, strings.TrimSpace(out))
	}
	for _, dbuser := range []string{"postgres", "nobody", "root"} {
		asNobody(dbuser, "permission denied")
	}
	// Second layer: even with the socket opened up, peer authentication
	// admits no account but the mapped ones.
	sock := filepath.Join(s.SocketDir(), ".s.PGSQL.5432")
	if err := os.Chmod(s.SocketDir(), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sock, 0o777); err != nil {
		t.Fatal(err)
	}
	asNobody("postgres", "Peer authentication failed")
}

// TestUpgradeTrustingCluster: a cluster made by the previous version (its
// pg_hba.conf trusted everyone over loopback TCP and the socket) starts with
// its data and with the lock-down applied.
func TestUpgradeTrustingCluster(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	s := start(t, dir)
	exec1(t, dbtest.Open(t, s.URL("postgres")), "CREATE TABLE survivor AS SELECT 'kept' AS name")
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	hbaPath := filepath.Join(dir, "postgres", "pg_hba.conf")
	old := "local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n"
	if err := os.WriteFile(hbaPath, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	s = start(t, dir)
	var name string
	if err := dbtest.Open(t, s.URL("postgres")).QueryRow("SELECT name FROM survivor").Scan(&name); err != nil || name != "kept" {
		t.Fatalf("data after the upgrade: %q, %v", name, err)
	}
	hba, err := os.ReadFile(hbaPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(hba), "trust") || strings.Contains(string(hba), "host ") {
		t.Fatalf("pg_hba.conf not rewritten:\n%s", hba)
	}
	if ports := tcpListeners(t, s.Pid()); len(ports) > 0 {
		t.Fatalf("postmaster listens on TCP: %v", ports)
	}
}

// tcpListeners lists the TCP ports pid listens on, from /proc.
func tcpListeners(t *testing.T, pid int) []string {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if ino, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	var ports []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			// sl local_address rem_address st ... uid timeout inode
			f := strings.Fields(line)
			if len(f) > 9 && f[3] == "0A" && inodes[f[9]] {
				ports = append(ports, f[1])
			}
		}
	}
	return ports
}

func TestFindBinDir(t *testing.T) {
	t.Setenv("PATH", "")
	root := t.TempDir()
	defer pgembed.SetBinGlobRoot(root)()

	_, err := pgembed.FindBinDir()
	want := "no PostgreSQL server binaries found (initdb, postgres): install PostgreSQL (e.g. apt-get install postgresql) or set DATABASE_URL"
	if err == nil || err.Error() != want {
		t.Fatalf("FindBinDir with nothing installed: %v", err)
	}

	// Versions sort numerically, and a directory lacking a binary is skipped.
	for _, v := range []string{"9.6", "10", "16"} {
		bin := filepath.Join(root, v, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"initdb", "postgres"} {
			if v == "16" && name == "postgres" {
				continue
			}
			if err := os.WriteFile(filepath.Join(bin, name), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := pgembed.FindBinDir()
	if err != nil || got != filepath.Join(root, "10", "bin") {
		t.Fatalf("FindBinDir = %q, %v; want the 10 directory", got, err)
	}
}
