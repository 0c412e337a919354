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

// The manifest generated by the real npm tool is the root package's
// TestBrowserTrustedDocuments (make test-browser); these tests take
// GraphQL Codegen's format, whose ids are not the sha256 of the body
// (sha1 by default), and the manifest's own checks.

const (
	trustedRole    = "query Role {\n  viewer {\n    role\n  }\n}"
	trustedCompany = "query Company {\n  viewer {\n    account {\n      companyName\n    }\n  }\n}"
	// Codegen's default ids are sha1 of the body; any string is an id.
	roleID    = "c0ffee0000000000000000000000000000000001"
	companyID = "c0ffee0000000000000000000000000000000002"
)

func codegenManifest(t *testing.T) *gqlhttp.TrustedDocuments {
	t.Helper()
	m, err := gqlhttp.ParseTrustedDocuments(body(t, map[string]string{roleID: trustedRole, companyID: trustedCompany}))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// trustedEnv is a server with the manifest and a sender of operations by
// id (POST or GET) or as text.
type trustedEnv struct {
	e *testkit.Env
}

func newTrustedEnv(t *testing.T, m *gqlhttp.TrustedDocuments) trustedEnv {
	hc := gqlhttp.DefaultHandlerConfig
	hc.Trusted = m
	return trustedEnv{testkit.New(t, testkit.Options{Shipments: 2, Handler: &hc})}
}

func (te trustedEnv) byID(t *testing.T, via, who, id, accept string) (int, *testkit.Result) {
	t.Helper()
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": id}}
	var req *http.Request
	if via == "GET" {
		req = te.e.NewRequest(t, http.MethodGet, te.e.Key(t, who), url.Values{"extensions": {string(body(t, ext))}}.Encode(), nil)
	} else {
		req = te.e.NewRequest(t, http.MethodPost, te.e.Key(t, who), "", body(t, map[string]any{"extensions": ext}))
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	r := te.e.HTTP(t, req)
	return r.Status, r.JSON(t)
}

func (te trustedEnv) text(t *testing.T, who, query string) *testkit.Result {
	t.Helper()
	r := te.e.HTTP(t, te.e.NewRequest(t, http.MethodPost, te.e.Key(t, who), "", body(t, map[string]any{"query": query})))
	if r.Status != http.StatusOK {
		t.Fatalf("%q: status %d %s", query, r.Status, r.Body)
	}
	return r.JSON(t)
}

func ran(res *testkit.Result, want string) bool {
	return len(res.Errors) == 0 && strings.Contains(string(res.Data), want)
}

// Without GRAPHQL_TRUSTED_ONLY the manifest answers its ids and everything
// else runs as before: documents as text, automatic persisted queries.
func TestTrustedDocumentsServed(t *testing.T) {
	te := newTrustedEnv(t, codegenManifest(t))
	for _, via := range []string{"POST", "GET"} {
		if _, res := te.byID(t, via, "acme/viewer", roleID, ""); !ran(res, `"VIEWER"`) {
			t.Errorf("%s by id: %s", via, res)
		}
		if _, res := te.byID(t, via, "acme/viewer", companyID, ""); !ran(res, "Acme") {
			t.Errorf("%s by id: %s", via, res)
		}
	}
	// An id the manifest does not hold is APQ's: not found until sent
	// with its text.
	if _, res := te.byID(t, "POST", "acme/viewer", strings.Repeat("ab", 32), ""); !testkit.CodesEqual(res.Codes(), "PERSISTED_QUERY_NOT_FOUND") {
		t.Errorf("unknown id: %s", res)
	}
	if res := te.text(t, "acme/viewer", `{ viewer { account { id } } }`); len(res.Errors) > 0 {
		t.Errorf("a document as text: %s", res)
	}
}

// With GRAPHQL_TRUSTED_ONLY only the manifest's operations run, by id or
// as their exact text; anything else is refused with its code before a
// resolver runs; admin keys are exempt only when the setting says so.
func TestTrustedDocumentsOnly(t *testing.T) {
	m := codegenManifest(t)
	m.Only = true
	te := newTrustedEnv(t, m)
	for _, via := range []string{"POST", "GET"} {
		if _, res := te.byID(t, via, "acme/member", roleID, ""); !ran(res, `"MEMBER"`) {
			t.Errorf("%s by id: %s", via, res)
		}
		status, res := te.byID(t, via, "acme/member", strings.Repeat("ab", 32), "")
		if status != http.StatusOK {
			t.Errorf("%s unknown id, application/json: status %d", via, status)
		}
		testkit.Refused(t, via+" unknown id", res, gqlhttp.CodeNotInList)
		status, res = te.byID(t, via, "acme/member", strings.Repeat("ab", 32), "application/graphql-response+json")
		if status != http.StatusBadRequest || !testkit.CodesEqual(res.Codes(), gqlhttp.CodeNotInList) {
			t.Errorf("%s unknown id, graphql-response+json: %d %s", via, status, res)
		}
	}
	// The exact text of a trusted operation is trusted; any other text,
	// even the same operation spelt otherwise, and introspection are not.
	if res := te.text(t, "acme/member", trustedCompany); !ran(res, "Acme") {
		t.Errorf("a trusted document as text: %s", res)
	}
	for _, q := range []string{`{ viewer { role } }`, `{ __schema { queryType { name } } }`, strings.ReplaceAll(trustedRole, "\n", " ")} {
		testkit.Refused(t, q, te.text(t, "acme/member", q), gqlhttp.CodeNotInSafelist)
		testkit.Refused(t, q+" (admin, not exempt)", te.text(t, "acme/admin", q), gqlhttp.CodeNotInSafelist)
	}
	// APQ cannot register a document past the list either.
	q := `{ viewer { role } }`
	sum := sha256.Sum256([]byte(q))
	reg := map[string]any{"query": q, "extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}}
	res := te.e.HTTP(t, te.e.NewRequest(t, http.MethodPost, te.e.Key(t, "acme/member"), "", body(t, reg))).JSON(t)
	testkit.Refused(t, "APQ registration", res, gqlhttp.CodeNotInSafelist)
	if _, res := te.byID(t, "POST", "acme/member", hex.EncodeToString(sum[:]), ""); !testkit.CodesEqual(res.Codes(), gqlhttp.CodeNotInList) {
		t.Errorf("the refused registration's id: %s", res)
	}

	m.ExemptAdmin = true // read per request
	if res := te.text(t, "acme/admin", q); !ran(res, `"ADMIN"`) {
		t.Errorf("exempt admin, a document as text: %s", res)
	}
	testkit.Refused(t, "member while admins are exempt", te.text(t, "acme/member", q), gqlhttp.CodeNotInSafelist)
}

// A manifest is checked whole when it loads: its format, and each
// operation against the schema.
func TestTrustedDocumentsManifest(t *testing.T) {
	apollo := func(ops ...map[string]string) []byte {
		return body(t, map[string]any{"format": "apollo-persisted-query-manifest", "version": 1, "operations": ops})
	}
	m, err := gqlhttp.ParseTrustedDocuments(apollo(map[string]string{"id": "a", "body": trustedRole, "name": "Role", "type": "query"}))
	if err != nil || m.Len() != 1 {
		t.Fatalf("an Apollo manifest: %v", err)
	}
	for name, b := range map[string][]byte{
		"not JSON":         []byte(`[`),
		"an array":         []byte(`[{"id":"a"}]`),
		"other format":     body(t, map[string]any{"format": "relay", "version": 1, "operations": []any{}}),
		"version 2":        body(t, map[string]any{"format": "apollo-persisted-query-manifest", "version": 2}),
		"empty":            apollo(),
		"no body":          apollo(map[string]string{"id": "a"}),
		"unknown field":    apollo(map[string]string{"id": "a", "body": `{ viewer { nope } }`}),
		"does not parse":   body(t, map[string]string{"a": `{ viewer {`}),
		"codegen non-text": []byte(`{"a": 1}`),
	} {
		if _, err := gqlhttp.ParseTrustedDocuments(b); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	if _, err := gqlhttp.LoadTrustedDocuments(t.TempDir() + "/none.json"); err == nil || !strings.Contains(err.Error(), "GRAPHQL_TRUSTED_DOCUMENTS") {
		t.Errorf("a missing file: %v", err)
	}
}

// byDocumentID sends a GraphQL-over-HTTP persisted document request
// (documentId in the POST body or the GET query string).
func (te trustedEnv) byDocumentID(t *testing.T, via, who, id string, header ...string) *testkit.HTTPResponse {
	t.Helper()
	var req *http.Request
	if via == "GET" {
		req = te.e.NewRequest(t, http.MethodGet, te.e.Key(t, who), url.Values{"documentId": {id}}.Encode(), nil)
	} else {
		req = te.e.NewRequest(t, http.MethodPost, te.e.Key(t, who), "", body(t, map[string]any{"documentId": id}))
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return te.e.HTTP(t, req)
}

// A persisted document request as the GraphQL-over-HTTP spec words it
// (Appendix A: documentId, "sha256:<hex>" or a custom id) is served as
// Apollo's extension is: from the manifest, else from APQ's cache; an
// unknown id is the same error (PERSISTED_QUERY_NOT_FOUND, or
// PERSISTED_QUERY_NOT_IN_LIST with GRAPHQL_TRUSTED_ONLY); a query over GET
// carries an ETag and answers If-None-Match with a 304.
func TestDocumentID(t *testing.T) {
	sum := sha256.Sum256([]byte(trustedRole))
	roleHex := hex.EncodeToString(sum[:])
	// The viewer's role reads no logged table: its answer has no ETag;
	// a page of shipments has.
	ships := "query Ships {\n  shipments(first: 2) {\n    nodes {\n      id\n    }\n  }\n}"
	sum = sha256.Sum256([]byte(ships))
	shipsHex := hex.EncodeToString(sum[:])
	m, err := gqlhttp.ParseTrustedDocuments(body(t, map[string]string{roleHex: trustedRole, companyID: trustedCompany, shipsHex: ships}))
	if err != nil {
		t.Fatal(err)
	}
	te := newTrustedEnv(t, m)
	unknown := strings.Repeat("ab", 32)
	for _, via := range []string{"POST", "GET"} {
		for _, id := range []string{"sha256:" + roleHex, roleHex} {
			r := te.byDocumentID(t, via, "acme/viewer", id)
			if res := r.JSON(t); r.Status != http.StatusOK || !ran(res, `"VIEWER"`) {
				t.Errorf("%s documentId %s: %d %s", via, id, r.Status, res)
			}
		}
		// A custom id (no colon), as the manifest names it.
		if res := te.byDocumentID(t, via, "acme/viewer", companyID).JSON(t); !ran(res, "Acme") {
			t.Errorf("%s custom documentId: %s", via, res)
		}
		// Unknown: the error Apollo's extension gets.
		_, ext := te.byID(t, via, "acme/viewer", unknown, "")
		res := te.byDocumentID(t, via, "acme/viewer", "sha256:"+unknown).JSON(t)
		if !testkit.CodesEqual(res.Codes(), "PERSISTED_QUERY_NOT_FOUND") || !testkit.CodesEqual(ext.Codes(), res.Codes()...) || res.Errors[0].Message != ext.Errors[0].Message {
			t.Errorf("%s unknown documentId: %s (the extension: %s)", via, res, ext)
		}
		// Malformed or contradictory requests are 400s.
		for what, r := range map[string]*testkit.HTTPResponse{
			"sha256 not hex": te.byDocumentID(t, via, "acme/viewer", "sha256:"+strings.ToUpper(roleHex)),
			"sha256 short":   te.byDocumentID(t, via, "acme/viewer", "sha256:abc"),
		} {
			if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "documentId") {
				t.Errorf("%s %s: %d %s", via, what, r.Status, r.Body)
			}
		}
	}
	both := te.e.HTTP(t, te.e.NewRequest(t, http.MethodPost, te.e.Key(t, "acme/viewer"), "", body(t, map[string]any{"documentId": roleHex, "query": trustedRole})))
	if both.Status != http.StatusBadRequest {
		t.Errorf("query and documentId: %d %s", both.Status, both.Body)
	}
	other := te.e.HTTP(t, te.e.NewRequest(t, http.MethodPost, te.e.Key(t, "acme/viewer"), "", body(t, map[string]any{"documentId": roleHex,
		"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": unknown}}})))
	if other.Status != http.StatusBadRequest {
		t.Errorf("documentId and another extension id: %d %s", other.Status, other.Body)
	}

	// Cacheable over GET: an ETag, then a 304 for it.
	first := te.byDocumentID(t, "GET", "acme/viewer", "sha256:"+shipsHex)
	etag := first.Header.Get("ETag")
	if first.Status != http.StatusOK || etag == "" || first.Header.Get("Cache-Control") != "private, no-cache" {
		t.Fatalf("GET documentId: %d ETag %q Cache-Control %q", first.Status, etag, first.Header.Get("Cache-Control"))
	}
	if !strings.Contains(string(first.Body), `"nodes"`) {
		t.Fatalf("GET documentId: %s", first.Body)
	}
	if r := te.byDocumentID(t, "GET", "acme/viewer", "sha256:"+shipsHex, "If-None-Match", etag); r.Status != http.StatusNotModified || len(r.Body) != 0 {
		t.Errorf("GET documentId with If-None-Match: %d %s", r.Status, r.Body)
	}

	// Trusted documents only: an unknown documentId is not in the list.
	m.Only = true
	for _, via := range []string{"POST", "GET"} {
		testkit.Refused(t, via+" unknown documentId, trusted only", te.byDocumentID(t, via, "acme/member", "sha256:"+unknown).JSON(t), gqlhttp.CodeNotInList)
		if res := te.byDocumentID(t, via, "acme/member", "sha256:"+roleHex).JSON(t); !ran(res, `"MEMBER"`) {
			t.Errorf("%s documentId, trusted only: %s", via, res)
		}
	}
}
