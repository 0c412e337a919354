//go:build linux

// Package pgembed runs a private PostgreSQL server as a child process of
// shipgraph, for when no DATABASE_URL is configured (development, tests, small
// single-machine installs).
//
// The server is durable by default: fsync, synchronous_commit and
// full_page_writes are on, so a write it acknowledged survives a crash of
// a backend, of the server or of the machine. Options.Fast turns the three
// off (and initialises without fsync, initdb -N) for tests and demos:
// faster writes, but a crash can lose acknowledged writes, and an OS crash
// or power loss can corrupt the cluster.
//
// It admits no one but its owner: no TCP listener at all
// (listen_addresses = ”), a Unix socket in a directory only the cluster's
// OS user (and root) can enter, and peer authentication that maps exactly
// those OS users to the superuser (see writeAccess). pg_hba.conf and
// pg_ident.conf are rewritten at every start, which also locks down a
// cluster made by an earlier version that trusted loopback TCP.
package pgembed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
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
	"time"

	_ "github.com/lib/pq" // driver for the readiness probe
)

// Options configure Start.
type Options struct {
	// DataDir holds everything the server writes: the cluster itself in
	// DataDir/postgres, the server log in DataDir/postgres.log, the Unix
	// socket in DataDir/socket and a lock file. It is created on first use
	// and reused after. When shipgraph runs as root and the postgres user
	// cannot reach DataDir (a checkout in root's 0700 home), everything but
	// the lock file lives in a per-DataDir directory under relocateRoot
	// instead; see Home.
	DataDir string
	// Logf, if set, receives progress lines (initdb, ready, stop).
	Logf func(format string, args ...any)
	// Fast runs without fsync, synchronous_commit and full_page_writes
	// (and initialises a new cluster without fsync): for tests and
	// demos, whose data may be lost in a crash. The default is durable.
	Fast bool
}

// Server is a running PostgreSQL child process. Its superuser is "postgres";
// it listens on a private Unix socket only (see the package comment).
type Server struct {
	dataDir    string // DataDir, where the lock is
	fast       bool   // Options.Fast
	home       string // where the cluster, its log and socket live
	clusterDir string
	logPath    string
	sockDir    string
	pid        int
	logf       func(format string, args ...any)

	lock *os.File // flock on DataDir/postgres.lock, held until Stop

	exited  chan struct{} // closed once the process has been reaped
	waitErr error         // cmd.Wait result; read only after exited is closed

	stopOnce func() error
}

const (
	readyTimeout    = 30 * time.Second
	shutdownTimeout = 30 * time.Second
	maxLogSize      = 10 << 20 // rotate postgres.log past this size at start
	sunPathMax      = 108      // sizeof(sockaddr_un.sun_path) on Linux, NUL included
	// port only names the socket file (.s.PGSQL.5432): with no TCP
	// listener and a socket directory of its own, it cannot clash.
	port = 5432
)

// relocateRoot is where a root-run shipgraph keeps clusters whose DataDir
// the postgres user cannot reach, one directory per DataDir named after a
// hash of its path. A var so tests can point it elsewhere.
var relocateRoot = "/var/lib/shipgraph"

// staleWait is how long Start waits for a postgres that still holds the
// cluster but whose shipgraph is gone: after a SIGKILL of the previous
// shipgraph, its postgres gets SIGINT (Pdeathsig) and needs a moment to
// finish its fast shutdown. A var so tests can shorten it.
var staleWait = 5 * time.Second

// binGlobRoot is where Debian/Ubuntu packages install versioned server
// binaries (ROOT/<major>/bin). A var so tests can point it elsewhere.
var binGlobRoot = "/usr/lib/postgresql"

var errNoBinaries = errors.New("no PostgreSQL server binaries found (initdb, postgres): install PostgreSQL (e.g. apt-get install postgresql) or set DATABASE_URL")

