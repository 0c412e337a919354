package rest_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"shipgraph/files"
	"shipgraph/testkit"
)

// The document-file flow against a real S3-compatible server: versitygw
// (pinned in tools/s3server) with its POSIX backend in a temporary
// directory, on a free loopback port. Shipgraph then hands out the store's
// own presigned URLs, so the bytes go to and from versitygw directly.

const (
	s3Access = "shipgraphtest"
	s3Secret = "shipgraphtestsecret"
	s3Bucket = "documents"
)

// versitygwBinary returns the server binary: $SHIPGRAPH_VERSITYGW, or
// bin/versitygw (make s3server), built from tools/s3server when missing.
func versitygwBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SHIPGRAPH_VERSITYGW"); p != "" {
		return p
	}
	bin, err := filepath.Abs(filepath.Join("..", "bin", "versitygw"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	cmd := exec.Command("go", "build", "-o", bin, "github.com/versity/versitygw/cmd/versitygw")
	cmd.Dir = filepath.Join("..", "tools", "s3server")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building versitygw (tools/s3server): %v\n%s", err, out)
	}
	return bin
}

// startVersitygw runs versitygw until the test ends and returns its
// endpoint with the bucket created.
func startVersitygw(t *testing.T) string {
	t.Helper()
	bin := versitygwBinary(t)
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
	cmd := exec.Command(bin, "--access", s3Access, "--secret", s3Secret, "--port", addr, "--quiet",
		"posix", "--sidecar", meta, data)
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not listen on %s: %v\n%s", addr, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	endpoint := "http://" + addr
	client := s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: s3Access, SecretAccessKey: s3Secret}, nil
		}),
	})
	if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(s3Bucket)}); err != nil {
		t.Fatalf("create bucket: %v\n%s", err, logs.String())
	}
	return endpoint
}

func TestDocumentFilesS3(t *testing.T) {
	endpoint := startVersitygw(t)
	// s3blob reads credentials the AWS way.
	t.Setenv("AWS_ACCESS_KEY_ID", s3Access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3Secret)
	t.Setenv("AWS_REGION", "us-east-1")
	fs := testkit.OpenFiles(t, files.Config{
		URL:    "s3://" + s3Bucket + "?endpoint=" + endpoint + "&region=us-east-1&use_path_style=true&disable_https=true",
		Secret: testSecret(t), MaxSize: testFileMax,
	})
	if fs.Local() {
		t.Fatal("an s3:// store must presign its own URLs")
	}
	e := newEnv(t, envOptions{files: fs, serial: true})
	f := findFixtures(t, e)

	data := pdf("S3 " + t.Name())
	id := fileFlow(t, e, f.shipment, "BL_S3TEST.pdf", data)
	// The URLs are the store's: bytes never pass through Shipgraph.
	link := e.getAs("acme/admin", "/v2/documents/"+id+"/download_url")["download_url"].(string)
	if !strings.HasPrefix(link, endpoint+"/"+s3Bucket+"/") || !strings.Contains(link, "X-Amz-Signature") {
		t.Errorf("download URL is not the store's presigned one: %s", link)
	}
	// A tampered presigned URL: 403 from the store.
	if resp, _ := fetch(t, strings.Replace(link, "X-Amz-Signature=", "X-Amz-Signature=0", 1)); resp.StatusCode != http.StatusForbidden {
		t.Errorf("tampered presigned URL: %d", resp.StatusCode)
	}
	// A body that differs from the announced one is refused (the PUT
	// signs Content-MD5), and the signed id then has no file.
	good := pdf("S3 put " + t.Name())
	r := announce(e, "acme/admin", "put.pdf", "application/pdf", good)
	blob := r.json(t)
	bad := append([]byte{}, good...)
	bad[len(bad)-2] ^= 1
	if status, body := put(t, blob, bad); status/100 == 2 {
		t.Errorf("PUT of other bytes: %d %s", status, body)
	}
	wantError(t, e.do("acme/admin", "POST", "/v2/documents", createBody("x", blob["signed_id"].(string))), http.StatusUnprocessableEntity, "pointer", "/data/attributes/attached_document")
	// Duplicate and delete work the same.
	signed := upload(e, "acme/admin", "again.pdf", "application/pdf", data)
	if r := e.do("acme/admin", "POST", "/v2/documents", createBody("again", signed)); r.status != http.StatusConflict {
		t.Errorf("duplicate: %d\n%s", r.status, r.body)
	}
	if r := e.do("acme/admin", "DELETE", "/v2/documents/"+id, nil); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", r.status)
	}
	if resp, _ := fetch(t, link); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the deleted document's file: %d", resp.StatusCode)
	}
}
