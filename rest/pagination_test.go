package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
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

// dataIDs are the ids of a document's (or a relationship's) data list.
func dataIDs(doc map[string]any) []string {
	var ids []string
	for _, d := range doc["data"].([]any) {
		ids = append(ids, d.(map[string]any)["id"].(string))
	}
	return ids
}

// Sparse fieldsets: a resource of a type named by fields[TYPE] shows only
// the attributes and relationships listed, with the values the full
// response has (the store reads only their columns, so a missing column
// would show as a zero value here); other types are whole.
func TestSparseFieldsets(t *testing.T) {
	e := newEnv(t, envOptions{})

	cases := []struct {
		full, sparse string
		fields       map[string][]string // type → the members the sparse response keeps
	}{
		{
			"/v2/documents?include=shipments,cargos&page[size]=20",
			"/v2/documents?include=shipments,cargos&page[size]=20&fields[document]=name,file_name,shipments&fields[shipment]=bill_of_lading_number,pod_eta_at,containers&fields[container]=number,current_status,holds_at_pod_terminal,import_deadlines",
			map[string][]string{
				"document":  {"name", "file_name", "shipments"},
				"shipment":  {"bill_of_lading_number", "pod_eta_at", "containers"},
				"container": {"number", "current_status", "holds_at_pod_terminal", "import_deadlines"},
			},
		},
		{
			"/v2/shipments?include=pod_terminal,port_of_lading,containers&page[size]=30",
			"/v2/shipments?include=pod_terminal,port_of_lading,containers&page[size]=30&fields[shipment]=customer_name,pod_terminal&fields[terminal]=name,firms_code&fields[port]=code",
			map[string][]string{
				"shipment": {"customer_name", "pod_terminal"},
				"terminal": {"name", "firms_code"},
				"port":     {"code"},
			},
		},
		{
			"/v2/containers?include=shipment&page[size]=25",
			"/v2/containers?include=shipment&page[size]=25&fields[container]=number,shipment&fields[shipment]=",
			map[string][]string{"container": {"number", "shipment"}, "shipment": {}},
		},
	}
	for _, c := range cases {
		full, sparse := e.get(c.full), e.get(c.sparse)
		// Page links keep the fieldsets, so following them stays sparse.
		if links := obj(sparse, "links"); links != nil {
			if first, _ := links["first"].(string); !strings.Contains(first, "fields[") {
				t.Errorf("GET %s: first link %q lost the fieldsets", c.sparse, first)
			}
		}
		delete(full, "links")
		delete(sparse, "links")
		want := project(t, full, c.fields)
		if !reflect.DeepEqual(want, sparse) {
			t.Errorf("GET %s is not the projection of GET %s: %s", c.sparse, c.full, firstDifference(want, sparse))
		}
		// The projection is not vacuous: every kept member appears.
		seen := map[string]bool{}
		for _, r := range resources(sparse) {
			for _, part := range []string{"attributes", "relationships"} {
				for k := range obj(r, part) {
					seen[r["type"].(string)+"."+k] = true
				}
			}
		}
		for typ, names := range c.fields {
			for _, n := range names {
				if !seen[typ+"."+n] {
					t.Errorf("GET %s: no %s shows %s", c.sparse, typ, n)
				}
			}
		}
	}

	// A sparse response costs no more statements than the full one.
	full := e.do("acme/admin", "GET", cases[0].full, nil)
	sparse := e.do("acme/admin", "GET", cases[0].sparse, nil)
	if sparse.queries > full.queries {
		t.Errorf("sparse request: %d statements, full: %d", sparse.queries, full.queries)
	}

	for path, param := range map[string]string{
		"/v2/shipments?fields[nope]=a":                                   "fields[nope]",
		"/v2/shipments?fields[shipment]=number,not_a_field":              "fields[shipment]",
		"/v2/documents?fields[document]=name&fields[document]=file_name": "fields[document]",
	} {
		wantError(t, e.do("acme/admin", "GET", path, nil), http.StatusBadRequest, "parameter", param)
	}
}

// project keeps, in a full response, only the members fields lists for
// the resources of the types it names.
func project(t *testing.T, doc map[string]any, fields map[string][]string) map[string]any {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	for _, r := range resources(out) {
		keep, ok := fields[r["type"].(string)]
		if !ok {
			continue
		}
		for _, part := range []string{"attributes", "relationships"} {
			m := obj(r, part)
			for k := range m {
				if !slices.Contains(keep, k) {
					delete(m, k)
				}
			}
			if len(m) == 0 {
				delete(r, part)
			}
		}
	}
	return out
}

// primaryData is a document's primary data: its one resource or its list.
func primaryData(doc map[string]any) []map[string]any {
	var out []map[string]any
	switch d := doc["data"].(type) {
	case []any:
		for _, r := range d {
			out = append(out, r.(map[string]any))
		}
	case map[string]any:
		out = append(out, d)
	}
	return out
}

// resources are the primary and included resources of a document.
func resources(doc map[string]any) []map[string]any {
	out := primaryData(doc)
	inc, _ := doc["included"].([]any)
	for _, r := range inc {
		out = append(out, r.(map[string]any))
	}
	return out
}

// firstDifference describes the first resource (or top-level member) in
// which two documents differ.
func firstDifference(want, got map[string]any) string {
	w, g := resources(want), resources(got)
	if len(w) != len(g) {
		return fmt.Sprintf("%d resources, want %d", len(g), len(w))
	}
	for i := range w {
		if !reflect.DeepEqual(w[i], g[i]) {
			a, _ := json.Marshal(w[i])
			b, _ := json.Marshal(g[i])
			return fmt.Sprintf("resource %d:\nwant %s\n got %s", i, a, b)
		}
	}
	for k := range want {
		if !reflect.DeepEqual(want[k], got[k]) {
			return fmt.Sprintf("member %s: want %v, got %v", k, want[k], got[k])
		}
	}
	return "members missing from the response"
}
