package testkit

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// Received is one request a Receiver got.
type Received struct {
	At     time.Time
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Receiver is an endpoint on 127.0.0.1 (a webhook's) that keeps every
// request it gets, in order of arrival, and answers each with its status
// and reply.
type Receiver struct {
	*httptest.Server
	Got    *Feed[Received]
	status atomic.Int32
	hang   atomic.Bool
}

// NewReceiver starts a receiver that answers status with body and header
// (name, value pairs); it stops when tb ends.
func NewReceiver(tb testing.TB, status int, body string, header ...string) *Receiver {
	tb.Helper()
	r := &Receiver{Got: NewFeed[Received]()}
	r.status.Store(int32(status))
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.Got.Add(Received{At: time.Now(), Method: req.Method, Path: req.URL.Path, Header: req.Header.Clone(), Body: b})
		if r.hang.Load() {
			<-req.Context().Done()
			return
		}
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(int(r.status.Load()))
		_, _ = io.WriteString(w, body)
	}))
	tb.Cleanup(r.Close)
	return r
}

// SetStatus makes the receiver answer code from now on.
func (r *Receiver) SetStatus(code int) { r.status.Store(int32(code)) }

// SetHang makes the receiver hold every request it gets from now on
// (after keeping it) until the client gives up, or answer again.
func (r *Receiver) SetHang(on bool) { r.hang.Store(on) }
