// Package asset serves files embedded in the binary under URLs that name
// their content: the playground's and the operations page's scripts and
// styles. A page links each file as name?v=<version>; an exact ?v= is
// cached for a year (a new build links a new version), anything else is
// revalidated, and If-None-Match and Range are answered from the ETag.
package asset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"path"
	"time"
)

// File is one embedded file, hashed once when it is registered.
type File struct {
	data        []byte
	contentType string
	etag        string
	version     string
}

// New hashes data (SHA-256) into the file's strong ETag and its version.
func New(data []byte, contentType string) *File {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	return &File{data: data, contentType: contentType, etag: `"` + h[:32] + `"`, version: h[:16]}
}

// Version is the short content hash a page puts in the file's URL as ?v=.
func (f *File) Version() string { return f.version }

// Data is the file's content.
func (f *File) Data() []byte { return f.data }

// Set is a page's files by name (a bare file name, no directories).
type Set map[string]*File

// Serve answers name from s: 404 for a name s lacks or one with a
// directory in it.
func (s Set) Serve(w http.ResponseWriter, r *http.Request, name string) {
	f, ok := s[name]
	if !ok || name != path.Base(name) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.contentType)
	w.Header().Set("ETag", f.etag)
	if r.URL.Query().Get("v") == f.version {
		// The URL names this exact content, so it can be cached forever;
		// a new build links a new ?v=.
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	// ServeContent answers If-None-Match (304) and Range from the ETag.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.data))
}

// Readable admits the methods a page and its files answer: GET and HEAD,
// with nosniff set. Any other method is answered 405 (Allow: GET, HEAD)
// and Readable reports false.
func Readable(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return false
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	return true
}
