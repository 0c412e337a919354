package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

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

// resources are the primary and included resources of a document.
func resources(doc map[string]any) []map[string]any {
	var out []map[string]any
	switch d := doc["data"].(type) {
	case []any:
		for _, r := range d {
			out = append(out, r.(map[string]any))
		}
	case map[string]any:
		out = append(out, d)
	}
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
