package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"testing"

	"shipgraph/files"
	"shipgraph/testkit"
)

// Document files over GraphQL (issue 16): createDocument with a file of a
// GraphQL multipart request (as Apollo's upload clients send it), then
// Document.downloadUrl serving the bytes, on the fast path and off it.

type gqlReply struct {
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func TestDocumentFilesGraphQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := testkit.New(t, testkit.Options{Shipments: 20, Files: &files.Config{MaxSize: 2 << 20}})
	store, keys, gqlURL := e.Store, e.Keys, e.URL()

	var shipment string
	if err := store.SQL().QueryRowContext(ctx, `SELECT s.id FROM shipments s JOIN accounts a ON a.id = s.account_id WHERE a.slug = 'acme' ORDER BY s.id LIMIT 1`).Scan(&shipment); err != nil {
		t.Fatal(err)
	}

	// A file larger than the default 1 MB body limit passes as an upload.
	data := bytes.Repeat([]byte("%PDF-1.4 graph upload\n"), 60000)
	upload := func(who string, data []byte) gqlReply {
		t.Helper()
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		ops, _ := json.Marshal(map[string]any{
			"query":     `mutation($f: Upload!, $s: [ID!]) { createDocument(input: {name: "Scan", file: $f, shipmentIds: $s}) { id fileName fileContentType fileSizeBytes source shipments { id } downloadUrl } }`,
			"variables": map[string]any{"f": nil, "s": []string{shipment}},
		})
		_ = mw.WriteField("operations", string(ops))
		_ = mw.WriteField("map", `{"0": ["variables.f"]}`)
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="0"; filename="scan.pdf"`)
		h.Set("Content-Type", "application/pdf")
		pw, _ := mw.CreatePart(h)
		_, _ = pw.Write(data)
		_ = mw.Close()
		req, _ := http.NewRequest("POST", gqlURL, &b)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "Token "+keys[who])
		return post(t, req)
	}
	r := upload("acme/member", data)
	if len(r.Errors) > 0 {
		t.Fatalf("createDocument: %+v", r.Errors)
	}
	d := r.Data["createDocument"].(map[string]any)
	if d["fileName"] != "scan.pdf" || d["fileContentType"] != "application/pdf" || d["fileSizeBytes"] != float64(len(data)) || d["source"] != "API" && d["source"] != "api" {
		t.Errorf("created: %v", d)
	}
	if s := d["shipments"].([]any); len(s) != 1 {
		t.Errorf("shipments: %v", s)
	}
	if got := getBytes(t, d["downloadUrl"].(string)); !bytes.Equal(got, data) {
		t.Errorf("downloadUrl served %d bytes, want %d", len(got), len(data))
	}

	// downloadUrl on a query (the fast path), and null for a document
	// without a file.
	query := func(who, q string) gqlReply {
		t.Helper()
		return post(t, testkit.Request(t, http.MethodPost, gqlURL, keys[who], testkit.JSON(t, map[string]any{"query": q})))
	}
	r = query("acme/viewer", `{ documents(first: 100) { nodes { id downloadUrl } } }`)
	if len(r.Errors) > 0 {
		t.Fatalf("documents: %+v", r.Errors)
	}
	withFile, without := 0, 0
	for _, n := range r.Data["documents"].(map[string]any)["nodes"].([]any) {
		n := n.(map[string]any)
		if n["downloadUrl"] == nil {
			without++
			continue
		}
		withFile++
		if n["id"] != d["id"] || !bytes.Equal(getBytes(t, n["downloadUrl"].(string)), data) {
			t.Errorf("downloadUrl of %v", n["id"])
		}
	}
	if withFile != 1 || without == 0 {
		t.Errorf("documents with a file %d, without %d", withFile, without)
	}
	// Another account does not see it.
	r = query("globex/admin", `{ node(id: "`+d["id"].(string)+`") { id } }`)
	if r.Data["node"] != nil {
		t.Errorf("globex sees acme's document: %v", r.Data)
	}

	// The same file again: CONFLICT naming the first; viewers: FORBIDDEN;
	// an unaccepted type is BAD_USER_INPUT.
	r = upload("acme/admin", data)
	if len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != "CONFLICT" || r.Errors[0].Extensions["existingDocumentId"] != d["id"] {
		t.Errorf("duplicate: %+v", r.Errors)
	}
	r = upload("acme/viewer", []byte("%PDF other"))
	if len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != "FORBIDDEN" {
		t.Errorf("viewer: %+v", r.Errors)
	}
	r = query("acme/admin", `mutation { createDocument(input: {name: "x", attachedDocument: "nope"}) { id } }`)
	if len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != "BAD_USER_INPUT" || r.Errors[0].Extensions["field"] != "attached_document" {
		t.Errorf("bad signed id: %+v", r.Errors)
	}
}

func post(t *testing.T, req *http.Request) gqlReply {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r gqlReply
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	return r
}

func getBytes(t *testing.T, link string) []byte {
	t.Helper()
	resp, b := testkit.Get(t, link, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", link, resp.StatusCode)
	}
	return b
}
