package httpapi_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"shipgraph/db/dbtest"
	"shipgraph/testkit"
)

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
