package testkit

// The clients tests share: GraphQL requests to the test server and their
// results, and plain HTTP requests to any server, read whole.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/client"

	"shipgraph/db"
)

// Error is one GraphQL error of a response.
type Error struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// Code is extensions.code.
func (e Error) Code() string {
	s, _ := e.Extensions["code"].(string)
	return s
}

// Result is the response to one GraphQL request.
type Result struct {
	Data       json.RawMessage
	Errors     []Error
	Extensions map[string]any
	// Statements is the number of SQL statements the request sent,
	// the API key lookup included (when the key was not cached).
	Statements int64
	// AfterAuth is the number of those sent after authentication: what
	// the request itself cost. Counted through Chain only.
	AfterAuth int64
}

// Decode unmarshals data into v.
func (r *Result) Decode(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(r.Data, v); err != nil {
		tb.Fatalf("decoding data: %v\n%s", err, r.Data)
	}
}

// Codes lists the extensions.code of every error, in order.
func (r *Result) Codes() []string {
	out := make([]string, len(r.Errors))
	for i, e := range r.Errors {
		out[i] = e.Code()
	}
	return out
}

// String renders the result for failure messages.
func (r *Result) String() string {
	b, _ := json.Marshal(map[string]any{"data": r.Data, "errors": r.Errors})
	if len(b) > 4000 {
		b = append(b[:4000], "…"...)
	}
	return string(b)
}

// Client is gqlgen's test client on the handler with key (none if "").
func (e *Env) Client(key string) *client.Client {
	var opts []client.Option
	if key != "" {
		opts = append(opts, client.AddHeader("Authorization", "Token "+key))
	}
	opts = append(opts, client.Path("/graphql"))
	return client.New(e.Handler, opts...)
}

// Do sends one operation with key (an API key, or "" for none) through the
// whole chain, counting its statements. vars may be nil.
func (e *Env) Do(tb testing.TB, key, query string, vars map[string]any, opts ...client.Option) *Result {
	tb.Helper()
	var n, after atomic.Int64
	all := []client.Option{func(r *client.Request) {
		ctx := db.WithQueryCounter(r.HTTP.Context(), &n)
		r.HTTP = r.HTTP.WithContext(context.WithValue(ctx, afterAuthKey{}, &after))
	}}
	for k, v := range vars {
		all = append(all, client.Var(k, v))
	}
	all = append(all, opts...)
	raw, err := e.Client(key).RawPost(query, all...)
	if err != nil {
		tb.Fatalf("graphql request: %v", err)
	}
	res := &Result{Extensions: raw.Extensions, Statements: n.Load(), AfterAuth: after.Load()}
	if res.Data, err = json.Marshal(raw.Data); err != nil {
		tb.Fatal(err)
	}
	if len(raw.Errors) > 0 {
		if err := json.Unmarshal(raw.Errors, &res.Errors); err != nil {
			tb.Fatalf("decoding errors: %v\n%s", err, raw.Errors)
		}
	}
	return res
}

// Must is Do that fails the test on any GraphQL error and decodes the data
// into v (unless v is nil).
func (e *Env) Must(tb testing.TB, key, query string, vars map[string]any, v any) *Result {
	tb.Helper()
	res := e.Do(tb, key, query, vars)
	if len(res.Errors) > 0 {
		tb.Fatalf("unexpected errors: %s", res)
	}
	if v != nil {
		res.Decode(tb, v)
	}
	return res
}

// HTTPResponse is a raw HTTP answer of the test server.
type HTTPResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body as a GraphQL response.
func (r *HTTPResponse) JSON(tb testing.TB) *Result {
	tb.Helper()
	var v struct {
		Data       json.RawMessage `json:"data"`
		Errors     []Error         `json:"errors"`
		Extensions map[string]any  `json:"extensions"`
	}
	if err := json.Unmarshal(r.Body, &v); err != nil {
		tb.Fatalf("body is not JSON (%v): %q", err, r.Body)
	}
	return &Result{Data: v.Data, Errors: v.Errors, Extensions: v.Extensions}
}

// HTTP sends a request to the test server over the network.
func (e *Env) HTTP(tb testing.TB, req *http.Request) *HTTPResponse {
	tb.Helper()
	return Do(tb, req)
}

// Send sends method to url (any server's: a serve process', an httptest
// one's) with key as the API key ("" for none) and body as JSON (nil for
// none), and reads the whole answer.
func Send(tb testing.TB, method, url, key string, body []byte) *HTTPResponse {
	tb.Helper()
	return Do(tb, Request(tb, method, url, key, body))
}

// Do sends req over the network and reads the whole answer.
func Do(tb testing.TB, req *http.Request) *HTTPResponse {
	tb.Helper()
	res, body := Fetch(tb, req)
	return &HTTPResponse{Status: res.StatusCode, Header: res.Header, Body: body}
}

// Fetch sends req over the network and returns the answer with its body
// read whole (and closed).
func Fetch(tb testing.TB, req *http.Request) (*http.Response, []byte) {
	tb.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatalf("%s %s: reading the body: %v", req.Method, req.URL, err)
	}
	return res, body
}

// Get GETs url with key as the API key ("" for none): Fetch of Request.
func Get(tb testing.TB, url, key string) (*http.Response, []byte) {
	tb.Helper()
	return Fetch(tb, Request(tb, http.MethodGet, url, key, nil))
}

// NewRequest builds a request to the test server's /graphql with key as
// the API key ("" for none); rawQuery is appended as the query string.
func (e *Env) NewRequest(tb testing.TB, method, key, rawQuery string, body []byte) *http.Request {
	tb.Helper()
	u := e.URL()
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	return Request(tb, method, u, key, body)
}

// Request builds a request to url with key as the API key ("" for none)
// and body as JSON (nil for none).
func Request(tb testing.TB, method, u, key string, body []byte) *http.Request {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Token "+key)
	}
	return req
}

// Vars is shorthand for a variables map.
type Vars = map[string]any

// CodesEqual reports whether the errors' extensions.code are want, in order.
func CodesEqual(got []string, want ...string) bool {
	return slices.Equal(got, want)
}

// Refused checks that a request was answered with exactly one error of
// the code, no data, and no statement after authentication: a limit or a
// role check refused it before any resolver ran.
func Refused(tb testing.TB, what string, res *Result, code string) {
	tb.Helper()
	if !CodesEqual(res.Codes(), code) {
		tb.Errorf("%s: %s; want one %s error", what, res, code)
		return
	}
	if d := string(res.Data); d != "null" && d != "" {
		tb.Errorf("%s: data %s; want none", what, d)
	}
	if res.AfterAuth != 0 {
		tb.Errorf("%s: %d statements after the key lookup; want none: the limit must refuse before resolvers run", what, res.AfterAuth)
	}
	if strings.TrimSpace(res.Errors[0].Message) == "" {
		tb.Errorf("%s: empty message", what)
	}
}

// JSON marshals v, failing tb on error: a request body.
func JSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
