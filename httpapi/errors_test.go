package httpapi_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"shipgraph/db/dbtest"
	"shipgraph/rest/jsonapi"
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
	if ct := r.header.Get("Content-Type"); ct != jsonapi.MediaType {
		t.Errorf("%s: Content-Type %q, want %s", what, ct, jsonapi.MediaType)
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

// TestDatabaseTimeoutAnswers503: a statement that times out in PostgreSQL
// (57014, here behind a lock another session holds) is the database's
// failure, not a bug: /v2 answers 503 with Retry-After, GraphQL
// extensions.code UNAVAILABLE — never a 500.
func TestDatabaseTimeoutAnswers503(t *testing.T) {
	url, keys := seeded(t)
	c := testkit.Defaults()
	c.KeyCache = 0 // keys are read from a table nobody locks
	in := start(t, url+"&statement_timeout=300", &c)

	tx := lockShipments(t, url)
	k := keys["acme/admin"]
	r := in.do(t, http.MethodGet, "/v2/shipments", k, "")
	wantJSONAPIError(t, "timeout on /v2", r, http.StatusServiceUnavailable)
	if r.header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	r = in.gql(t, k, `{ shipments(first: 5) { nodes { id } } }`)
	var body struct {
		Errors []struct {
			Message    string
			Extensions map[string]any
		}
	}
	if err := json.Unmarshal(r.body, &body); err != nil || len(body.Errors) == 0 {
		t.Fatalf("GraphQL: %d %s", r.status, r.body)
	}
	for _, e := range body.Errors {
		if e.Extensions["code"] != "UNAVAILABLE" {
			t.Errorf("GraphQL error %q code %v, want UNAVAILABLE", e.Message, e.Extensions["code"])
		}
	}
	if strings.Contains(string(r.body), "pq:") || strings.Contains(in.log.String(), `"level":"ERROR"`) {
		t.Errorf("a database timeout is shown or logged as an internal error:\n%s\n%s", r.body, in.log.String())
	}
	_ = tx.Rollback()
	if r := in.do(t, http.MethodGet, "/v2/shipments", k, ""); r.status != http.StatusOK {
		t.Errorf("after the lock: %d %s", r.status, r.body)
	}
}

// TestBadTextIsTheClients: input PostgreSQL cannot store (invalid UTF-8,
// NUL, a number out of range) is answered 4xx — refused at the edge when it
// is in the path or a query parameter, classified when the database
// refuses it — never 500.
func TestBadTextIsTheClients(t *testing.T) {
	url, keys := seeded(t)
	in := start(t, url, nil)
	k := keys["acme/admin"]

	var defs struct {
		Data []struct {
			ID         string
			Attributes map[string]any
		}
	}
	r := in.do(t, http.MethodGet, "/v2/custom_field_definitions", k, "")
	if err := json.Unmarshal(r.body, &defs); err != nil || r.status != 200 {
		t.Fatalf("definitions: %d %s", r.status, r.body)
	}
	var enumDef string
	for _, d := range defs.Data {
		if d.Attributes["data_type"] == "enum" {
			enumDef = d.ID
		}
	}
	var ships struct{ Data []struct{ ID string } }
	r = in.do(t, http.MethodGet, "/v2/shipments", k, "")
	if err := json.Unmarshal(r.body, &ships); err != nil || len(ships.Data) == 0 {
		t.Fatalf("shipments: %d %s", r.status, r.body)
	}
	ship := ships.Data[0].ID

	for _, bad := range []string{"%ff", "%c3%28", "%ed%a0%80", "%00", "a%00b"} {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/v2/shipments/" + ship + "/custom_fields/" + bad, ""},
			{"DELETE", "/v2/shipments/" + ship + "/custom_fields/" + bad, ""},
			{"GET", "/v2/documents?filter[document_types]=" + bad, ""},
			{"GET", "/v2/custom_field_definitions?filter[display_name]=" + bad, ""},
			{"GET", "/graphql?query=" + `%7Bshipments(first:1,filter:%7Bq:%22` + bad + `%22%7D)%7BtotalCount%7D%7D`, ""},
		} {
			r := in.do(t, c.method, c.path, k, c.body)
			if r.status != http.StatusBadRequest {
				t.Errorf("%s %s: %d, want 400: %s", c.method, c.path, r.status, r.body)
			}
		}
	}
	// NUL inside JSON values, and a position out of range: 4xx from the
	// database's refusal.
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v2/custom_field_definitions/" + enumDef + "/options", `{"label":"a\u0000b","value":"nul"}`},
		{"POST", "/v2/custom_field_definitions/" + enumDef + "/options", `{"label":"big","value":"big","position":99999999999}`},
		{"POST", "/graphql", `{"query":"mutation($d: ID!) { createCustomFieldOption(definitionId: $d, input: {label: \"a\\u0000b\", value: \"nul2\"}) { id } }","variables":{"d":"` + enumDef + `"}}`},
	} {
		r := in.do(t, c.method, c.path, k, c.body)
		if r.status >= 500 || strings.Contains(string(r.body), "INTERNAL_SERVER_ERROR") || (c.path != "/graphql" && r.status < 400) {
			t.Errorf("%s %s %s: %d %s", c.method, c.path, c.body, r.status, r.body)
		}
		if c.path == "/graphql" && !strings.Contains(string(r.body), "BAD_USER_INPUT") {
			t.Errorf("%s: %s, want BAD_USER_INPUT", c.body, r.body)
		}
	}
}

// lockShipments holds an ACCESS EXCLUSIVE lock on shipments, in a
// transaction of its own, until the test ends (or tx rolls back): every
// read of shipments waits.
func lockShipments(t *testing.T, url string) *sql.Tx {
	t.Helper()
	admin := dbtest.Open(t, url)
	tx, err := admin.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	if _, err := tx.Exec(`LOCK TABLE shipments IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	return tx
}