// FindBinDir returns the directory holding initdb and postgres: the one on
// PATH if both are there, else the newest /usr/lib/postgresql/*/bin (Debian
// does not put the server binaries on PATH).
func FindBinDir() (string, error) {
	if initdb, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("postgres"); err == nil {
			// Resolve symlinks such as /usr/local/bin/initdb ->
			// /usr/lib/postgresql/15/bin/initdb: initdb runs the postgres
			// next to its real location, so that is the directory to use.
			if real, err := filepath.EvalSymlinks(initdb); err == nil && hasServerBinaries(filepath.Dir(real)) {
				return filepath.Dir(real), nil
			}
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(binGlobRoot, "*", "bin"))
	dirs = slices.DeleteFunc(dirs, func(d string) bool { return !hasServerBinaries(d) })
	if len(dirs) == 0 {
		return "", errNoBinaries
	}
	slices.SortFunc(dirs, func(a, b string) int {
		return slices.Compare(versionKey(filepath.Base(filepath.Dir(a))), versionKey(filepath.Base(filepath.Dir(b))))
	})
	return dirs[len(dirs)-1], nil
}

// matchingBinDir prefers the binaries of the major version an existing
// cluster was made with, when installed side by side (Debian keeps old majors
// after an upgrade): a newer postgres refuses to open an older cluster.
func matchingBinDir(clusterDir, binDir string) string {
	v, err := os.ReadFile(filepath.Join(clusterDir, "PG_VERSION"))
	if err != nil {
		return binDir
	}
	dir := filepath.Join(binGlobRoot, strings.TrimSpace(string(v)), "bin")
	if dir != binDir && hasServerBinaries(dir) {
		return dir
	}
	return binDir
}

func hasServerBinaries(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// versionKey turns "15" or "9.6" into comparable numbers, so that 10 sorts
// after 9.6 (a plain string sort would not).
func versionKey(v string) []int {
	var key []int
	for _, part := range strings.Split(v, ".") {
		n, err := strconv.Atoi(part)
		if err != nil {
			n = -1
		}
		key = append(key, n)
	}
	return key
}

// runAs describes the OS user that runs initdb and postgres.
type runAs struct {
	name     string
	uid, gid uint32
	cred     *syscall.Credential // nil: run as ourselves
}

// Start initialises the cluster in o.DataDir/postgres if needed, starts
// postgres on a free 127.0.0.1 port and waits until it accepts connections.
//
// When shipgraph runs as root, initdb and postgres run as the "postgres" OS
// user (PostgreSQL refuses to run as root) and the files they need are
// chowned to it. The child gets SIGINT (fast shutdown) if shipgraph dies, even
// by SIGKILL, so no server is left behind.
func Start(ctx context.Context, o Options) (*Server, error) {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if o.DataDir == "" {
		return nil, errors.New("pgembed: Options.DataDir is empty")
	}
	binDir, err := FindBinDir()
	if err != nil {
		return nil, err
	}
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", o.DataDir, err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	// Work on the real path: it is what postgres reports as its working
	// directory, and what the permission walk below has to check.
	if dataDir, err = filepath.EvalSymlinks(dataDir); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", o.DataDir, err)
	}

	as, err := serverUser()
	if err != nil {
		return nil, err
	}

	s := &Server{dataDir: dataDir, logf: logf, fast: o.Fast}
	s.stopOnce = sync.OnceValue(s.stop)

	// The lock serialises shipgraph processes sharing a DataDir, from before
	// initdb (or a move of the cluster) until Stop; the kernel drops it when
	// we die.
	if s.lock, err = lockDataDir(dataDir); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			s.lock.Close()
		}
	}()

	if s.home, err = prepareHome(dataDir, as, logf); err != nil {
		return nil, err
	}
	s.clusterDir = filepath.Join(s.home, "postgres")
	s.logPath = filepath.Join(s.home, "postgres.log")

	if err := checkClusterInUse(ctx, dataDir, s.clusterDir, logf); err != nil {
		return nil, err
	}
	binDir = matchingBinDir(s.clusterDir, binDir)
	if err := ensureCluster(ctx, binDir, dataDir, s.clusterDir, as, o.Fast, logf); err != nil {
		return nil, err
	}
	if err := writeAccess(s.clusterDir, as); err != nil {
		return nil, err
	}
	if s.sockDir, err = prepareSocketDir(s.home, as); err != nil {
		return nil, err
	}
	if err := s.launch(ctx, binDir, as); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// URL returns a connection URL for database dbname as the superuser, through
