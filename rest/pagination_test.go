package rest_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestWalkNextLinks follows links.next from the first page of each list to
// the end: every record comes exactly once, and the count is meta.total.
func TestWalkNextLinks(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	e := newEnv(t, envOptions{})
	if _, ok := e.get("/v2/documents?page[size]=2")["included"]; ok {
		t.Error("included without include")
	}
	if _, ok := e.get("/v2/documents?page[size]=2&include=")["included"]; ok {
		t.Error("included with an empty include")
	}
	inc, ok := e.get("/v2/containers?page[size]=2&include=raw_events")["included"].([]any)
	if !ok || len(inc) != 0 {
		t.Errorf("include reaching nothing: %v", inc)
	}
}
