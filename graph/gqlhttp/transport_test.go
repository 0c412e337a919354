package gqlhttp_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"shipgraph/graph/gqlhttp"
	"shipgraph/testkit"
)

// Transport tests go over a real HTTP server (127.0.0.1:0) to check status
// codes, media types and headers as clients see them.

func body(t *testing.T, v any) []byte { return testkit.JSON(t, v) }

func TestTransport(t *testing.T) {
	e := testkit.New(t, testkit.Options{Shipments: 6})
	k := e.Key(t, acmeAdmin)
	post := func(accept string, v any) *testkit.HTTPResponse {
		req := e.NewRequest(t, http.MethodPost, k, "", body(t, v))
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		return e.HTTP(t, req)
	}
	get := func(accept, key string, params url.Values) *testkit.HTTPResponse {
		req := e.NewRequest(t, http.MethodGet, key, params.Encode(), nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		return e.HTTP(t, req)
	}
	expect := func(name string, r *testkit.HTTPResponse, status int, media string) *testkit.Result {
		t.Helper()
		if r.Status != status || !strings.HasPrefix(r.Header.Get("Content-Type"), media) {
			t.Errorf("%s: %d %s %s; want %d %s", name, r.Status, r.Header.Get("Content-Type"), r.Body, status, media)
		}
		return r.JSON(t)
	}
	const gqlResp = "application/graphql-response+json"
	const appJSON = "application/json"
	query := map[string]any{"query": `{ viewer { role } }`}
	invalid := map[string]any{"query": `{ viewer { nope } }`}

	t.Run("POST", func(t *testing.T) {
		res := expect("POST, no Accept", post("", query), 200, appJSON)
		if len(res.Errors) > 0 || !strings.Contains(string(res.Data), "ADMIN") {
			t.Errorf("POST: %s", res)
		}
		expect("POST, Accept json", post(appJSON, query), 200, appJSON)
		expect("POST, Accept graphql-response", post(gqlResp, query), 200, gqlResp)
		expect("POST, Accept both", post(gqlResp+", "+appJSON+";q=0.9", query), 200, gqlResp)
		expect("POST, Accept */*", post("*/*", query), 200, appJSON)
		// Named operations and variables.
		res = expect("operationName", post("", map[string]any{
			"query":         `query A { viewer { role } } query B($id: ID!) { shipment(id: $id) { id } }`,
			"operationName": "B", "variables": map[string]any{"id": "00000000-0000-0000-0000-000000000000"}}), 200, appJSON)
		if len(res.Errors) > 0 || string(res.Data) != `{"shipment":null}` {
			t.Errorf("operationName B: %s", res)
		}
	})

	t.Run("ErrorsInBody", func(t *testing.T) {
		// application/json: every well-formed request is 200, errors in the body.
		res := expect("validation, json", post(appJSON, invalid), 200, appJSON)
		if len(res.Errors) != 1 || res.Errors[0].Code() == "" {
			t.Errorf("validation error: %s", res)
		}
		// application/graphql-response+json: a request that cannot execute is 4xx.
		expect("validation, graphql-response", post(gqlResp, invalid), 400, gqlResp)
		expect("parse error, graphql-response", post(gqlResp, map[string]any{"query": "{"}), 400, gqlResp)
		res = expect("parse error, json", post(appJSON, map[string]any{"query": "{"}), 200, appJSON)
		if len(res.Errors) != 1 {
			t.Errorf("parse error: %s", res)
		}
		// Field errors during execution are 200 with either media type.
		res = expect("field error", post(gqlResp, map[string]any{"query": `{ shipments(first: 500) { totalCount } }`}), 200, gqlResp)
		if !testkit.CodesEqual(res.Codes(), "BAD_USER_INPUT") {
			t.Errorf("field error: %s", res)
		}
		// Complexity and depth refusals follow validation.
		expect("complexity, json", post(appJSON, map[string]any{"query": dashboardPages(10)}), 200, appJSON)
		expect("complexity, graphql-response", post(gqlResp, map[string]any{"query": dashboardPages(10)}), 400, gqlResp)
	})

	t.Run("Unauthenticated", func(t *testing.T) {
		req := e.NewRequest(t, http.MethodPost, "", "", body(t, query))
		res := expect("no key, json", e.HTTP(t, req), 200, appJSON)
		if !testkit.CodesEqual(res.Codes(), "UNAUTHENTICATED") {
			t.Errorf("no key: %s", res)
		}
		req = e.NewRequest(t, http.MethodPost, "", "", body(t, query))
		req.Header.Set("Accept", gqlResp)
		r := e.HTTP(t, req)
		expect("no key, graphql-response", r, 401, gqlResp)
		if r.Header.Get("WWW-Authenticate") == "" {
			t.Error("401 without WWW-Authenticate")
		}
	})

	t.Run("GET", func(t *testing.T) {
		res := expect("GET query", get("", k, url.Values{"query": {`query($id: ID!) { shipment(id: $id) { id } }`},
			"variables": {`{"id": "00000000-0000-0000-0000-000000000000"}`}}), 200, appJSON)
		if len(res.Errors) > 0 || string(res.Data) != `{"shipment":null}` {
			t.Errorf("GET: %s", res)
		}
		r := get("", k, url.Values{"query": {`mutation { deleteCustomFieldOption(definitionId: "x", optionId: "y") { id } }`}})
		expect("GET mutation", r, 405, appJSON)
		if r.Header.Get("Allow") != "POST" {
			t.Errorf("GET mutation: Allow %q", r.Header.Get("Allow"))
		}
		expect("GET without query", get("", k, url.Values{}), 400, appJSON)
		expect("GET bad variables", get("", k, url.Values{"query": {`{ viewer { role } }`}, "variables": {"[1"}}), 400, appJSON)
		expect("GET validation, graphql-response", get(gqlResp, k, url.Values{"query": {`{ nope }`}}), 400, gqlResp)
	})

	t.Run("BadRequests", func(t *testing.T) {
		send := func(method, contentType, accept string, b []byte) *testkit.HTTPResponse {
			req := e.NewRequest(t, method, k, "", nil)
			if b != nil {
				req = e.NewRequest(t, method, k, "", b)
			}
			if contentType != "" {
				req.Header.Set("Content-Type", contentType)
			}
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			return e.HTTP(t, req)
		}
		q := body(t, query)
		expect("not JSON", send("POST", appJSON, "", []byte("query=1")), 400, appJSON)
		expect("batch", send("POST", appJSON, "", []byte(`[`+string(q)+`]`)), 400, appJSON)
		expect("empty body", send("POST", appJSON, "", []byte(" ")), 400, appJSON)
		expect("query not a string", send("POST", appJSON, "", []byte(`{"query": 1}`)), 400, appJSON)
		expect("variables not an object", send("POST", appJSON, "", []byte(`{"query": "{ viewer { role } }", "variables": [1]}`)), 400, appJSON)
		expect("form body", send("POST", "application/x-www-form-urlencoded", "", q), 415, appJSON)
		expect("latin-1", send("POST", "application/json; charset=iso-8859-1", "", q), 415, appJSON)
		expect("only HTML acceptable", send("POST", appJSON, "text/html", q), 406, appJSON)
		r := send("PUT", appJSON, "", q)
		expect("PUT", r, 405, appJSON)
		if allow := r.Header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
			t.Errorf("PUT: Allow %q", allow)
		}
	})

	t.Run("BodyLimit", func(t *testing.T) {
		big := append([]byte(`{"query": "{ viewer { role } }", "variables": {"pad": "`), bytes.Repeat([]byte("x"), testkit.BodyLimit)...)
		big = append(big, `"}}`...)
		r := e.HTTP(t, e.NewRequest(t, http.MethodPost, k, "", big))
		expect("1 MiB + body", r, 413, appJSON)
		// Just under the limit is served.
		pad := testkit.BodyLimit - 200
		ok := append([]byte(`{"query": "{ viewer { role } }", "variables": {"pad": "`), bytes.Repeat([]byte("x"), pad)...)
		ok = append(ok, `"}}`...)
		expect("body under 1 MiB", e.HTTP(t, e.NewRequest(t, http.MethodPost, k, "", ok)), 200, appJSON)
	})

	t.Run("APQ", func(t *testing.T) {
		persisted := func(q string) map[string]any {
			sum := sha256.Sum256([]byte(q))
			return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
		}
		for _, via := range []string{"POST", "GET"} {
			// A query text of its own per method, so the second does not
			// find the first's in the cache.
			q := `query APQ { viewer { account { companyName } } } # ` + via
			ext := persisted(q)
			send := func(withQuery bool) *testkit.Result {
				if via == "POST" {
					m := map[string]any{"extensions": ext}
					if withQuery {
						m["query"] = q
					}
					return expect("APQ POST", post("", m), 200, appJSON)
				}
				p := url.Values{"extensions": {string(body(t, ext))}}
				if withQuery {
					p.Set("query", q)
				}
				return expect("APQ GET", get("", k, p), 200, appJSON)
			}
			if res := send(false); !testkit.CodesEqual(res.Codes(), "PERSISTED_QUERY_NOT_FOUND") {
				t.Errorf("%s hash only, unknown: %s", via, res)
			}
			if res := send(true); len(res.Errors) > 0 || !strings.Contains(string(res.Data), "Acme") {
				t.Errorf("%s hash and query: %s", via, res)
			}
			if res := send(false); len(res.Errors) > 0 || !strings.Contains(string(res.Data), "Acme") {
				t.Errorf("%s hash only, known: %s", via, res)
			}
		}
		// A hash that does not match its query is refused.
		res := expect("APQ mismatch", post("", map[string]any{"query": `{ viewer { role } }`, "extensions": persisted("something else")}), 200, appJSON)
		if len(res.Errors) != 1 || res.Errors[0].Code() == "" {
			t.Errorf("APQ mismatch: %s", res)
		}
	})

	t.Run("Introspection", func(t *testing.T) {
		res := expect("introspection on", post("", map[string]any{"query": `{ __schema { queryType { name } } }`}), 200, appJSON)
		if len(res.Errors) > 0 || !strings.Contains(string(res.Data), "Query") {
			t.Errorf("introspection on: %s", res)
		}
		hc := gqlhttp.DefaultHandlerConfig
		hc.Introspection = false
		off := e.WithGraphQL(t, hc)
		for _, q := range []string{`{ __schema { queryType { name } } }`, `{ __type(name: "Shipment") { name } }`,
			`{ viewer { role } __schema { types { name } } }`} {
			res := off.Do(t, k, q, nil)
			if len(res.Errors) == 0 || strings.Contains(string(res.Data), "Query") || strings.Contains(string(res.Data), "Shipment") {
				t.Errorf("introspection off, %s: %s", q, res)
			}
			for _, er := range res.Errors {
				if er.Code() == "" || er.Code() == "INTERNAL_SERVER_ERROR" {
					t.Errorf("introspection off, %s: error %+v", q, er)
				}
			}
		}
		// __typename is not introspection.
		res = off.Must(t, k, `{ viewer { __typename role } }`, nil, nil)
		if !strings.Contains(string(res.Data), "Viewer") {
			t.Errorf("__typename with introspection off: %s", res)
		}
	})

	t.Run("QueryCache", func(t *testing.T) {
		// The parsed document is cached: the second run of a query must
		// give the same answer (and reuse is what keeps it cheap).
		q := map[string]any{"query": `query Cached($n: Int) { shipments(first: $n) { nodes { id } } }`, "variables": map[string]any{"n": 2}}
		a, b := post("", q), post("", q)
		if string(a.Body) != string(b.Body) || a.Status != 200 {
			t.Errorf("cached query: %s vs %s", a.Body, b.Body)
		}
		q["variables"] = map[string]any{"n": 3}
		var d struct{ Shipments struct{ Nodes []idObj } }
		c := post("", q).JSON(t)
		c.Decode(t, &d)
		if len(d.Shipments.Nodes) != 3 {
			t.Errorf("cached query with new variables: %s", c)
		}
	})
}

// TestInvalidUTF8Body: a request body that is not valid UTF-8 is a 400,
// not decoded with U+FFFD in place of the bytes (which a mutation would
// then store).
func TestInvalidUTF8Body(t *testing.T) {
	e := testkit.New(t, testkit.Options{Shipments: 1})
	k := e.Key(t, acmeAdmin)
	for _, bad := range []string{"\xff", "\xc3(", "\xed\xa0\x80"} {
		raw := []byte(`{"query": "mutation($t: [String!]) { updateShipment(id: \"00000000-0000-0000-0000-000000000000\", input: {tags: $t}) { id } }", "variables": {"t": ["a` + bad + `"]}}`)
		res := e.HTTP(t, e.NewRequest(t, http.MethodPost, k, "", raw))
		if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "UTF-8") {
			t.Errorf("%q: %d %s; want 400 naming UTF-8", bad, res.Status, res.Body)
		}
	}
}