// the server's Unix socket.
func (s *Server) URL(dbname string) string { return socketURL(s.sockDir, dbname) }

func socketURL(sockDir, dbname string) string {
	q := url.Values{"host": {sockDir}, "port": {strconv.Itoa(port)}, "sslmode": {"disable"}}
	return "postgres://postgres@/" + url.PathEscape(dbname) + "?" + q.Encode()
}

// SocketDir returns the directory of the server's Unix socket.
func (s *Server) SocketDir() string { return s.sockDir }

// Home returns the directory holding the cluster (Home/postgres), its log
// and its socket: DataDir, or its relocated directory (see relocateRoot).
func (s *Server) Home() string { return s.home }

// Pid returns the process id of the postmaster.
func (s *Server) Pid() int { return s.pid }

// LogPath returns the file postgres writes its log to.
func (s *Server) LogPath() string { return s.logPath }

// Done is closed when the postgres process has exited, whether through Stop
// or on its own (a crash), so a caller can notice losing its database.
func (s *Server) Done() <-chan struct{} { return s.exited }

// Stop shuts postgres down (fast shutdown: running transactions are rolled
// back, clients disconnected), waiting up to 30s before killing it, and
// returns once the process is gone. It is idempotent and safe to call
// concurrently; every call returns the first call's result.
func (s *Server) Stop() error { return s.stopOnce() }

func (s *Server) stop() error {
	defer s.lock.Close()
	select {
	case <-s.exited:
		// It died on its own: report that, it is not a clean shutdown.
		if s.waitErr != nil {
			return fmt.Errorf("postgres (pid %d) had already exited: %w%s", s.pid, s.waitErr, s.logTail(0))
		}
		return nil
	default:
	}
	start := time.Now()
	_ = syscall.Kill(s.pid, syscall.SIGINT)
	select {
	case <-s.exited:
		s.logf("pgembed: postgres stopped in %v", time.Since(start).Round(time.Millisecond))
		if s.waitErr != nil {
			return fmt.Errorf("postgres (pid %d) shutdown: %w%s", s.pid, s.waitErr, s.logTail(0))
		}
		return nil
	case <-time.After(shutdownTimeout):
	}
	// Kill the whole process group (Setpgid), so no backend outlives it.
	_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	<-s.exited
	return fmt.Errorf("postgres (pid %d) did not shut down within %v and was killed", s.pid, shutdownTimeout)
}

// launch starts postgres and waits for it to be ready. On failure the
// process is gone when it returns.
func (s *Server) launch(ctx context.Context, binDir string, as runAs) error {
	logFile, logStart, err := openLog(s.logPath, as)
	if err != nil {
		return err
	}
	defer logFile.Close() // the child has its own copy of the descriptor

	args := []string{
		"-D", s.clusterDir,
		"-p", strconv.Itoa(port),
		// No TCP at all: other local users could reach any port.
		"-c", "listen_addresses=",
		"-c", "unix_socket_directories=" + s.sockDir,
		"-c", "unix_socket_permissions=0700",
		"-c", "max_connections=200",
		"-c", "shared_buffers=128MB",
	}
	durability := "on"
	if s.fast {
		durability = "off"
	}
	// Set either way: a cluster's postgresql.conf could say otherwise.
	for _, name := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
		args = append(args, "-c", name+"="+durability)
	}
	cmd := exec.Command(filepath.Join(binDir, "postgres"), args...)
	cmd.Dir = s.clusterDir
	// A *os.File is handed to the child as-is (no copying goroutine), so
	// logging keeps working even if we are gone.
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: as.cred,
		// Own process group: a Ctrl-C in the terminal reaches only us, and
		// we shut postgres down in order.
		Setpgid: true,
		// SIGINT is postgres' fast shutdown: if we die, even by SIGKILL,
		// it stops cleanly instead of lingering as an orphan.
		Pdeathsig: syscall.SIGINT,
	}

	begin := time.Now()
	exited, err := StartPinned(cmd, &s.waitErr)
	if err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	s.exited = exited
	s.pid = cmd.Process.Pid

	err = s.waitReady(ctx)
	if err == nil {
		s.logf("pgembed: postgres %d ready on socket %s in %v (data %s)", s.pid, s.sockDir, time.Since(begin).Round(time.Millisecond), s.clusterDir)
		return nil
	}
	select {
	case <-s.exited:
	default:
		_ = syscall.Kill(-s.pid, syscall.SIGKILL)
		<-s.exited
	}
	return fmt.Errorf("%v%s", err, s.logTail(logStart))
}

