// Package redistest runs a real redis-server (Debian's redis-server
// package) for a test: on a free 127.0.0.1 port, in a temporary directory,
// without persistence. Tests skip, saying why, only when the binary is
// missing.
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is one redis-server process.
type Server struct {
	URL  string
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan struct{}
}

// Binary is the redis-server path, or "" when it is not installed.
func Binary() string {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/bin/redis-server", "/usr/sbin/redis-server"} {
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	return ""
}

// Start starts a redis-server for t (stopped when t ends), or skips t when
// the binary is missing.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("redis-server not installed (Debian package redis-server; .ci/run installs it)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	s := &Server{URL: fmt.Sprintf("redis://127.0.0.1:%d/0", port), out: &bytes.Buffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", t.TempDir(),
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no", "--loglevel", "warning")
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(s.Kill)
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), DisableIdentity: true})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return s
		}
		select {
		case <-s.done:
			t.Fatalf("redis-server exited: %s", s.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server not answering: %v\n%s", err, s.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Pause stops the server (SIGSTOP) without closing its connections: a
// hung Redis. Resume continues it.
func (s *Server) Pause() { _ = s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }

// Kill ends the server at once (SIGKILL), as a crash would.
func (s *Server) Kill() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.done
}

// SetSizes is the number of members of every sorted set whose key matches
// pattern (the subscription counts are sets of members: shipgraph:subs:*),
// by key: a test waits on it for a release to land in Redis.
func (s *Server) SetSizes(t testing.TB, pattern string) map[string]int64 {
	t.Helper()
	opt, err := redis.ParseURL(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	ctx := context.Background()
	keys, err := c.Keys(ctx, pattern).Result()
	if err != nil {
		t.Fatalf("redis KEYS %s: %v", pattern, err)
	}
	out := map[string]int64{}
	for _, k := range keys {
		n, err := c.ZCard(ctx, k).Result()
		if err != nil {
			t.Fatalf("redis ZCARD %s: %v", k, err)
		}
		out[k] = n
	}
	return out
}
