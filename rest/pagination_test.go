package rest_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestWalkNextLinks follows links.next from the first page of each list to
// the end: every record comes exactly once, and the count is meta.total.
func TestWalkNextLinks(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	for _, start := range []string{
		"/v2/documents?page[size]=3",
		"/v2/documents?page[size]=7&sort=document_type",
		"/v2/documents?page[size]=7&sort=-added_by",
		"/v2/documents?page[size]=2&filter[document_types]=bill_of_lading,packing_list&include=shipments",
		"/v2/shipments?page[size]=8",
		"/v2/shipments?page[size]=8&sort=-pod_eta_at",
		"/v2/containers?page[size]=9",
		"/v2/containers?page[size]=9&sort=pickup_lfd",
		"/v2/custom_field_definitions?page[size]=3",
		"/v2/custom_field_definitions/" + f.enumDefinition + "/options?page[size]=1",
		"/v2/shipments/" + f.fieldsShipment + "/custom_fields?page[size]=2",
		"/v2/tracking_requests?page[size]=7",
		"/v2/tracking_requests?page[size]=5&sort=updated_at&filter[status]=created&include=tracked_object",
	} {
		seen := map[string]bool{}
		next := publicBase + start
		var total, pages int
		var first string
		for next != "" {
			pages++
			if pages > 100 {
				t.Fatalf("%s: more than 100 pages", start)
			}
			r := e.do("acme/viewer", "GET", strings.TrimPrefix(next, publicBase), nil)
			if r.status != http.StatusOK {
				t.Fatalf("GET %s: %d\n%s", next, r.status, r.body)
			}
			doc := r.json(t)
			links, meta := obj(doc, "links"), obj(doc, "meta")
			if pages == 1 {
				first = links["first"].(string)
				if _, ok := links["prev"]; ok {
					t.Errorf("%s: first page has a prev link", start)
				}
			} else if links["prev"] == nil || links["first"] != first {
				t.Errorf("%s page %d: links %v", start, pages, links)
			}
			total = int(meta["total"].(float64))
			for _, d := range doc["data"].([]any) {
				id := d.(map[string]any)["id"].(string)
				if seen[id] {
					t.Errorf("%s: %s on two pages", start, id)
				}
				seen[id] = true
			}
			next, _ = links["next"].(string)
			if next == "" && links["last"] != links["self"] && pages > 1 {
				// The last page is where next ends.
				t.Errorf("%s: no next link on page %d but last is %v", start, pages, links["last"])
			}
		}
		if len(seen) != total || total == 0 {
			t.Errorf("%s: walked %d records in %d pages, meta.total %d", start, len(seen), pages, total)
		}
	}
}

// TestLinksFromRequest: without PUBLIC_BASE_URL, links use the host the
// request came to.
func TestLinksFromRequest(t *testing.T) {
	e := newEnv(t, envOptions{requestBase: true})
	doc := e.get("/v2/shipments?page[size]=1")
	self := obj(doc, "links")["self"].(string)
	if want := e.srv.URL + "/v2/shipments?page[size]=1"; self != want {
		t.Errorf("self %q, want %q", self, want)
	}
	res := doc["data"].([]any)[0].(map[string]any)
	if s := obj(res, "links")["self"].(string); !strings.HasPrefix(s, e.srv.URL+"/v2/shipments/") {
		t.Errorf("resource link %q", s)
	}
	r := e.do("acme/admin", "GET", "/v2/shipments?page[size]=1", nil, "X-Forwarded-Proto", "https")
	if self := obj(r.json(t), "links")["self"].(string); !strings.HasPrefix(self, "https://") {
		t.Errorf("behind a TLS proxy: %q", self)
	}
}

// TestIncludedOnlyWhenAsked: no include, no included member; an include
// that reaches nothing gives included: [].
func TestIncludedOnlyWhenAsked(t *testing.T) {
	e := newEnv(t, envOptions{})
	if _, ok := e.get("/v2/documents?page[size]=2")["included"]; ok {
		t.Error("included without include")
	}
	if _, ok := e.get("/v2/documents?page[size]=2&include=")["included"]; ok {
		t.Error("included with an empty include")
	}
	inc, ok := e.get("/v2/containers?page[size]=2&include=raw_events&filter[number]=ZZZU0000000")["included"].([]any)
	if !ok || len(inc) != 0 {
		t.Errorf("include reaching nothing: %v", inc)
	}
}