// waitReady polls with a real query until postgres answers, it exits, ctx
// ends or readyTimeout passes.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	// lib/pq honours ctx only while dialing, not during the startup
	// handshake, so a probe could hang without connect_timeout. The probe
	// also runs aside so that postgres exiting is noticed at once.
	db, err := sql.Open("postgres", s.URL("postgres")+"&connect_timeout=2")
	if err != nil {
		return err
	}
	defer db.Close()
	var lastErr error
	for {
		probe := make(chan error, 1)
		go func() {
			attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
			defer cancelAttempt()
			// Ask for the data directory rather than SELECT 1: whatever
			// answers on the socket must be this cluster.
			var dir string
			err := db.QueryRowContext(attempt, "SELECT current_setting('data_directory')").Scan(&dir)
			if err == nil && dir != s.clusterDir {
				err = fmt.Errorf("socket %s is served by another PostgreSQL (data directory %s)", s.sockDir, dir)
			}
			probe <- err
		}()
		select {
		case lastErr = <-probe:
			if lastErr == nil {
				return nil
			}
		case <-s.exited:
			return fmt.Errorf("postgres exited during startup (%v)", s.waitErr)
		case <-ctx.Done():
		}
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited during startup (%v)", s.waitErr)
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return fmt.Errorf("postgres not ready after %v (last error: %v)", readyTimeout, lastErr)
			}
			return fmt.Errorf("waiting for postgres: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logTail returns the last lines postgres logged since offset, formatted to
// be appended to an error.
func (s *Server) logTail(offset int64) string {
	f, err := os.Open(s.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	const maxTail = 4096
	if fi, err := f.Stat(); err == nil && fi.Size()-offset > maxTail {
		offset = fi.Size() - maxTail
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	data, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	text := strings.Join(lines, "\n")
	if strings.TrimSpace(text) == "" {
		return ""
	}
	return fmt.Sprintf("; last lines of %s:\n%s", s.logPath, text)
}

// openLog opens postgres.log for appending (rotating it once when large),
// and returns where this run's output begins.
func openLog(path string, as runAs) (*os.File, int64, error) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxLogSize {
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("opening postgres log: %w", err)
	}
	if as.cred != nil {
		// Only our descriptor is written to, but a file postgres' user
		// owns alongside its cluster is less surprising to an operator.
		_ = f.Chown(int(as.uid), int(as.gid))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	fmt.Fprintf(f, "--- pgembed: starting postgres at %s ---\n", time.Now().Format(time.RFC3339))
	return f, fi.Size(), nil
}

// serverUser decides who runs postgres: ourselves, or the "postgres" user
// when we are root.
func serverUser() (runAs, error) {
	if os.Geteuid() != 0 {
		return runAs{uid: uint32(os.Geteuid()), gid: uint32(os.Getegid())}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return runAs{}, fmt.Errorf("running as root, PostgreSQL must run as the unprivileged \"postgres\" user, but looking it up failed: %w (create it, e.g. useradd --system postgres, or set DATABASE_URL)", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return runAs{}, fmt.Errorf("user postgres has a non-numeric uid/gid %q/%q", u.Uid, u.Gid)
	}
	if uid == 0 {
		return runAs{}, errors.New("user postgres has uid 0; PostgreSQL refuses to run as root")
	}
	// Groups is empty on purpose: the child gets exactly this uid/gid and no
	// supplementary groups, which is also what canEnter assumes.
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	return runAs{name: "postgres", uid: uint32(uid), gid: uint32(gid), cred: cred}, nil
}

// ServerCredential is who a PostgreSQL (or PgBouncer) child runs as: nil
// (ourselves) unless we are root, then the unprivileged "postgres" user,
// with no supplementary groups. The test harnesses that start servers of
// their own (testkit/replicatest, testkit/pgbouncertest) use it, as Start does.
func ServerCredential() (*syscall.Credential, error) {
	as, err := serverUser()
	return as.cred, err
}

// prepareHome returns the directory the cluster, its log and socket live
// in: dataDir itself, unless shipgraph runs as root and the server user
// cannot walk down to dataDir (a checkout in root's 0700 home). Then it is
// a directory of the server user's under relocateRoot, named after a hash of
// dataDir's path so that every checkout keeps its own cluster. Nothing above
// dataDir changes mode: opening someone's home is not our call.
//
// No data is lost when the location changes between runs: a cluster found in
// dataDir/postgres is moved to the relocated directory when it has none, and
// a relocated cluster keeps being used when dataDir has none.
func prepareHome(dataDir string, as runAs, logf func(string, ...any)) (string, error) {
	if as.cred == nil {
		return dataDir, nil // postgres runs as ourselves, and we can enter dataDir
	}
	alt := relocated(dataDir)
	reachable, blocker, err := ancestorsEnterable(dataDir, as)
	if err != nil {
		return "", err
	}
	if reachable {
		if !hasCluster(filepath.Join(dataDir, "postgres")) && hasCluster(filepath.Join(alt, "postgres")) {
			logf("pgembed: using the cluster an earlier run kept in %s for DATA_DIR %s", alt, dataDir)
			return alt, nil
		}
		fi, err := os.Stat(dataDir)
		if err != nil {
			return "", err
		}
		if !canEnter(fi, as) {
			if err := os.Chown(dataDir, int(as.uid), int(as.gid)); err != nil {
				return "", fmt.Errorf("giving DATA_DIR %s to user %s: %w", dataDir, as.name, err)
			}
		}
		return dataDir, nil
	}

	// relocateRoot itself: root's, traversable but not listable by others.
	if err := os.MkdirAll(relocateRoot, 0o711); err != nil {
		return "", fmt.Errorf("DATA_DIR %s is inside %s, which user %s cannot enter, and creating %s for its cluster failed: %w (choose a DATA_DIR that user can reach, or set DATABASE_URL)", dataDir, blocker, as.name, relocateRoot, err)
	}
	if err := os.Mkdir(alt, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("creating %s: %w", alt, err)
	}
	if err := os.Chown(alt, int(as.uid), int(as.gid)); err != nil {
		return "", fmt.Errorf("giving %s to user %s: %w", alt, as.name, err)
	}
	// Which checkout a directory belongs to, for whoever looks there.
	_ = os.WriteFile(filepath.Join(alt, "DATA_DIR"), []byte(dataDir+"\n"), 0o644)
	logf("pgembed: DATA_DIR %s is inside %s, which user %s cannot enter; the cluster lives in %s", dataDir, blocker, as.name, alt)

	old, moved := filepath.Join(dataDir, "postgres"), filepath.Join(alt, "postgres")
	switch {
	case hasCluster(old) && !hasCluster(moved):
		if err := moveCluster(old, moved, as); err != nil {
			return "", err
		}
		logf("pgembed: moved the cluster from %s to %s", old, moved)
	case hasCluster(old):
		logf("pgembed: warning: %s holds an older cluster, left untouched; %s is the one in use", old, moved)
	}
	return alt, nil
}

// relocated names dataDir's directory under relocateRoot.
func relocated(dataDir string) string {
	sum := sha256.Sum256([]byte(dataDir))
	return filepath.Join(relocateRoot, hex.EncodeToString(sum[:8]))
}

// ancestorsEnterable reports whether the server user can search every
// directory above dataDir, and if not, the first one it cannot.
func ancestorsEnterable(dataDir string, as runAs) (bool, string, error) {
	for dir := filepath.Dir(dataDir); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return false, "", err
		}
		if !canEnter(fi, as) {
			return false, fmt.Sprintf("%s (mode %04o)", dir, fi.Mode().Perm()), nil
		}
		if dir == "/" {
			return true, "", nil
		}
	}
}

func hasCluster(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "PG_VERSION"))
	return err == nil
}

