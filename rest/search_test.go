package rest_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// searchAs is GET /v2/search?query=q with who's key; it checks the status
// and, for a 200, the OpenAPI's schema.
func searchAs(t *testing.T, e *env, who, q string) []map[string]any {
	t.Helper()
	r := e.do(who, "GET", "/v2/search?query="+url.QueryEscape(q), nil)
	if r.status != http.StatusOK {
		t.Fatalf("search %q: %d\n%s", q, r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	validate(t, "get-search-200", r.body)
	var out []map[string]any
	for _, d := range r.json(t)["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

// TestSearch finds shipments by bill of lading (whole, or any part of it),
// containers by number and records by reference number and tag, ranks
// shipments before containers before tracking requests, and folds accents
// and case: "MULLER suss" finds "Müller Süßwaren".
func TestSearch(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)

	hits := searchAs(t, e, "acme/viewer", f.bol)
	if len(hits) == 0 || hits[0]["id"] != f.shipment || hits[0]["type"] != "shipment" ||
		obj(hits[0], "attributes")["number"] != f.bol || obj(hits[0], "attributes")["entity_type"] != "shipment" {
		t.Fatalf("search by bill of lading %s: first hit %v, want shipment %s", f.bol, hits, f.shipment)
	}
	if n := obj(hits[0], "attributes")["containers_count"]; n == nil || n.(float64) < 2 {
		t.Errorf("containers_count %v, want the shipment's containers (>1)", n)
	}
	// An infix of the number (trigram index), lower-case.
	part := strings.ToLower(f.bol[3 : len(f.bol)-2])
	if !hasID(searchAs(t, e, "acme/viewer", part), f.shipment) {
		t.Errorf("search %q does not find shipment %s (%s)", part, f.shipment, f.bol)
	}
	// A container by number: a cargo whose shipment_id is its shipment.
	cargo := searchAs(t, e, "acme/viewer", f.containerNumber)
	if len(cargo) == 0 || cargo[0]["type"] != "cargo" || obj(cargo[0], "attributes")["number"] != f.containerNumber ||
		obj(cargo[0], "attributes")["shipment_id"] == nil {
		t.Errorf("search by container number %s: %v", f.containerNumber, cargo)
	}

	// Names: accents and case folded, words as prefixes in any order.
	ctx := context.Background()
	if _, err := e.store.SQL().ExecContext(ctx, `UPDATE shipments SET customer_name = 'Müller Süßwaren GmbH',
		ref_numbers = ARRAY['PO-ÆRØ-77'], tags = ARRAY['Crème brûlée'] WHERE id = $1`, f.shipment); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"Müller Süßwaren", "MULLER suss", "süßwaren müll", "aero-77", "PO ÆRØ", "creme BRULEE", "brûl"} {
		if !hasID(searchAs(t, e, "acme/viewer", q), f.shipment) {
			t.Errorf("search %q does not find the shipment of Müller Süßwaren GmbH", q)
		}
	}

	// Ranking: every shipment before every cargo before every tracking
	// request; a query that matches all three kinds (the shipment's number
	// prefix: its containers and requests share the line's prefix).
	kinds := map[string]int{"shipment": 0, "cargo": 1, "tracking_request": 2}
	for _, q := range []string{f.bol[:4], f.containerNumber[:4], "a"} {
		hits := searchAs(t, e, "acme/admin", q)
		if len(hits) > 25 {
			t.Errorf("search %q: %d results, want at most 25", q, len(hits))
		}
		for i := 1; i < len(hits); i++ {
			if kinds[hits[i-1]["type"].(string)] > kinds[hits[i]["type"].(string)] {
				t.Errorf("search %q: %s before %s", q, hits[i-1]["type"], hits[i]["type"])
			}
		}
	}

	// Nothing to search for: no letter or digit finds nothing (never
	// everything), and operators of tsquery or LIKE are plain text.
	for _, q := range []string{"--", "'", "%", "_", `\`, "&|!:*()<->", "   .  "} {
		if hits := searchAs(t, e, "acme/admin", q); len(hits) != 0 {
			t.Errorf("search %q: %d results, want none", q, len(hits))
		}
	}
}

func hasID(hits []map[string]any, id string) bool {
	for _, h := range hits {
		if h["id"] == id {
			return true
		}
	}
	return false
}

// TestSearchErrors: the query parameter is required (400 naming it, the
// OpenAPI's 400 shape), too long or not UTF-8 is a 400, no key is a 401,
// and another account's numbers find nothing.
func TestSearchErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	for _, path := range []string{"/v2/search", "/v2/search?query=", "/v2/search?query=%20%20",
		"/v2/search?query=" + strings.Repeat("x", 201), "/v2/search?query=%FF%FE", "/v2/search?query=a%00b",
		"/v2/search?query=a&query=b"} {
		r := e.do("acme/viewer", "GET", path, nil)
		wantError(t, r, http.StatusBadRequest, "parameter", "query")
		validate(t, "get-search-400", r.body)
	}
	r := e.do("", "GET", "/v2/search?query="+f.bol, nil)
	wantError(t, r, http.StatusUnauthorized, "", "")
	if r := e.do("acme/admin", "POST", "/v2/search?query=x", nil); r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST /v2/search: %d, want 405", r.status)
	}
	// Tenant isolation: globex finds none of acme's records by their
	// numbers, and acme finds its own.
	for _, q := range []string{f.bol, f.containerNumber} {
		if hits := searchAs(t, e, "globex/admin", q); hasID(hits, f.shipment) || hasID(hits, f.container) {
			t.Errorf("globex's search %q finds acme's records: %v", q, hits)
		}
	}
	g := findFixturesOf(t, e, "globex")
	for _, h := range searchAs(t, e, "acme/admin", g.bol) {
		if h["id"] == g.shipment {
			t.Errorf("acme's search finds globex's shipment %s", g.shipment)
		}
	}
}