// TestCursorLinks: next links carry page[after] beside page[number]; a
// walk forward and the prev links (page[before]) back from its last page
// see the same pages, and a page read from a cursor ignores page[number]
// (even one beyond the numbered bound), so following links costs the same
// at any depth.
func TestCursorLinks(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, start := range []string{
		"/v2/shipments?page[size]=4",
		"/v2/documents?page[size]=3&sort=document_type",
		"/v2/containers?page[size]=7&sort=-pickup_lfd",
	} {
		var forward [][]string
		var last map[string]any
		for next := publicBase + start; next != ""; {
			if len(forward) > 100 {
				t.Fatalf("%s: more than 100 pages", start)
			}
			doc := e.get(strings.TrimPrefix(next, publicBase))
			forward = append(forward, dataIDs(doc))
			last = obj(doc, "links")
			next, _ = last["next"].(string)
			if next != "" && (!strings.Contains(next, "page[after]=") || !strings.Contains(next, "page[number]="+strconv.Itoa(len(forward)+1))) {
				t.Fatalf("%s: next link %s carries no cursor or the wrong number", start, next)
			}
		}
		if len(forward) < 3 {
			t.Fatalf("%s: only %d pages", start, len(forward))
		}
		// Back from the last page through the prev links.
		for i, prev := len(forward)-2, last["prev"]; i >= 0; i-- {
			p, _ := prev.(string)
			if p == "" {
				t.Fatalf("%s: no prev link above page %d", start, i+1)
			}
			doc := e.get(strings.TrimPrefix(p, publicBase))
			if got := dataIDs(doc); !slices.Equal(got, forward[i]) {
				t.Errorf("%s: page %d backwards %v, forwards %v", start, i+1, got, forward[i])
			}
			prev = obj(doc, "links")["prev"]
		}
	}

	// page[number] only labels a cursor page: the bound of numbered pages
	// does not apply, and the page is the one after the cursor.
	doc := e.get("/v2/shipments?page[size]=2")
	next := obj(doc, "links")["next"].(string)
	cursor := next[strings.Index(next, "page[after]=")+len("page[after]="):]
	cursor = cursor[:strings.IndexByte(cursor, '&')]
	want := dataIDs(e.get(strings.TrimPrefix(next, publicBase)))
	deep := e.get("/v2/shipments?page[size]=2&page[number]=90000&page[after]=" + cursor)
	if got := dataIDs(deep); !slices.Equal(got, want) || len(got) == 0 {
		t.Errorf("cursor page labelled 90000: %v, want %v", got, want)
	}
	if p := obj(deep, "links")["prev"].(string); !strings.Contains(p, "page[number]=89999") || !strings.Contains(p, "page[before]=") {
		t.Errorf("prev of a cursor page: %s", p)
	}
}

// TestPageBounds: a numbered page may start at most model.MaxPageOffset
// records into a list; beyond, and for bad cursors, a JSON:API 400 names
// the parameter.
func TestPageBounds(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	if r := e.do("acme/admin", "GET", "/v2/documents?page[number]=3334&page[size]=30", nil); r.status != http.StatusOK {
		t.Errorf("page 3334 of 30 (offset 99,990): %d\n%s", r.status, r.body)
	}
	if r := e.do("acme/admin", "GET", "/v2/documents?page[number]=1001&page[size]=100", nil); r.status != http.StatusOK {
		t.Errorf("page 1001 of 100 (offset 100,000): %d\n%s", r.status, r.body)
	}
	for _, c := range []struct{ path, parameter string }{
		{"/v2/documents?page[number]=3335&page[size]=30", "page[number]"},
		{"/v2/shipments?page[number]=1002&page[size]=100", "page[number]"},
		{"/v2/containers?page[number]=100002&page[size]=1", "page[number]"},
		{"/v2/custom_field_definitions?page[number]=5000", "page[number]"},
		{"/v2/documents?page[after]=bm9wZQ", "page[after]"},
		{"/v2/documents?page[before]=", "page[before]"},
		{"/v2/shipments?page[after]=x&page[before]=y", "page[before]"},
		{"/v2/custom_field_definitions/" + f.enumDefinition + "/options?page[after]=x", "page[after]"},
	} {
		r := e.do("acme/admin", "GET", c.path, nil)
		wantError(t, r, http.StatusBadRequest, "parameter", c.parameter)
	}
	// A cursor taken with another sort is refused, not misapplied.
	next := obj(e.get("/v2/documents?page[size]=2"), "links")["next"].(string)
	r := e.do("acme/admin", "GET", strings.TrimPrefix(next, publicBase)+"&sort=document_type", nil)
	wantError(t, r, http.StatusBadRequest, "parameter", "page[after]")
}

func dataIDs(doc map[string]any) []string {
	var ids []string
	for _, d := range doc["data"].([]any) {
		ids = append(ids, d.(map[string]any)["id"].(string))
	}
	return ids
}