// moveCluster moves a stopped cluster to its new place (the caller holds
// DataDir's lock, so no shipgraph starts it meanwhile). A rename when both
// are on one file system; otherwise a copy, after which the old tree is kept,
// renamed to *.moved, so that nothing is lost if the copy is somehow bad.
func moveCluster(from, to string, as runAs) error {
	if postgresServing(pidOf(from), from) {
		return fmt.Errorf("the cluster in %s is still running; stop the shipgraph that uses it first", from)
	}
	if err := os.Rename(from, to); err == nil {
		return nil
	} else if !errors.Is(err, syscall.EXDEV) {
		return fmt.Errorf("moving the cluster from %s to %s: %w", from, to, err)
	}
	tmp := to + ".copy"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if out, err := exec.Command("cp", "-a", from, tmp).CombinedOutput(); err != nil {
		return fmt.Errorf("copying the cluster from %s to %s: %w: %s", from, tmp, err, out)
	}
	if err := filepath.WalkDir(tmp, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(as.uid), int(as.gid))
	}); err != nil {
		return err
	}
	if err := os.Rename(tmp, to); err != nil {
		return err
	}
	return os.Rename(from, from+".moved")
}

// pidOf reads the postmaster pid recorded in a cluster, or 0.
func pidOf(clusterDir string) int {
	data, err := os.ReadFile(filepath.Join(clusterDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(data), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	return pid
}

// canEnter reports whether a process with exactly as.uid/as.gid may search
// the directory, by the classic owner/group/other rule (ACLs are ignored).
func canEnter(fi os.FileInfo, as runAs) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := fi.Mode().Perm()
	switch {
	case st.Uid == as.uid:
		return perm&0o100 != 0
	case st.Gid == as.gid:
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}

// lockDataDir takes an exclusive flock on DataDir/postgres.lock, holding our
// pid for the error message of the next one to try.
func lockDataDir(dataDir string) (*os.File, error) {
	path := filepath.Join(dataDir, "postgres.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot use DATA_DIR %s: %w", dataDir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder, _ := io.ReadAll(f)
			return nil, fmt.Errorf("database in DATA_DIR %s is already in use by pid %s (another shipgraph)", dataDir, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// checkClusterInUse looks at postmaster.pid left in the cluster. A postgres
// that is still alive and serving this directory makes the cluster
// unusable; anything else (dead pid, pid reused by an unrelated process
// after a reboot or in a fresh container) is a stale file that we remove,
// because postgres itself refuses to start when the recorded pid is alive,
// whoever it belongs to.
func checkClusterInUse(ctx context.Context, dataDir, clusterDir string, logf func(string, ...any)) error {
	pidFile := filepath.Join(clusterDir, "postmaster.pid")
	data, err := os.ReadFile(pidFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", pidFile, err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		logf("pgembed: removing malformed %s", pidFile)
		return removeStale(pidFile)
	}
	deadline := time.Now().Add(staleWait)
	waited := false
	for postgresServing(pid, clusterDir) {
		if time.Now().After(deadline) {
			return fmt.Errorf("database in DATA_DIR %s is already in use by pid %d", dataDir, pid)
		}
		if !waited {
			// Most likely the server of a shipgraph that was just killed,
			// still in its fast shutdown; give it a moment.
			logf("pgembed: waiting for postgres pid %d, still running on %s, to exit", pid, clusterDir)
			waited = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if !waited {
		logf("pgembed: removing stale %s (pid %d is gone or not this cluster's postgres)", pidFile, pid)
	}
	return removeStale(pidFile)
}

func removeStale(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing stale %s: %w", path, err)
	}
	return nil
}

// postgresServing reports whether pid is a live postgres whose working
// directory is clusterDir (postgres chdirs into its data directory). When in
// doubt it says yes: refusing to start beats two servers on one cluster.
func postgresServing(pid int, clusterDir string) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		// No such process. (Any other error: be careful.)
		return !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ESRCH)
	}
	// "pid (comm) state ...": comm may contain spaces and parentheses.
	lp, rp := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if lp < 0 || rp < lp || len(stat) < rp+3 {
		return true
	}
	comm, state := string(stat[lp+1:rp]), stat[rp+2]
	if state == 'Z' || state == 'X' {
		// A zombie holds no files; our container's init may simply not
		// reap orphans.
		return false
	}
	if comm != "postgres" {
		return false
	}
	cwd, err := os.Stat(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	dir, err := os.Stat(clusterDir)
	if err != nil {
		return true
	}
	return os.SameFile(cwd, dir)
}

// ensureCluster runs initdb if the cluster does not exist yet and makes an
// existing one usable by the server user.
func ensureCluster(ctx context.Context, binDir, dataDir, clusterDir string, as runAs, fast bool, logf func(string, ...any)) error {
	if _, err := os.Stat(filepath.Join(clusterDir, "PG_VERSION")); err == nil {
		return fixOwnership(dataDir, clusterDir, as, logf)
	}
	if entries, err := os.ReadDir(clusterDir); err == nil {
		if len(entries) > 0 {
			return fmt.Errorf("%s exists but is not a PostgreSQL data directory (no PG_VERSION); move it away to let shipgraph create a new database there", clusterDir)
		}
		if err := os.Remove(clusterDir); err != nil {
			return err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("data directory %s: %w", clusterDir, err)
	}

	// initdb into a side directory and rename it into place when complete,
	// so an interrupted initdb never leaves a half-made cluster behind that
	// would later fail in confusing ways.
	tmp := clusterDir + ".initdb"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("removing leftover %s: %w", tmp, err)
	}
	// Created by us and handed over, rather than by initdb, because the
	// server user may not be allowed to write in DataDir itself.
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", tmp, err)
	}
	if as.cred != nil {
		if err := os.Chown(tmp, int(as.uid), int(as.gid)); err != nil {
			return fmt.Errorf("giving %s to user %s: %w", tmp, as.name, err)
		}
	}
	logf("pgembed: initializing a new PostgreSQL cluster in %s", clusterDir)
	begin := time.Now()
	initArgs := []string{
		// writeAccess replaces the authentication setup right after.
		"-D", tmp, "-U", "postgres", "--auth-local=peer", "--auth-host=reject", "-E", "UTF8", "--locale=C",
	}
	if fast {
		initArgs = append(initArgs, "-N") // no fsync: a test/demo cluster, and several seconds faster
	}
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "initdb"), initArgs...)
	cmd.Dir = tmp // our own cwd may be unreadable for the server user
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: as.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := runOnLockedThread(cmd)
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("initdb failed: %w\n%s", err, strings.TrimSpace(string(out)))
	}
	if err := os.Rename(tmp, clusterDir); err != nil {
		return fmt.Errorf("moving new cluster into place: %w", err)
	}
	logf("pgembed: initdb done in %v", time.Since(begin).Round(time.Millisecond))
	return nil
}

