package rest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestTenantIsolation reads and writes acme's records with globex's keys:
// every one is a 404 that looks exactly like the 404 of an id that does
// not exist, and nothing changes. Reference data is shared.
func TestTenantIsolation(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, c := range []struct{ owner, intruder string }{{"acme", "globex"}, {"globex", "acme"}} {
		t.Run(c.intruder+" on "+c.owner, func(t *testing.T) { checkIsolation(t, e, c.owner, c.intruder) })
	}
}

func checkIsolation(t *testing.T, e *env, owner, intruder string) {
	f := findFixturesOf(t, e, owner)
	const unknown = "00000000-0000-4000-8000-000000000000"
	for _, c := range endpoints(f) {
		shared := strings.HasPrefix(c.path, "/v2/terminals/") || strings.HasPrefix(c.path, "/v2/ports/") ||
			strings.HasPrefix(c.path, "/v2/shipping_lines") || strings.HasPrefix(c.path, "/v2/metro_areas/") || c.path == "/v2/documents/types"
		isList := !c.write && strings.Count(c.path, "/") == 2 // GET /v2/documents
		for _, role := range []string{"admin", "member", "viewer"} {
			who := intruder + "/" + role
			if c.write && role == "viewer" {
				continue // 403 before anything is looked up
			}
			if c.method == "POST" && c.path == "/v2/custom_field_definitions" {
				continue // creates in the caller's own account
			}
			r := e.do(who, c.method, c.path, c.body)
			switch {
			case shared:
				if r.status != http.StatusOK {
					t.Errorf("%s %s %s: %d, want 200 (shared reference data)", who, c.method, c.path, r.status)
				}
			case isList:
				if r.status != http.StatusOK {
					t.Errorf("%s %s %s: %d", who, c.method, c.path, r.status)
				}
			default:
				wantError(t, r, http.StatusNotFound, "", "")
				// The same answer as for an id that does not exist.
				other := e.do(who, c.method, replaceIDs(c.path, f, unknown), replaceBodyIDs(c.body, f, unknown))
				if other.status != http.StatusNotFound || !bytes.Equal(r.body, other.body) {
					t.Errorf("%s %s %s: another account's record answers\n%s\nan unknown one\n%s", who, c.method, c.path, r.body, other.body)
				}
			}
		}
	}

	// Lists show only the caller's records.
	ownerIDs := map[string]bool{}
	for _, p := range []string{"/v2/email_submissions?page[size]=100", "/v2/custom_fields?page[size]=100", "/v2/documents?page[size]=100", "/v2/shipments?page[size]=100", "/v2/containers?page[size]=100", "/v2/custom_field_definitions"} {
		for _, d := range e.getAs(owner+"/viewer", p)["data"].([]any) {
			ownerIDs[d.(map[string]any)["id"].(string)] = true
		}
		data := e.getAs(intruder+"/viewer", p)["data"].([]any)
		if len(data) == 0 {
			t.Errorf("%s %s: empty", intruder, p)
		}
		for _, d := range data {
			if ownerIDs[d.(map[string]any)["id"].(string)] {
				t.Errorf("%s %s lists %s's %v", intruder, p, owner, d.(map[string]any)["id"])
			}
		}
	}
	// A filter on the owner's numbers finds nothing for the intruder.
	for _, p := range []string{"/v2/shipments?number=" + f.bol, "/v2/documents?filter[reference]=" + f.docBOL, "/v2/containers?filter[number]=" + f.containerNumber} {
		if n := len(e.getAs(owner+"/viewer", p)["data"].([]any)); n == 0 {
			t.Errorf("%s %s: finds nothing for the owner", owner, p)
		}
		if n := len(e.getAs(intruder+"/admin", p)["data"].([]any)); n != 0 {
			t.Errorf("%s %s: %d records", intruder, p, n)
		}
	}

	// Nothing was written: the owner still has its definitions, option,
	// values and their names.
	if d := e.getAs(owner+"/viewer", "/v2/custom_field_definitions/"+f.textDefinition); obj(d, "data", "attributes")["display_name"] == "Renamed!" {
		t.Errorf("%s renamed %s's definition", intruder, owner)
	}
	e.getAs(owner+"/viewer", "/v2/custom_fields/"+f.customField)
	if a := obj(e.getAs(owner+"/viewer", "/v2/documents/"+f.document), "data", "attributes"); a["document_type_manual"] == "other" {
		t.Errorf("%s changed %s's document", intruder, owner)
	}
	if a := obj(e.getAs(owner+"/viewer", "/v2/shipments/"+f.shipment), "data", "attributes"); a["line_tracking_stopped_reason"] == "cancelled_by_user" || slices.Contains(a["tags"].([]any), any("intruder")) {
		t.Errorf("%s changed %s's shipment: %v", intruder, owner, a)
	}
	e.getAs(owner+"/viewer", "/v2/shipments/"+f.fieldEntity+"/custom_fields/"+f.fieldSlug)
	e.getAs(owner+"/viewer", "/v2/custom_field_definitions/"+f.enumDefinition+"/options/"+f.option)
	opts := e.getAs(owner+"/viewer", "/v2/custom_field_definitions/"+f.enumDefinition+"/options")["data"].([]any)
	if len(opts) != 4 {
		t.Errorf("%s has %d options after %s's writes", owner, len(opts), intruder)
	}
	for _, o := range opts {
		if obj(o, "attributes")["label"] == "Normal!" || obj(o, "attributes")["value"] == "urgent" {
			t.Errorf("%s changed %s's options: %v", intruder, owner, o)
		}
	}
	for _, cf := range e.getAs(owner+"/viewer", "/v2/shipments/"+f.shipment+"/custom_fields")["data"].([]any) {
		if a := obj(cf, "attributes"); a["api_slug"] == "customer_po" && a["value"] == "PO-1" {
			t.Errorf("%s set %s's custom field", intruder, owner)
		}
	}
}

// replaceBodyIDs swaps the owner's ids in a write body for an unknown one
// (POST /v2/custom_fields names its shipment in the body).
func replaceBodyIDs(body any, f fixtures, unknown string) any {
	if body == nil {
		return nil
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	return replaceIDs(string(b), f, unknown)
}

// replaceIDs swaps acme's ids in a path for an unknown one.
func replaceIDs(path string, f fixtures, unknown string) string {
	for _, id := range []string{f.document, f.shipment, f.container, f.enumDefinition, f.option, f.customField, f.fieldEntity, f.textDefinition, f.emailSubmission} {
		path = strings.ReplaceAll(path, id, unknown)
	}
	return path
}
