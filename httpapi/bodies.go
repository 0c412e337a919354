package httpapi

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"shipgraph/graph/gqlhttp"
	"shipgraph/model"
	"shipgraph/rest/jsonapi"
)

// bodies bounds request bodies: an announced Content-Length over the limit
// is answered 413 before a byte of it is read, and a body must arrive
// within the timeout from the end of the headers (the server's
// ReadHeaderTimeout bounds those) — a client trickling it is cut. On
// shutdown, bodies still being read are cut at once: a slow client does
// not hold the drain for its whole timeout.
type bodies struct {
	limit   int64
	timeout time.Duration
	// upload, when positive, is the limit of a GraphQL multipart request
	// (a file upload): the largest file and the body limit.
	upload int64

	mu       sync.Mutex
	reading  map[*deadlineBody]struct{}
	shutdown bool
}

func newBodies(limit int64, timeout time.Duration) *bodies {
	return &bodies{limit: limit, timeout: timeout, reading: map[*deadlineBody]struct{}{}}
}

// limitOf is the body limit of r.
func (b *bodies) limitOf(r *http.Request) int64 {
	if b.upload > 0 && r.URL.Path == "/graphql" && strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		return b.upload
	}
	return b.limit
}

func (b *bodies) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		limit := b.limitOf(r)
		if r.ContentLength > limit {
			// Nothing of the body is read: the connection cannot
			// carry another request after it.
			w.Header().Set("Connection", "close")
			tooLarge(w, r, limit)
			return
		}
		if b.timeout > 0 {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(b.timeout)) == nil {
				d := &deadlineBody{ReadCloser: r.Body, rc: rc, b: b}
				if !b.track(d) {
					_ = rc.SetReadDeadline(time.Now())
				}
				defer d.done(false)
				r.Body = d
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// track registers a body being read; false once the shutdown began.
func (b *bodies) track(d *deadlineBody) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reading[d] = struct{}{}
	return !b.shutdown
}

func (b *bodies) untrack(d *deadlineBody) {
	b.mu.Lock()
	delete(b.reading, d)
	b.mu.Unlock()
}

// cut ends the reads of every body still arriving, and of those to come.
func (b *bodies) cut() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.shutdown = true
	for d := range b.reading {
		d.cut()
	}
}

// deadlineBody is a body read under a deadline. Once it is read to the end
// (or failed) the deadline is lifted, so the server's watch for the
// client closing the connection does not mistake it for a broken one while
// the handler works on.
type deadlineBody struct {
	io.ReadCloser
	rc *http.ResponseController
	b  *bodies

	mu   sync.Mutex
	over bool
}

func (d *deadlineBody) Read(p []byte) (int, error) {
	n, err := d.ReadCloser.Read(p)
	if err == io.EOF {
		d.done(true)
	}
	return n, err
}

// done stops tracking the body, once: when it was read to its end (lift:
// the deadline is lifted) or when the handler returned (the deadline stays
// for the server's discarding of what is left unread — a body cut by it is
// never read to its end — and the next request on the connection sets its
// own).
func (d *deadlineBody) done(lift bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.over {
		return
	}
	d.over = true
	d.b.untrack(d)
	if lift {
		_ = d.rc.SetReadDeadline(time.Time{})
	}
}

func (d *deadlineBody) cut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.over {
		_ = d.rc.SetReadDeadline(time.Now())
	}
}

// tooLarge answers 413 in the shape of the API asked.
func tooLarge(w http.ResponseWriter, r *http.Request, limit int64) {
	msg := "the request body is larger than " + strconv.FormatInt(limit, 10) + " bytes"
	switch {
	case strings.HasPrefix(r.URL.Path, "/v2/"):
		jsonapi.WriteErrors(w, http.StatusRequestEntityTooLarge, jsonapi.ErrorObject{
			Status: "413", Title: http.StatusText(http.StatusRequestEntityTooLarge), Detail: msg,
		})
	case r.URL.Path == "/graphql":
		gqlhttp.WriteRequestError(w, r, http.StatusRequestEntityTooLarge, model.Errorf(model.EINVALID, "%s", msg))
	default:
		http.Error(w, msg, http.StatusRequestEntityTooLarge)
	}
}
