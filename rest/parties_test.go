package rest_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

func partyBody(name any) map[string]any {
	return resource("party", map[string]any{"company_name": name})
}

// TestParties: create (201, Location, the OpenAPI's shape), get and list
// (the account's parties only), a duplicate name in any case and a blank
// one are 422s at company_name, a viewer's create is 403, no key 401, and
// another account's party is a 404 like an unknown id.
func TestParties(t *testing.T) {
	e := newEnv(t, envOptions{})

	r := e.do("acme/member", "POST", "/v2/parties", partyBody("  Sodor Steamworks "))
	data := obj(wantDocument(t, r, http.StatusCreated, "post-parties-201"), "data")
	id, _ := data["id"].(string)
	if data["type"] != "party" || obj(data, "attributes")["company_name"] != "Sodor Steamworks" ||
		r.header.Get("Location") != publicBase+"/v2/parties/"+id {
		t.Errorf("created party: %s (Location %q)", r.body, r.header.Get("Location"))
	}

	g := e.do("acme/viewer", "GET", "/v2/parties/"+id, nil)
	if obj(wantDocument(t, g, http.StatusOK, "get-party-200"), "data")["id"] != id {
		t.Errorf("get: %s", g.body)
	}
	l := e.do("acme/viewer", "GET", "/v2/parties?page[size]=10", nil)
	if list := wantDocument(t, l, http.StatusOK, "get-parties-200")["data"].([]any); len(list) != 1 || list[0].(map[string]any)["id"] != id {
		t.Errorf("acme's parties: %s", l.body)
	}

	// Tenant isolation: globex sees none of acme's parties.
	if list := e.getAs("globex/admin", "/v2/parties")["data"].([]any); len(list) != 0 {
		t.Errorf("globex lists acme's parties: %v", list)
	}
	other := e.do("globex/admin", "GET", "/v2/parties/"+id, nil)
	wantError(t, other, http.StatusNotFound, "", "")
	unknown := e.do("globex/admin", "GET", "/v2/parties/00000000-0000-4000-8000-000000000000", nil)
	if string(other.body) != string(unknown.body) {
		t.Errorf("another account's party answers\n%s\nan unknown one\n%s", other.body, unknown.body)
	}
	// The same name in another account is no duplicate.
	if r := e.do("globex/admin", "POST", "/v2/parties", partyBody("Sodor Steamworks")); r.status != http.StatusCreated {
		t.Errorf("globex's create: %d\n%s", r.status, r.body)
	}

	for _, c := range []struct {
		body any
		who  string
	}{
		{partyBody("SODOR steamworks"), "acme/admin"},
		{partyBody("   "), "acme/admin"},
		{partyBody(nil), "acme/member"},
		{partyBody(42), "acme/member"},
		{partyBody(string(make([]rune, 256))), "acme/member"},
	} {
		r := e.do(c.who, "POST", "/v2/parties", c.body)
		wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/data/attributes/company_name")
		validate(t, "post-parties-422", r.body)
	}
	wantError(t, e.do("acme/viewer", "POST", "/v2/parties", partyBody("Viewer Co")), http.StatusForbidden, "", "")
	wantError(t, e.do("", "POST", "/v2/parties", partyBody("Nobody Co")), http.StatusUnauthorized, "", "")
	wantError(t, e.do("", "GET", "/v2/parties", nil), http.StatusUnauthorized, "", "")
	wantError(t, e.do("", "GET", "/v2/parties/"+id, nil), http.StatusUnauthorized, "", "")
	for _, path := range []string{"/v2/parties/not-a-uuid", "/v2/parties?page[size]=0", "/v2/parties?page[number]=-1", "/v2/parties?include=x"} {
		if r := e.do("acme/admin", "GET", path, nil); r.status >= 500 {
			t.Errorf("GET %s: %d", path, r.status)
		}
	}
	if list := e.getAs("acme/admin", "/v2/parties")["data"].([]any); len(list) != 1 {
		t.Errorf("after the refused creates acme has %d parties, want 1", len(list))
	}
}