// runOnLockedThread runs cmd from a goroutine locked to its OS thread, so
// the thread that Pdeathsig is tied to outlives the child (see launch).
func runOnLockedThread(cmd *exec.Cmd) ([]byte, error) {
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		out, err := cmd.CombinedOutput()
		done <- result{out, err}
	}()
	r := <-done
	return r.out, r.err
}

// fixOwnership makes sure the server user owns the existing cluster, which
// postgres insists on. As root we can fix it (e.g. a DataDir restored by a
// root cp); otherwise it is an error only the operator can resolve.
func fixOwnership(dataDir, clusterDir string, as runAs, logf func(string, ...any)) error {
	fi, err := os.Stat(clusterDir)
	if err != nil {
		return err
	}
	owner := fi.Sys().(*syscall.Stat_t).Uid
	if owner == as.uid {
		return nil
	}
	if as.cred == nil {
		return fmt.Errorf("database in DATA_DIR %s belongs to uid %d, but shipgraph runs as uid %d and PostgreSQL only runs on a data directory its own user owns: run shipgraph as that user, chown -R the directory, or choose another DATA_DIR", dataDir, owner, as.uid)
	}
	logf("pgembed: giving %s to user %s", clusterDir, as.name)
	return filepath.WalkDir(clusterDir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(as.uid), int(as.gid))
	})
}

