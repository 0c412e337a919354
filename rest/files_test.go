package rest_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"shipgraph/files"
	"shipgraph/resolve"
	"shipgraph/testkit"
)

// Document files (issue 16) through the whole chain, with the default
// store (fileblob in a temporary directory, URLs signed and served by
// Shipgraph). files_s3_test.go runs the same client flow against a real
// S3-compatible server.

const testFileMax = 256 << 10

func testSecret(t testing.TB) []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}

// pdf returns a small PDF with a unique line, so each is a new file.
func pdf(text string) []byte {
	return []byte("%PDF-1.4\n% " + text + "\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
}

func checksum(b []byte) string {
	s := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(s[:])
}

// announce is the direct upload's first step: POST the blob.
func announce(e *env, who, name, ct string, data []byte) *response {
	e.t.Helper()
	return e.do(who, "POST", "/rails/active_storage/direct_uploads", map[string]any{"blob": map[string]any{
		"filename": name, "content_type": ct, "byte_size": len(data), "checksum": checksum(data),
	}}, "Content-Type", "application/json")
}

// put sends bytes to a direct upload's URL with its headers, without a key.
func put(t testing.TB, blob map[string]any, data []byte) (int, string) {
	t.Helper()
	du := blob["direct_upload"].(map[string]any)
	req, err := http.NewRequest("PUT", du["url"].(string), bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range du["headers"].(map[string]any) {
		req.Header.Set(k, v.(string))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// upload runs the direct upload (announce, PUT) and returns the signed id.
func upload(e *env, who, name, ct string, data []byte) string {
	e.t.Helper()
	r := announce(e, who, name, ct, data)
	if r.status != http.StatusOK {
		e.t.Fatalf("direct upload: %d\n%s", r.status, r.body)
	}
	blob := r.json(e.t)
	if status, body := put(e.t, blob, data); status/100 != 2 {
		e.t.Fatalf("PUT: %d %s", status, body)
	}
	return blob["signed_id"].(string)
}

func createBody(name, signedID string, shipments ...string) map[string]any {
	data := map[string]any{"type": "document", "attributes": map[string]any{"name": name, "attached_document": signedID}}
	if len(shipments) > 0 {
		var l []any
		for _, s := range shipments {
			l = append(l, map[string]any{"type": "shipment", "id": s})
		}
		data["relationships"] = map[string]any{"shipments": map[string]any{"data": l}}
	}
	return map[string]any{"data": data}
}

// fileFlow is what an SDK-style client does: blob → PUT → create → list →
// download_url → GET the bytes. It returns the new document's id.
func fileFlow(t *testing.T, e *env, shipment string, name string, data []byte) string {
	t.Helper()
	signed := upload(e, "acme/member", name, "application/pdf", data)
	r := e.do("acme/member", "POST", "/v2/documents?include=shipments", createBody("Bill of lading", signed, shipment))
	doc := wantDocument(t, r, http.StatusCreated, "post-documents-201")["data"].(map[string]any)
	id := doc["id"].(string)
	a := doc["attributes"].(map[string]any)
	if a["file_name"] != name || a["file_content_type"] != "application/pdf" || a["file_size_bytes"] != float64(len(data)) || a["source"] != "api" || a["name"] != "Bill of lading" {
		t.Errorf("attributes: %v", a)
	}
	if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "/v2/documents/"+id) {
		t.Errorf("Location %q", loc)
	}
	if l := obj(doc, "relationships", "shipments")["data"].([]any); len(l) != 1 || l[0].(map[string]any)["id"] != shipment {
		t.Errorf("shipments linkage: %v", l)
	}
	// Listed, and linked from the shipment.
	found := false
	for _, d := range e.get("/v2/documents?filter[filename]=" + url.QueryEscape(strings.TrimSuffix(name, ".pdf")) + "&page[size]=100")["data"].([]any) {
		found = found || d.(map[string]any)["id"] == id
	}
	if !found {
		t.Errorf("the new document is not listed")
	}
	r = e.do("acme/viewer", "GET", "/v2/documents/"+id+"/download_url", nil)
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("download_url: %d %s\n%s", r.status, r.header.Get("Content-Type"), r.body)
	}
	validate(t, "get-document-download-url-200", r.body)
	link := r.json(t)["download_url"].(string)
	resp, body := testkit.Get(t, link, "")
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
		t.Fatalf("GET the file: %d, %d bytes (want %d)", resp.StatusCode, len(body), len(data))
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/pdf" {
		t.Errorf("Content-Type %q", ct)
	}
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, "attachment") || !strings.Contains(cd, name) {
		t.Errorf("Content-Disposition %q", cd)
	}
	return id
}