// TestPartyUpdate: PATCH /v2/parties/{id} renames a party (200 in the
// OpenAPI document's shape), by the create's rules (422 at company_name in
// its shape: blank, a duplicate in any case, not a string, a bidi control,
// another attribute); a viewer is 403, another account's party 404.
func TestPartyUpdate(t *testing.T) {
	e := newEnv(t, envOptions{})
	create := func(who, name string) string {
		t.Helper()
		r := e.do(who, "POST", "/v2/parties", partyBody(name))
		if r.status != http.StatusCreated {
			t.Fatalf("create: %d\n%s", r.status, r.body)
		}
		return obj(r.json(t), "data")["id"].(string)
	}
	id, other := create("acme/member", "Sodor Steamworks"), create("acme/member", "Knapford Freight")
	theirs := create("globex/admin", "Globex Party")
	self := "/v2/parties/" + id

	r := e.do("acme/member", "PATCH", self, partyBody("  Sodor Steam Works "))
	if a := obj(wantDocument(t, r, http.StatusOK, "patch-party-200"), "data", "attributes"); a["company_name"] != "Sodor Steam Works" {
		t.Errorf("renamed: %s", r.body)
	}
	if a := obj(e.get(self), "data", "attributes"); a["company_name"] != "Sodor Steam Works" {
		t.Errorf("read back: %v", a)
	}
	// Its own name again, in another case: no duplicate of itself.
	if r := e.do("acme/admin", "PATCH", self, partyBody("SODOR STEAM WORKS")); r.status != http.StatusOK {
		t.Errorf("its own name in upper case: %d %s", r.status, r.body)
	}
	for _, body := range []any{
		partyBody("knapford FREIGHT"), partyBody(" "), partyBody(nil), partyBody(7), partyBody("A\u202eB"),
		resource("party", map[string]any{"company_name": "X", "created_at": "2020-01-01T00:00:00Z"}),
		`{"data":{"type":"party","attributes":{"company_name":"Sodor \ud800"}}}`,
	} {
		r := e.do("acme/member", "PATCH", self, body)
		member := "/data/attributes/company_name"
		if m, ok := body.(map[string]any); ok && len(obj(m, "data", "attributes")) == 2 {
			member = "/data/attributes/created_at"
		}
		wantError(t, r, http.StatusUnprocessableEntity, "pointer", member)
		validate(t, "patch-party-422", r.body)
	}
	wantError(t, e.do("acme/viewer", "PATCH", self, partyBody("Viewer Co")), http.StatusForbidden, "", "")
	wantError(t, e.do("", "PATCH", self, partyBody("Nobody Co")), http.StatusUnauthorized, "", "")
	wantError(t, e.do("acme/admin", "PATCH", "/v2/parties/"+theirs, partyBody("Mine now")), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/admin", "PATCH", "/v2/parties/00000000-0000-4000-8000-000000000000", partyBody("x")), http.StatusNotFound, "", "")
	if a := obj(e.getAs("globex/admin", "/v2/parties/"+theirs), "data", "attributes"); a["company_name"] != "Globex Party" {
		t.Errorf("globex's party: %v", a)
	}
	if a := obj(e.get("/v2/parties/"+other), "data", "attributes"); a["company_name"] != "Knapford Freight" {
		t.Errorf("the other party: %v", a)
	}
}

// TestContainerUpdate: PATCH /v2/containers/{id} sets ref_numbers (200 in
// the shape of the OpenAPI document's patch-containers-id), null clears
// them; a null member, another attribute or a control character is a 422
// at its member; a viewer is 403, another account's container 404.
func TestContainerUpdate(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.firstID("/v2/containers?page[size]=1")
	theirs := e.firstIDAs("globex/admin", "/v2/containers?page[size]=1")
	self := "/v2/containers/" + id
	body := func(attrs map[string]any) map[string]any {
		return map[string]any{"data": map[string]any{"type": "container", "attributes": attrs}}
	}
	r := e.do("acme/member", "PATCH", self, body(map[string]any{"ref_numbers": []string{"REF-1", " REF-2 ", "REF-1"}}))
	if a := obj(wantDocument(t, r, http.StatusOK, "patch-container-200"), "data", "attributes"); !equalList(a["ref_numbers"], "REF-1", "REF-2") {
		t.Errorf("PATCH: %s", r.body)
	}
	if a := obj(e.get(self), "data", "attributes"); !equalList(a["ref_numbers"], "REF-1", "REF-2") {
		t.Errorf("read back: %v", a)
	}
	for _, c := range []struct {
		body   any
		member string
	}{
		{`{"data":{"type":"container","attributes":{"ref_numbers":["REF-3",null]}}}`, "ref_numbers"},
		{body(map[string]any{"ref_numbers": "REF-3"}), "ref_numbers"},
		{body(map[string]any{"ref_numbers": []string{"A\x01B"}}), "ref_numbers"},
		{body(map[string]any{"number": "MSCU1234566"}), "number"},
	} {
		wantError(t, e.do("acme/member", "PATCH", self, c.body), http.StatusUnprocessableEntity, "pointer", "/data/attributes/"+c.member)
	}
	if a := obj(e.get(self), "data", "attributes"); !equalList(a["ref_numbers"], "REF-1", "REF-2") {
		t.Errorf("after refused PATCHes: %v", a)
	}
	r = e.do("acme/admin", "PATCH", self, body(map[string]any{"ref_numbers": nil}))
	if r.status != http.StatusOK {
		t.Fatalf("clear: %d %s", r.status, r.body)
	}
	if a := obj(r.json(t), "data", "attributes"); !equalList(a["ref_numbers"]) {
		t.Errorf("clear: %d %s", r.status, r.body)
	}
	validate(t, "patch-container-200", r.body)
	wantError(t, e.do("acme/viewer", "PATCH", self, body(map[string]any{"ref_numbers": []string{"V"}})), http.StatusForbidden, "", "")
	wantError(t, e.do("", "PATCH", self, body(map[string]any{"ref_numbers": []string{"V"}})), http.StatusUnauthorized, "", "")
	wantError(t, e.do("acme/admin", "PATCH", "/v2/containers/"+theirs, body(map[string]any{"ref_numbers": []string{"X"}})), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/admin", "PATCH", "/v2/containers/"+theirs, body(map[string]any{"number": 1})), http.StatusNotFound, "", "")
}

// TestTrackingRequestCustomer: a tracking request created with a customer
// (data.relationships.customer, as the OpenAPI's example) links it and
// includes it; another account's party or another type is a 422 at the
// relationship.
func TestTrackingRequestCustomer(t *testing.T) {
	e := newEnv(t, envOptions{})
	party := obj(e.do("acme/admin", "POST", "/v2/parties", partyBody("Customer Co")).json(t), "data")["id"].(string)
	theirs := obj(e.do("globex/admin", "POST", "/v2/parties", partyBody("Theirs Co")).json(t), "data")["id"].(string)
	req := func(number string, customer any) map[string]any {
		return map[string]any{"data": map[string]any{"type": "tracking_request",
			"attributes":    map[string]any{"request_type": "bill_of_lading", "request_number": number, "scac": "MSCU"},
			"relationships": map[string]any{"customer": map[string]any{"data": customer}}}}
	}
	r := e.do("acme/member", "POST", "/v2/tracking_requests?include=customer", req("MEDUFR030802", map[string]any{"type": "party", "id": party}))
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d\n%s", r.status, r.body)
	}
	// The OpenAPI's included of this response lists accounts and shipping
	// lines only: the party is checked against the party schema.
	doc := r.json(t)
	if obj(doc, "data", "relationships", "customer", "data")["id"] != party {
		t.Errorf("customer linkage: %s", r.body)
	}
	inc, _ := doc["included"].([]any)
	if len(inc) != 1 || obj(inc[0])["type"] != "party" || obj(inc[0], "attributes")["company_name"] != "Customer Co" {
		t.Fatalf("included customer: %v", inc)
	}
	b, _ := json.Marshal(inc[0])
	validate(t, "party", b)
	id := obj(doc, "data")["id"].(string)
	got := e.getAs("acme/viewer", "/v2/tracking_requests/"+id+"?include=customer")
	if obj(got, "data", "relationships", "customer", "data")["id"] != party {
		t.Errorf("read back: %v", got)
	}
	// No customer: null linkage.
	r = e.do("acme/member", "POST", "/v2/tracking_requests", req("MEDUFR030803", nil))
	if r.status != http.StatusCreated || obj(r.json(t), "data", "relationships", "customer")["data"] != nil {
		t.Errorf("create without customer: %d\n%s", r.status, r.body)
	}
	validate(t, "post-tracking-requests-201", r.body)
	for _, c := range []any{map[string]any{"type": "party", "id": theirs}, map[string]any{"type": "party", "id": "nope"},
		map[string]any{"type": "shipment", "id": party}} {
		r := e.do("acme/member", "POST", "/v2/tracking_requests", req("MEDUFR030804", c))
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("customer %v: %d, want 422\n%s", c, r.status, r.body)
		}
	}
}
