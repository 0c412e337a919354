package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"shipgraph/db/dbtest"
	"shipgraph/testkit"
)

// The demo data carries real small files (PDFs and PNGs generated at seed
// time) that `serve` with the same DATA_DIR hands out.
func TestSeedDemoFiles(t *testing.T) {
	url, dir := dbtest.NewDB(t), t.TempDir()
	code, out, errOut := runCmd(t, context.Background(), "seed", "--database-url", url, "--shipments", "60", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("seed: %d %s", code, errOut)
	}
	key := ""
	for _, line := range bytes.Split([]byte(out), []byte("\n")) {
		if m := tokenLine.FindStringSubmatch(string(line)); m != nil && m[1] == "acme" && m[2] == "viewer" {
			key = m[3]
		}
	}
	base := serve(t, "--database-url", url, "--data-dir", dir)
	_, body := testkit.Get(t, base+"/v2/documents?page[size]=100", key)
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	pdfs, pngs := 0, 0
	for _, d := range list.Data {
		resp, body := testkit.Get(t, base+"/v2/documents/"+d.ID+"/download_url", key)
		if resp.StatusCode == http.StatusNotFound {
			continue
		}
		var link struct {
			URL string `json:"download_url"`
		}
		if err := json.Unmarshal(body, &link); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("download_url: %d %s", resp.StatusCode, body)
		}
		fr, data := testkit.Get(t, link.URL, "")
		switch {
		case fr.StatusCode != http.StatusOK:
			t.Errorf("GET %s: %d", link.URL, fr.StatusCode)
		case bytes.HasPrefix(data, []byte("%PDF-")) && fr.Header.Get("Content-Type") == "application/pdf":
			pdfs++
		case bytes.HasPrefix(data, []byte("\x89PNG")) && fr.Header.Get("Content-Type") == "image/png":
			pngs++
		default:
			t.Errorf("demo file of %s: %s, %.8q", d.ID, fr.Header.Get("Content-Type"), data)
		}
	}
	if pdfs == 0 || pngs == 0 {
		t.Errorf("demo files: %d PDFs, %d PNGs", pdfs, pngs)
	}
}
