package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"shipgraph/rest"
	"shipgraph/testkit"
)

// The errors the chain writes before routing take the shape of the API
// asked: a GraphQL response with extensions.code on /graphql (in the media
// type negotiated), a JSON:API error document on /v2.

const gqlResponse = "application/graphql-response+json"

// wantGraphQLError checks status, media type and the single error's code.
func wantGraphQLError(t *testing.T, what string, r *reply, status int, media, code string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: status %d, want %d: %s", what, r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != media+"; charset=utf-8" {
		t.Errorf("%s: Content-Type %q, want %s", what, ct, media)
	}
	var body struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message    string
			Extensions map[string]any
		}
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("%s: body is not JSON: %v: %q", what, err, r.body)
	}
	if len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != code || body.Errors[0].Message == "" || body.Data != nil {
		t.Errorf("%s: body %s, want one error with code %s and no data", what, r.body, code)
	}
}

// wantJSONAPIError checks status, media type and the error object.
func wantJSONAPIError(t *testing.T, what string, r *reply, status int) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: status %d, want %d: %s", what, r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != rest.MediaType {
		t.Errorf("%s: Content-Type %q, want %s", what, ct, rest.MediaType)
	}
	var body struct {
		Errors []struct{ Status, Title string }
	}
	if err := json.Unmarshal(r.body, &body); err != nil || len(body.Errors) != 1 ||
		body.Errors[0].Status != strconv.Itoa(status) || body.Errors[0].Title != http.StatusText(status) {
		t.Errorf("%s: body %s, want one JSON:API error with status %q", what, r.body, strconv.Itoa(status))
	}
}

func TestRateLimitShapes(t *testing.T) {
	url, keys := seeded(t)
	c := testkit.Defaults()
	c.RateLimit = 1 // a burst of one, then one a minute
	in := start(t, url, &c)
	q := `{ viewer { role } }`

	if r := in.gql(t, keys["acme/admin"], q); r.status != 200 {
		t.Fatalf("first request: %d %s", r.status, r.body)
	}
	r := in.gql(t, keys["acme/admin"], q)
	wantGraphQLError(t, "429 on /graphql", r, http.StatusTooManyRequests, "application/json", "RATE_LIMITED")
	if r.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	wantGraphQLError(t, "429 on /graphql, graphql-response+json", in.gql(t, keys["acme/admin"], q, "Accept", gqlResponse),
		http.StatusTooManyRequests, gqlResponse, "RATE_LIMITED")

	if r := in.do(t, http.MethodGet, "/v2/shipments", keys["acme/member"], ""); r.status != 200 {
		t.Fatalf("first /v2 request: %d %s", r.status, r.body)
	}
	wantJSONAPIError(t, "429 on /v2", in.do(t, http.MethodGet, "/v2/shipments", keys["acme/member"], ""), http.StatusTooManyRequests)
}

// TestStoreFailureShapes: the store fails while authenticating (its pool
// is closed; the key was never cached): 503 with Retry-After.
func TestStoreFailureShapes(t *testing.T) {
	url, keys := seeded(t)
	in := start(t, url, nil)
	if err := in.store.Close(); err != nil {
		t.Fatal(err)
	}
	k := keys["acme/admin"]
	r := in.gql(t, k, `{ viewer { role } }`)
	wantGraphQLError(t, "503 on /graphql", r, http.StatusServiceUnavailable, "application/json", "UNAVAILABLE")
	if r.header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	wantGraphQLError(t, "503 on /graphql, graphql-response+json", in.gql(t, k, `{ viewer { role } }`, "Accept", gqlResponse),
		http.StatusServiceUnavailable, gqlResponse, "UNAVAILABLE")
	// GET is GraphQL too.
	wantGraphQLError(t, "503 on GET /graphql", in.do(t, http.MethodGet, "/graphql?query=%7Bviewer%7Brole%7D%7D", k, ""),
		http.StatusServiceUnavailable, "application/json", "UNAVAILABLE")
	wantJSONAPIError(t, "503 on /v2", in.do(t, http.MethodGet, "/v2/shipments", k, ""), http.StatusServiceUnavailable)
}

// TestPanicShapes: a panic below the chain's recoverer is a 500 in the
// API's shape, logged with the request id; the server keeps serving.
func TestPanicShapes(t *testing.T) {
	url, keys := seeded(t)
	c := testkit.Defaults()
	c.Wrap = func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Test-Panic") != "" {
				panic("boom")
			}
			next.ServeHTTP(w, r)
		})
	}
	in := start(t, url, &c)
	k := keys["acme/admin"]
	r := in.gql(t, k, `{ viewer { role } }`, "X-Test-Panic", "1")
	wantGraphQLError(t, "500 on /graphql", r, http.StatusInternalServerError, "application/json", "INTERNAL_SERVER_ERROR")
	if strings.Contains(string(r.body), "boom") {
		t.Errorf("the panic leaks to the client: %s", r.body)
	}
	wantGraphQLError(t, "500 on /graphql, graphql-response+json", in.gql(t, k, `{ viewer { role } }`, "X-Test-Panic", "1", "Accept", gqlResponse),
		http.StatusInternalServerError, gqlResponse, "INTERNAL_SERVER_ERROR")
	wantJSONAPIError(t, "500 on /v2", in.do(t, http.MethodGet, "/v2/shipments", k, "", "X-Test-Panic", "1"), http.StatusInternalServerError)
	if l := in.log.String(); !strings.Contains(l, `"msg":"panic","id":"`+r.header.Get("X-Request-Id")+`"`) || !strings.Contains(l, "boom") {
		t.Errorf("the panic is not logged:\n%s", l)
	}
	if r := in.gql(t, k, `{ viewer { role } }`); r.status != 200 {
		t.Errorf("after the panics: %d %s", r.status, r.body)
	}
}
