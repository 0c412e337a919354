package files

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Handler serves Shipgraph's own signed URLs under Prefix: PUT
// /files/upload and GET|HEAD /files/download. It needs no API key (the
// signature is the authority) and must sit outside the chain's body limit:
// it limits a body to the signed size itself.
func (s *Store) Handler() http.Handler { return s.handler }

func (s *Store) newHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(Prefix+"upload", s.serveUpload)
	mux.HandleFunc(Prefix+"download", s.serveDownload)
	mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		plain(w, http.StatusNotFound, "not found")
	})
	return mux
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

// serveUpload streams the body into the bucket under the signed key,
// refusing (and keeping nothing of) a body whose content type, size or MD5
// is not the signed one.
func (s *Store) serveUpload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut {
		w.Header().Set("Allow", http.MethodPut)
		plain(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	q := r.URL.Query()
	if !s.verify(http.MethodPut, "upload", q, time.Now()) {
		plain(w, http.StatusForbidden, "forbidden")
		return
	}
	size, err := strconv.ParseInt(q.Get("s"), 10, 64)
	md5, merr := base64.StdEncoding.DecodeString(q.Get("m"))
	if err != nil || merr != nil || len(md5) != 16 {
		plain(w, http.StatusForbidden, "forbidden")
		return
	}
	if r.Header.Get("Content-Type") != q.Get("t") {
		plain(w, http.StatusForbidden, "forbidden: Content-Type is not the signed one")
		return
	}
	if r.ContentLength > size {
		plain(w, http.StatusRequestEntityTooLarge, "the body is larger than the announced byte_size")
		return
	}
	if r.ContentLength >= 0 && r.ContentLength != size {
		plain(w, http.StatusBadRequest, "the body's size differs from the announced byte_size")
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	bw, err := s.bucket.NewWriter(ctx, q.Get("k"), &blob.WriterOptions{ContentType: q.Get("t"), ContentMD5: md5})
	if err != nil {
		plain(w, http.StatusInternalServerError, "storage error")
		return
	}
	n, err := io.Copy(bw, io.LimitReader(r.Body, size+1))
	if err != nil || n != size {
		cancel() // aborts the write: nothing is kept
		_ = bw.Close()
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe) || n > size:
			plain(w, http.StatusRequestEntityTooLarge, "the body is larger than the announced byte_size")
		case err != nil:
			plain(w, http.StatusBadRequest, "the body could not be read")
		default:
			plain(w, http.StatusBadRequest, "the body's size differs from the announced byte_size")
		}
		return
	}
	if err := bw.Close(); err != nil {
		if gcerrors.Code(err) == gcerrors.FailedPrecondition {
			plain(w, http.StatusBadRequest, "the body's MD5 differs from the announced checksum")
			return
		}
		plain(w, http.StatusInternalServerError, "storage error")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// serveDownload streams the signed key with the signed content type and
// file name; ranges and HEAD come with http.ServeContent. It never holds
// a whole file in memory.
func (s *Store) serveDownload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		plain(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	q := r.URL.Query()
	if !s.verify(http.MethodGet, "download", q, time.Now()) {
		plain(w, http.StatusForbidden, "forbidden")
		return
	}
	br, err := s.bucket.NewReader(r.Context(), q.Get("k"), nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		plain(w, http.StatusNotFound, "not found")
		return
	} else if err != nil {
		plain(w, http.StatusInternalServerError, "storage error")
		return
	}
	defer func() { _ = br.Close() }()
	h := w.Header()
	h.Set("Content-Type", q.Get("t"))
	h.Set("Content-Disposition", Disposition(q.Get("n")))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, max-age="+strconv.Itoa(int(s.cfg.DownloadTTL.Seconds())))
	http.ServeContent(w, r, "", br.ModTime(), br)
}
