package rest_test

import (
	"net/http"
	"strings"
	"testing"

	"shipgraph/files"
	"shipgraph/testkit"
	"shipgraph/testkit/s3test"
)

// The document-file flow against a real S3-compatible server (versitygw,
// testkit/s3test). Shipgraph then hands out the store's own presigned
// URLs, so the bytes go to and from versitygw directly.

const (
	s3Access = s3test.Access
	s3Secret = s3test.Secret
	s3Bucket = "documents"
)

// startVersitygw runs versitygw until the test ends and returns its
// endpoint with the bucket created.
func startVersitygw(t *testing.T) string {
	t.Helper()
	return s3test.Start(t, s3Bucket).Endpoint
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
	if resp, _ := testkit.Get(t, strings.Replace(link, "X-Amz-Signature=", "X-Amz-Signature=0", 1), ""); resp.StatusCode != http.StatusForbidden {
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
	if resp, _ := testkit.Get(t, link, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the deleted document's file: %d", resp.StatusCode)
	}
}
