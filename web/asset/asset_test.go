package asset

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestServe(t *testing.T) {
	f := New([]byte("body{}"), "text/css; charset=utf-8")
	s := Set{"a.css": f}
	get := func(target string, hdr ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		w := httptest.NewRecorder()
		s.Serve(w, r, r.URL.Query().Get("name"))
		return w
	}
	w := get("/x?name=a.css&v=" + f.Version())
	if w.Code != 200 || w.Body.String() != "body{}" || w.Header().Get("Content-Type") != "text/css; charset=utf-8" {
		t.Fatalf("exact version: %d %q %q", w.Code, w.Body.String(), w.Header().Get("Content-Type"))
	}
	if cc := w.Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
		t.Errorf("exact version: Cache-Control %q", cc)
	}
	etag := w.Header().Get("ETag")
	if len(etag) != 34 {
		t.Errorf("ETag %q: want a quoted 32-character hash", etag)
	}
	if cc := get("/x?name=a.css&v=old").Header().Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("another version: Cache-Control %q, want no-cache", cc)
	}
	if w := get("/x?name=a.css", "If-None-Match", etag); w.Code != http.StatusNotModified || w.Body.Len() != 0 {
		t.Errorf("If-None-Match: %d with %d bytes, want 304 and none", w.Code, w.Body.Len())
	}
	for _, name := range []string{"b.css", "../a.css", "dir/a.css"} {
		if w := get("/x?name=" + name); w.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", name, w.Code)
		}
	}
	if New([]byte("other"), "text/css").Version() == f.Version() {
		t.Error("two contents share a version")
	}
}
