package rest_test

import (
	"net/http"
	"testing"
)

// TestDocumentWrites: PATCH and DELETE /v2/documents/{id} and GET
// /v2/documents/types.
func TestDocumentWrites(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)

	r := e.do("acme/viewer", "GET", "/v2/documents/types", nil)
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("types: %d %s\n%s", r.status, r.header.Get("Content-Type"), r.body)
	}
	validate(t, "get-document-types-200", r.body)
	golden(t, "document_types", r)

	self := "/v2/documents/" + f.document
	r = e.do("acme/member", "PATCH", self+"?include=shipments", resource("document", map[string]any{"document_type_manual": " packing_list "}))
	if r.status != http.StatusOK {
		t.Fatalf("PATCH: %d\n%s", r.status, r.body)
	}
	validate(t, "patch-document-200", r.body)
	checkDocument(t, r)
	if a := obj(r.json(t), "data", "attributes"); a["document_type_manual"] != "packing_list" {
		t.Errorf("PATCH: %v", a)
	}
	// The manual type is what filter[document_types] matches too.
	found := false
	for _, d := range e.get("/v2/documents?filter[document_types]=packing_list&page[size]=100")["data"].([]any) {
		found = found || d.(map[string]any)["id"] == f.document
	}
	if !found {
		t.Errorf("filter[document_types] misses the manually typed document")
	}
	r = e.do("acme/member", "PATCH", self, resource("document", map[string]any{"document_type_manual": nil}))
	if a := obj(r.json(t), "data", "attributes"); r.status != http.StatusOK || a["document_type_manual"] != nil {
		t.Errorf("clear: %d %v", r.status, a)
	}
	for _, c := range []struct {
		attrs   map[string]any
		pointer string
	}{
		{map[string]any{"document_type_manual": "passport"}, "/data/attributes/document_type_manual"},
		{map[string]any{"document_type_manual": 5}, "/data/attributes/document_type_manual"},
		{map[string]any{"extracted_data_manual": map[string]any{"a": 1}}, "/data/attributes/extracted_data_manual"},
		{map[string]any{"name": "x"}, "/data/attributes/name"},
	} {
		wantError(t, e.do("acme/member", "PATCH", self, resource("document", c.attrs)), http.StatusUnprocessableEntity, "pointer", c.pointer)
	}

	// Delete: 204, then gone from GET, lists and its shipments.
	r = e.do("acme/member", "DELETE", self, nil)
	if r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Fatalf("DELETE: %d\n%s", r.status, r.body)
	}
	wantError(t, e.do("acme/member", "GET", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "DELETE", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "PATCH", self, resource("document", map[string]any{"document_type_manual": "other"})), http.StatusNotFound, "", "")
	for _, d := range e.get("/v2/documents?page[size]=100")["data"].([]any) {
		if d.(map[string]any)["id"] == f.document {
			t.Errorf("a deleted document is listed")
		}
	}
}
