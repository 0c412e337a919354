// Package pgbouncertest runs Debian's pgbouncer for a test, in transaction
// pooling mode, in front of the test PostgreSQL (db/dbtest's server): on a
// free 127.0.0.1 port, clients authenticated by password (md5), the server
// logged into as the test server's user. Tests skip, saying why, only when
// the binary is missing.
package pgbouncertest

import (
	"bytes"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq" // the driver

	"shipgraph/db/pgembed"
)

// Binary is the pgbouncer path, or "" when it is not installed.
func Binary() string {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/pgbouncer"); err == nil {
		return "/usr/sbin/pgbouncer"
	}
	return ""
}

// Password is the clients' password.
const Password = "pooled-secret"

// Pooler is one running pgbouncer.
type Pooler struct {
	Port int
	user string
}

// URL returns the pooler's URL for database name.
func (p *Pooler) URL(name string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(p.user, Password), Host: fmt.Sprintf("127.0.0.1:%d", p.Port), Path: "/" + name, RawQuery: "sslmode=disable"}
	return u.String()
}

// Start starts pgbouncer in front of the server of adminURL (dbtest.AdminURL()),
// pooling every database in transaction mode with at most poolSize server
// connections per database, stopped when t ends.
func Start(t testing.TB, adminURL string, poolSize int) *Pooler {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("pgbouncer not installed (Debian package pgbouncer; .ci/run installs it)")
	}
	au, err := url.Parse(adminURL)
	if err != nil {
		t.Fatal(err)
	}
	q := au.Query()
	host, port := q.Get("host"), q.Get("port")
	if h := au.Hostname(); h != "" {
		host = h
	}
	if p := au.Port(); p != "" {
		port = p
	}
	if port == "" {
		port = "5432"
	}
	srvUser := au.User.Username()
	if srvUser == "" {
		srvUser = "postgres"
	}
	srvPass, _ := au.User.Password()

	dir := t.TempDir()
	// PgBouncer will not run as root: run it as the test server's OS user
	// (which may enter the server's socket directory).
	cred, err := pgembed.ServerCredential()
	if err != nil {
		t.Skipf("pgbouncer: %v", err)
	}
	if cred != nil {
		for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()) && d != os.TempDir(); d = filepath.Dir(d) {
			_ = os.Chown(d, int(cred.Uid), int(cred.Gid))
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lport := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()

	server := fmt.Sprintf("host=%s port=%s user=%s", host, port, srvUser)
	if srvPass != "" {
		server += " password=" + srvPass
	}
	ini := fmt.Sprintf(`[databases]
* = %s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = md5
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = 500
server_reset_query =
ignore_startup_parameters = extra_float_digits
logfile = %s
pidfile =
`, server, lport, filepath.Join(dir, "users.txt"), poolSize, filepath.Join(dir, "pgbouncer.log"))
	users := fmt.Sprintf("%q %q\n", srvUser, Password)
	for name, body := range map[string]string{"pgbouncer.ini": ini, "users.txt": users} {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if cred != nil {
			_ = os.Chown(f, int(cred.Uid), int(cred.Gid))
		}
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("pgbouncer: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	p := &Pooler{Port: lport, user: srvUser}
	// Ready when it accepts a login to the admin console's database.
	deadline := time.Now().Add(10 * time.Second)
	for {
		db, err := sql.Open("postgres", p.URL("postgres")+"&connect_timeout=2")
		if err == nil {
			err = db.Ping()
			_ = db.Close()
		}
		if err == nil {
			return p
		}
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			t.Fatalf("pgbouncer exited: %s\n%s", out.String(), log)
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			t.Fatalf("pgbouncer not answering: %v\n%s\n%s", err, out.String(), log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
