package graph_test

import (
	"testing"
)

// TestSearchAndPartiesGraphQL: search(query:) answers what GET /v2/search
// does (one resolver), scoped to the account; parties are created by
// members (a viewer is FORBIDDEN), read back, counted, and invisible to
// another account; a tracking request's customer is its party.
func TestSearchAndPartiesGraphQL(t *testing.T) {
	t.Parallel()
	e := newWriteEnv(t)
	var bol, ship string
	e.SQL(t, &bol, `SELECT s.bill_of_lading_number FROM shipments s JOIN accounts a ON a.id = s.account_id
		WHERE a.slug = 'acme' ORDER BY s.created_at, s.id LIMIT 1`)
	e.SQL(t, &ship, `SELECT id::text FROM shipments WHERE bill_of_lading_number = $1`, bol)

	type hit struct{ ID, EntityType, Number string }
	var s struct{ Search []hit }
	e.Must(t, e.Key(t, acmeViewer), `query($q: String!) { search(query: $q) { id entityType number refNumbers createdAt } }`,
		map[string]any{"q": bol}, &s)
	if len(s.Search) == 0 || s.Search[0].ID != ship || s.Search[0].EntityType != "shipment" {
		t.Fatalf("search %s: %+v, want shipment %s first", bol, s.Search, ship)
	}
	e.Must(t, e.Key(t, globexAdmin), `query($q: String!) { search(query: $q) { id } }`, map[string]any{"q": bol}, &s)
	for _, h := range s.Search {
		if h.ID == ship {
			t.Errorf("globex's search finds acme's shipment")
		}
	}
	if res := e.Do(t, e.Key(t, acmeViewer), `{ search(query: "") { id } }`, nil); len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" {
		t.Errorf("empty query: %+v", res.Errors)
	}

	if res := e.Do(t, e.Key(t, acmeViewer), `mutation { createParty(input: {companyName: "Viewer Co"}) { id } }`, nil); len(res.Errors) != 1 || res.Errors[0].Code() != "FORBIDDEN" {
		t.Errorf("viewer's createParty: %+v", res.Errors)
	}
	var c struct {
		CreateParty struct{ ID, CompanyName string }
	}
	e.Must(t, e.Key(t, acmeMember), `mutation { createParty(input: {companyName: "Ärger GmbH"}) { id companyName } }`, nil, &c)
	if c.CreateParty.CompanyName != "Ärger GmbH" {
		t.Fatalf("createParty: %+v", c)
	}
	if res := e.Do(t, e.Key(t, acmeMember), `mutation { createParty(input: {companyName: "ärger gmbh"}) { id } }`, nil); len(res.Errors) != 1 || res.Errors[0].Code() != "CONFLICT" {
		t.Errorf("duplicate createParty: %+v", res.Errors)
	}
	var l struct {
		Parties struct {
			TotalCount int
			Nodes      []struct{ ID string }
		}
		Party *struct{ CompanyName string }
	}
	e.Must(t, e.Key(t, acmeViewer), `query($id: ID!) { parties(first: 10) { totalCount nodes { id } } party(id: $id) { companyName } }`,
		map[string]any{"id": c.CreateParty.ID}, &l)
	if l.Parties.TotalCount != 1 || len(l.Parties.Nodes) != 1 || l.Party == nil || l.Party.CompanyName != "Ärger GmbH" {
		t.Errorf("acme's parties: %+v", l)
	}
	e.Must(t, e.Key(t, globexAdmin), `query($id: ID!) { parties(first: 10) { totalCount nodes { id } } party(id: $id) { companyName } }`,
		map[string]any{"id": c.CreateParty.ID}, &l)
	if l.Parties.TotalCount != 0 || l.Party != nil {
		t.Errorf("globex sees acme's party: %+v", l)
	}

	var tr struct {
		CreateTrackingRequest struct {
			Customer *struct{ ID, CompanyName string }
		}
	}
	e.Must(t, e.Key(t, acmeMember), `mutation($c: ID) { createTrackingRequest(input: {requestType: "bill_of_lading", requestNumber: "MEDUFR030802",
		scac: "MSCU", customerId: $c}) { customer { id companyName } } }`, map[string]any{"c": c.CreateParty.ID}, &tr)
	if tr.CreateTrackingRequest.Customer == nil || tr.CreateTrackingRequest.Customer.ID != c.CreateParty.ID {
		t.Errorf("tracking request's customer: %+v", tr)
	}
}
