package rest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"shipgraph/testkit/budgets"
)

// TestStatementCounts checks that includes batch: a page of 100 documents
// with their shipments and cargos costs the same number of SQL statements
// as a page of 10 — one per relationship, never one per document.
func TestStatementCounts(t *testing.T) {
	e := newEnv(t, envOptions{shipments: 400})
	count := func(path string) int64 {
		t.Helper()
		r := e.do("acme/admin", "GET", path, nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, r.status, r.body)
		}
		return r.queries
	}
	if n := len(e.get("/v2/documents?page[size]=100")["data"].([]any)); n != 100 {
		t.Fatalf("the test needs 100 documents in a page, the seed gives %d", n)
	}
	// Each case's budget is budgets.Max(path) (docs/scale.md's table).
	cases := []struct {
		path string
	}{
		// page, count, the included shipments and cargos; the shipments
		// carry their containers' linkage and the cargos their transport
		// and raw events' linkage in their own statements.
		{"/v2/documents?include=shipments,cargos&page[size]=%d"},
		// … and accounts, users, e-mails, representations.
		{"/v2/documents?include=shipments,cargos,account,user,email_submission,last_document_representation&page[size]=%d"},
		// page, count, shipments and cargos linkage.
		{"/v2/documents?page[size]=%d"},
		// page (with the containers' linkage), count.
		{"/v2/shipments?page[size]=%d"},
		// … ports (three relationships, one loader), terminals,
		// metro areas, rail terminals.
		// The included containers carry their transport and raw events
		// linkage in their own statement.
		{"/v2/shipments?include=containers,pod_terminal,port_of_lading,port_of_discharge,destination,destination_terminal&page[size]=%d"},
		// page, count; the included shipments, carrying their containers'
		// linkage; terminals (pod_terminal and pickup_facility share
		// the loader).
		// The transport and raw events linkage (ids only) comes in the
		// containers' statement.
		{"/v2/containers?page[size]=%d"},
		{"/v2/containers?include=shipment,pod_terminal,pickup_facility&page[size]=%d"},
		// Values: page, count (slug, data type and option labels come
		// with the page), the users reference values name (their
		// display values).
		{"/v2/custom_fields?page[size]=%d"},
		// page, count, documents (linkage and the default include),
		// their representations; then accounts and users.
		{"/v2/email_submissions?page[size]=%d"},
		{"/v2/email_submissions?include=account,user,documents.last_document_representation&page[size]=%d"},
		{"/v2/shipping_lines?page[size]=%d"},
	}
	for _, c := range cases {
		small, large := count(fmt.Sprintf(c.path, 10)), count(fmt.Sprintf(c.path, 100))
		t.Logf("%-125s size 10: %d statements, size 100: %d", strings.Replace(c.path, "%d", "N", 1), small, large)
		if small != large {
			t.Errorf("%s: %d statements for 10, %d for 100", c.path, small, large)
		}
		if want := int64(budgets.Max(c.path)); large > want {
			t.Errorf("%s: %d statements, want at most %d", c.path, large, want)
		}
	}
}
