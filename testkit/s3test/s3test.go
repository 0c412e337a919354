// Package s3test runs a real S3-compatible server for tests: versitygw
// (pinned in tools/s3server) with its POSIX backend in a temporary
// directory, on a free loopback port, with one bucket made.
package s3test

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The server's credentials.
const (
	Access = "shipgraphtest"
	Secret = "shipgraphtestsecret"
	Region = "us-east-1"
)

// Server is a running versitygw.
type Server struct {
	// Endpoint is http://127.0.0.1:port.
	Endpoint string
	// Bucket is the bucket made at start.
	Bucket string
	// Client is an S3 client of the server.
	Client *s3.Client

	bin, addr, data, meta string
	cmd                   *exec.Cmd
	logs                  *strings.Builder
}

var buildOnce sync.Once

// Binary returns the server binary: $SHIPGRAPH_VERSITYGW, or bin/versitygw
// of the repository (make s3server), built from tools/s3server when missing.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SHIPGRAPH_VERSITYGW"); p != "" {
		return p
	}
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(here), "..", "..")
	bin := filepath.Join(root, "bin", "versitygw")
	var err error
	var out []byte
	buildOnce.Do(func() {
		if _, serr := os.Stat(bin); serr == nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", bin, "github.com/versity/versitygw/cmd/versitygw")
		cmd.Dir = filepath.Join(root, "tools", "s3server")
		out, err = cmd.CombinedOutput()
	})
	if err != nil {
		t.Fatalf("building versitygw (tools/s3server): %v\n%s", err, out)
	}
	return bin
}

// Start runs versitygw until the test ends, with bucket made.
func Start(t testing.TB, bucket string) *Server {
	t.Helper()
	root := t.TempDir()
	data, meta := filepath.Join(root, "data"), filepath.Join(root, "meta")
	for _, d := range []string{data, meta} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	s := &Server{Endpoint: "http://" + addr, Bucket: bucket, bin: Binary(t), addr: addr, data: data, meta: meta}
	s.Restart(t)
	t.Cleanup(func() { s.Stop(t) })
	s.Client = s3.New(s3.Options{
		Region: Region, BaseEndpoint: aws.String(s.Endpoint), UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: Access, SecretAccessKey: Secret}, nil
		}),
	})
	if _, err := s.Client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("create bucket: %v\n%s", err, s.logs.String())
	}
	return s
}

// Stop kills the server (its data stays for Restart).
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the server again on its address and data, and waits
// until it listens.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	cmd := exec.Command(s.bin, "--access", Access, "--secret", Secret, "--port", s.addr, "--quiet",
		"posix", "--sidecar", s.meta, s.data)
	s.logs = &strings.Builder{}
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not listen on %s: %v\n%s", s.addr, err, s.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Download copies the objects of the bucket under prefix (a folder: the
// keys "prefix/…") to a new temporary directory, keeping the rest of
// their keys as paths, and returns it.
func (s *Server) Download(t testing.TB, prefix string) string {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	p := s3.NewListObjectsV2Paginator(s.Client, &s3.ListObjectsV2Input{Bucket: aws.String(s.Bucket), Prefix: aws.String(prefix + "/")})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			out, err := s.Client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.Bucket), Key: o.Key})
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(out.Body)
			_ = out.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, strings.TrimPrefix(*o.Key, prefix+"/"))
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, body, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}