func TestDocumentFiles(t *testing.T) {
	secret := testSecret(t)
	dir := t.TempDir()
	fs := testkit.OpenFiles(t, files.Config{Dir: dir, Secret: secret, MaxSize: testFileMax})
	e := newEnv(t, envOptions{files: fs})
	f := findFixtures(t, e)
	ctx := context.Background()

	data := pdf("MAEU 1 " + t.Name())
	id := fileFlow(t, e, f.shipment, "BL_MAEU1.pdf", data)

	// The same bytes again: 409 duplicate_document naming the first.
	signed := upload(e, "acme/admin", "copy.pdf", "application/pdf", data)
	r := e.do("acme/admin", "POST", "/v2/documents", createBody("Copy", signed))
	wantDocument(t, r, http.StatusConflict, "post-documents-409")
	er := errorOf(t, r)
	if er["code"] != "duplicate_document" || er["status"] != "409" || obj(er, "meta")["existing_document_id"] != id || obj(er, "meta")["existing_document_name"] != "Bill of lading" {
		t.Errorf("409: %v", er)
	}
	// Another account may have the same file.
	gsigned := upload(e, "globex/admin", "same.pdf", "application/pdf", data)
	if r := e.do("globex/admin", "POST", "/v2/documents", createBody("Globex copy", gsigned)); r.status != http.StatusCreated {
		t.Errorf("globex's copy: %d\n%s", r.status, r.body)
	}

	// Signed ids: malformed, tampered, another account's, already used,
	// expired; all 422 at attached_document.
	other := upload(e, "globex/admin", "g.pdf", "application/pdf", pdf("globex "+t.Name()))
	fresh := upload(e, "acme/admin", "fresh.pdf", "application/pdf", pdf("fresh "+t.Name()))
	expiredStore := testkit.OpenFiles(t, files.Config{Dir: dir, Secret: secret, UploadLifetime: -time.Hour})
	vid, ok := fs.VerifyID(fresh, time.Now())
	if !ok {
		t.Fatal("VerifyID refuses a fresh signed id")
	}
	tampered := []byte(fresh)
	tampered[3] ^= 1
	for name, sid := range map[string]string{
		"malformed": "nonsense", "tampered": string(tampered), "another account's": other,
		"expired": expiredStore.SignID(vid, time.Now()), "unsigned id": vid, "empty": "",
	} {
		wantError(t, e.do("acme/admin", "POST", "/v2/documents", createBody("x", sid)), http.StatusUnprocessableEntity, "pointer", "/data/attributes/attached_document")
		_ = name
	}
	r = e.do("acme/admin", "POST", "/v2/documents", createBody("Fresh", fresh))
	if r.status != http.StatusCreated {
		t.Fatalf("fresh: %d\n%s", r.status, r.body)
	}
	freshID := r.json(t)["data"].(map[string]any)["id"].(string)
	wantError(t, e.do("acme/admin", "POST", "/v2/documents", createBody("again", fresh)), http.StatusUnprocessableEntity, "pointer", "/data/attributes/attached_document")
	wantError(t, e.do("acme/admin", "POST", "/v2/documents", createBody("", upload(e, "acme/admin", "n.pdf", "application/pdf", pdf("n "+t.Name())))), http.StatusUnprocessableEntity, "pointer", "/data/attributes/name")
	// Another account's shipment: 404, as elsewhere.
	gf := findFixturesOf(t, e, "globex")
	wantError(t, e.do("acme/admin", "POST", "/v2/documents", createBody("x", upload(e, "acme/admin", "s.pdf", "application/pdf", pdf("s "+t.Name())), gf.shipment)), http.StatusNotFound, "", "")

	// Announcements: type, size (413 before any byte), checksum, shape.
	wantError(t, announce(e, "acme/admin", "x.exe", "application/x-msdownload", data), http.StatusUnprocessableEntity, "pointer", "/blob/content_type")
	wantError(t, announce(e, "acme/admin", "big.pdf", "application/pdf", make([]byte, testFileMax+1)), http.StatusRequestEntityTooLarge, "pointer", "/blob/byte_size")
	wantError(t, e.do("acme/admin", "POST", "/rails/active_storage/direct_uploads", map[string]any{"blob": map[string]any{
		"filename": "a.pdf", "content_type": "application/pdf", "byte_size": 3, "checksum": "nope"}}, "Content-Type", "application/json"),
		http.StatusUnprocessableEntity, "pointer", "/blob/checksum")
	wantError(t, e.do("acme/admin", "POST", "/rails/active_storage/direct_uploads", map[string]any{"blob": map[string]any{
		"filename": "a.pdf", "content_type": "application/pdf", "byte_size": "3", "checksum": checksum(data)}}, "Content-Type", "application/json"),
		http.StatusUnprocessableEntity, "pointer", "/blob/byte_size")
	wantError(t, e.do("acme/admin", "POST", "/rails/active_storage/direct_uploads", map[string]any{"nope": 1}, "Content-Type", "application/json"), http.StatusBadRequest, "pointer", "/blob")

	// PUT bodies that are not the announced file are refused and leave
	// nothing: the signed id then has no file (422).
	good := pdf("put " + t.Name())
	r = announce(e, "acme/admin", "put.pdf", "application/pdf", good)
	blob := r.json(t)
	bad := append([]byte{}, good...)
	bad[len(bad)-2] ^= 1
	if status, _ := put(t, blob, bad); status != http.StatusBadRequest {
		t.Errorf("PUT with another MD5: %d", status)
	}
	if status, _ := put(t, blob, append(good, 'x')); status != http.StatusRequestEntityTooLarge {
		t.Errorf("PUT of a longer body: %d", status)
	}
	if status, _ := put(t, blob, good[:10]); status != http.StatusBadRequest {
		t.Errorf("PUT of a shorter body: %d", status)
	}
	wantError(t, e.do("acme/admin", "POST", "/v2/documents", createBody("x", blob["signed_id"].(string))), http.StatusUnprocessableEntity, "pointer", "/data/attributes/attached_document")
	// A tampered upload URL: 403.
	du := blob["direct_upload"].(map[string]any)
	du["url"] = strings.Replace(du["url"].(string), "s=", "s=1", 1)
	if status, _ := put(t, blob, good); status != http.StatusForbidden {
		t.Errorf("PUT to a tampered URL: %d", status)
	}

	// Download URLs: tampered and expired are a bare 403; another
	// account's document and one without a file are 404s.
	link := e.getAs("acme/admin", "/v2/documents/"+id+"/download_url")["download_url"].(string)
	u, _ := url.Parse(link)
	for _, change := range []func(url.Values){
		func(q url.Values) { q.Set("k", q.Get("k")+"x") },
		func(q url.Values) { q.Set("t", "text/html") },
		func(q url.Values) { q.Set("n", "other.pdf") },
		func(q url.Values) { q.Set("e", fmt.Sprint(time.Now().Add(time.Hour).Unix())) },
		func(q url.Values) { q.Del("sig") },
	} {
		v := *u
		q := v.Query()
		change(q)
		v.RawQuery = q.Encode()
		if resp, body := testkit.Get(t, v.String(), ""); resp.StatusCode != http.StatusForbidden || len(body) > 20 {
			t.Errorf("tampered %s: %d %q", v.RawQuery, resp.StatusCode, body)
		}
	}
	expired, err := testkit.OpenFiles(t, files.Config{Dir: dir, Secret: secret, DownloadTTL: -time.Minute}).DownloadURL(files.WithBaseURL(ctx, e.srv.URL), u.Query().Get("k"), "application/pdf", "x.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if resp, _ := testkit.Get(t, expired, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("expired URL: %d", resp.StatusCode)
	}
	wantError(t, e.do("globex/admin", "GET", "/v2/documents/"+id+"/download_url", nil), http.StatusNotFound, "", "")
	er = wantError(t, e.do("acme/admin", "GET", "/v2/documents/"+f.document+"/download_url", nil), http.StatusNotFound, "", "")
	if !strings.Contains(er["detail"].(string), "no file") {
		t.Errorf("no-file detail: %v", er["detail"])
	}
	validate(t, "get-document-download-url-404", e.do("acme/admin", "GET", "/v2/documents/"+f.document+"/download_url", nil).body)

	// Keys: viewers may not write; no key is a 401 everywhere.
	wantError(t, announce(e, "acme/viewer", "v.pdf", "application/pdf", data), http.StatusForbidden, "", "")
	wantError(t, e.do("acme/viewer", "POST", "/v2/documents", createBody("v", fresh)), http.StatusForbidden, "", "")
	wantError(t, e.do("", "POST", "/rails/active_storage/direct_uploads", map[string]any{"blob": map[string]any{}}, "Content-Type", "application/json"), http.StatusUnauthorized, "", "")
	wantError(t, e.do("", "POST", "/v2/documents", createBody("v", fresh)), http.StatusUnauthorized, "", "")
	wantError(t, e.do("", "GET", "/v2/documents/"+id+"/download_url", nil), http.StatusUnauthorized, "", "")

	// Deleting a document removes its file.
	if r := e.do("acme/admin", "DELETE", "/v2/documents/"+id, nil); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d\n%s", r.status, r.body)
	}
	if resp, _ := testkit.Get(t, link, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the deleted document's file still answers %d", resp.StatusCode)
	}
	if _, ok := fs.VerifyID(fresh, time.Now()); !ok || freshID == "" {
		t.Error("fresh")
	}

	// The sweep removes uploads no document took, a day (and an hour) on.
	res := &resolve.Resolver{DB: e.store, Files: fs}
	if n, err := res.SweepUploads(ctx, time.Now()); err != nil || n != 0 {
		t.Errorf("sweep now: %d %v", n, err)
	}
	n, err := res.SweepUploads(ctx, time.Now().Add(26*time.Hour))
	if err != nil || n < 3 {
		t.Errorf("sweep a day on: %d %v", n, err)
	}
	// Documents keep their files.
	fr := e.getAs("acme/admin", "/v2/documents/"+freshID+"/download_url")["download_url"].(string)
	if resp, _ := testkit.Get(t, fr, ""); resp.StatusCode != http.StatusOK {
		t.Errorf("a document's file after the sweep: %d", resp.StatusCode)
	}
}