// prepareSocketDir makes a fresh home/socket, mode 0700 and owned by the
// server user, for postgres' Unix socket: the only way in, and only for that
// user and root. When that path is too long for sockaddr_un it makes a
// private directory under the system's temporary directory instead
// (os.MkdirTemp: a random name, mode 0700, so no one can have planted it).
func prepareSocketDir(home string, as runAs) (string, error) {
	dir := filepath.Join(home, "socket")
	if len(dir+"/.s.PGSQL.5432.lock") < sunPathMax {
		// Recreated each time: nothing is using it (we hold the lock and no
		// postgres is serving the cluster) and it may hold a dead server's
		// lock files, which postgres refuses to override if their pid is
		// alive again.
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("cleaning socket directory: %w", err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			return "", fmt.Errorf("creating socket directory: %w", err)
		}
	} else {
		var err error
		if dir, err = os.MkdirTemp("", "shipgraph-pg-"); err != nil {
			return "", fmt.Errorf("creating socket directory: %w", err)
		}
	}
	if as.cred != nil {
		if err := os.Chown(dir, int(as.uid), int(as.gid)); err != nil {
			return "", fmt.Errorf("giving socket directory to user %s: %w", as.name, err)
		}
	}
	return dir, nil
}

// writeAccess rewrites the cluster's pg_hba.conf and pg_ident.conf at every
// start: Unix-socket connections only, by peer authentication, for the OS
// users that may act as the superuser — the server user, the user running
// shipgraph, and root. TCP has no line, so it is refused even if someone
// started the cluster with a TCP listener. Rewriting also upgrades a cluster
// made by an earlier version, which trusted loopback TCP.
func writeAccess(clusterDir string, as runAs) error {
	names := []string{"root"}
	if as.name != "" {
		names = append(names, as.name)
	}
	if u, err := user.LookupId(strconv.Itoa(os.Geteuid())); err == nil {
		names = append(names, u.Username)
	}
	slices.Sort(names)
	names = slices.Compact(names)

	hba := "# Written by shipgraph at every start; edits are overwritten.\n" +
		"# The cluster listens on no TCP address, and its Unix socket lives in a\n" +
		"# directory only its OS user (and root) can enter. Peer authentication\n" +
		"# admits the OS users mapped in pg_ident.conf, as the superuser.\n" +
		"local all all peer map=shipgraph\n"
	ident := "# Written by shipgraph at every start; edits are overwritten.\n"
	for _, n := range names {
		ident += fmt.Sprintf("shipgraph %s postgres\n", n)
	}
	for name, text := range map[string]string{"pg_hba.conf": hba, "pg_ident.conf": ident} {
		path := filepath.Join(clusterDir, name)
		if err := os.WriteFile(path+".new", []byte(text), 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		if as.cred != nil {
			if err := os.Chown(path+".new", int(as.uid), int(as.gid)); err != nil {
				return err
			}
		}
		if err := os.Rename(path+".new", path); err != nil {
			return err
		}
	}
	return nil
}

// Running returns the URL of the embedded server of dataDir if a postgres
// is serving it right now (another shipgraph holds it), for `shipgraph
// psql`. ok is false when none is.
func Running(dataDir string) (dbURL func(dbname string) string, ok bool) {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, false
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	for _, home := range []string{abs, relocated(abs)} {
		cluster := filepath.Join(home, "postgres")
		data, err := os.ReadFile(filepath.Join(cluster, "postmaster.pid"))
		if err != nil {
			continue
		}
		// postmaster.pid: pid, data dir, start time, port, socket dir, ...
		lines := strings.Split(string(data), "\n")
		pid, _ := strconv.Atoi(strings.TrimSpace(lines[0]))
		if len(lines) < 5 || pid <= 0 || !postgresServing(pid, cluster) {
			continue
		}
		sock := strings.TrimSpace(lines[4])
		return func(dbname string) string { return socketURL(sock, dbname) }, true
	}
	return nil, false
}

// StartPinned starts cmd, whose SysProcAttr sets Pdeathsig, and reaps it.
// Pdeathsig fires when the *thread* that forked the child exits, not the
// process (go.dev/issue/27505), and the Go runtime does end threads, e.g.
// when a goroutine exits while locked to one. So the child is started and
// waited for on a goroutine kept on its own thread for the child's
// lifetime: never unlocked, the thread ends only after the child. The
// returned channel is closed once the child has been reaped; *waitErr holds
// cmd.Wait's result by then.
func StartPinned(cmd *exec.Cmd, waitErr *error) (chan struct{}, error) {
	exited := make(chan struct{})
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		*waitErr = cmd.Wait()
		close(exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return exited, nil
}
