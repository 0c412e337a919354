// Package budgets is the one table of statement budgets: how many SQL
// statements (shipgraph_db_queries_total) a request or a poll may cost.
// The tests that count statements read their budget here (Max), and
// docs/scale.md's table is rendered from it (make budgets; a test fails
// when the doc differs), so the doc cannot fall behind the tests again.
// It imports nothing of ours: tests of every package, db's own included,
// may read it.
package budgets

import (
	"fmt"
	"strings"
)

// Budget is one request's (or job's) statement budget.
type Budget struct {
	// Key is how the test names it: a /v2 path with %d for the page
	// size, or a short name.
	Key string
	// Request is what the doc's table shows (markdown).
	Request string
	// Max is the most statements it may cost.
	Max int
	// Test is the test that holds it.
	Test string
	// Note says what the statements are, or what else the test holds.
	Note string
}

// All is the table, in the doc's order.
var All = []Budget{
	{Key: "dashboard", Request: "playground dashboard (`graph.DashboardQuery`), reference cache off", Max: 7, Test: "TestSeeded/DashboardStatements",
		Note: "page, count, custom fields and containers (one joint read), the users reference values name, terminals, ports; one to spare; equal at `first: 10` and `first: 100`"},
	{Key: "dashboard cached", Request: "the same, reference cache on (as the server runs)", Max: 4, Test: "TestSeeded/DashboardStatements",
		Note: "page, count, custom fields and containers in one joint read (3 with the key cached; 4 when the key is looked up)"},
	{Key: "wide query", Request: "every relationship of shipments, four levels deep (`wideQuery`)", Max: 29, Test: "TestSeeded/WideQueryStatements",
		Note: "one per relationship path, the page, its count and the key"},
	{Key: "/v2/documents?page[size]=%d", Request: "`/v2/documents`", Max: 3, Test: "TestStatementCounts",
		Note: "page, count, shipments and cargos linkage (one joint read)"},
	{Key: "/v2/documents?include=shipments,cargos&page[size]=%d", Request: "`/v2/documents?include=shipments,cargos`", Max: 3, Test: "TestStatementCounts",
		Note: "… the included shipments and cargos in one joint read (the shipments carry their containers' linkage, the cargos their events')"},
	{Key: "/v2/documents?include=shipments,cargos,account,user,email_submission,last_document_representation&page[size]=%d", Request: "`/v2/documents` with all six includes", Max: 7, Test: "TestStatementCounts",
		Note: "… accounts, users, e-mails, representations"},
	{Key: "/v2/shipments?page[size]=%d", Request: "`/v2/shipments`", Max: 2, Test: "TestStatementCounts", Note: "page (with the containers' linkage), count"},
	{Key: "/v2/shipments?include=containers,pod_terminal,port_of_lading,port_of_discharge,destination,destination_terminal&page[size]=%d", Request: "`/v2/shipments` with containers, terminals, ports, destination", Max: 7, Test: "TestStatementCounts",
		Note: "… containers, ports (one loader), terminals, metro areas, rail terminals"},
	{Key: "/v2/containers?page[size]=%d", Request: "`/v2/containers`", Max: 2, Test: "TestStatementCounts", Note: "page (with the events' linkage), count"},
	{Key: "/v2/containers?include=shipment,pod_terminal,pickup_facility&page[size]=%d", Request: "`/v2/containers?include=shipment,pod_terminal,pickup_facility`", Max: 4, Test: "TestStatementCounts",
		Note: "… shipments (with their containers' linkage), terminals"},
	{Key: "/v2/custom_fields?page[size]=%d", Request: "`/v2/custom_fields`", Max: 3, Test: "TestStatementCounts", Note: "page, count, the users reference values name"},
	{Key: "/v2/shipping_lines?page[size]=%d", Request: "`/v2/shipping_lines`", Max: 2, Test: "TestStatementCounts", Note: "page, count"},
	{Key: "/v2/email_submissions?page[size]=%d", Request: "`/v2/email_submissions` (with its default include)", Max: 4, Test: "TestStatementCounts",
		Note: "page, count, documents, representations"},
	{Key: "/v2/email_submissions?include=account,user,documents.last_document_representation&page[size]=%d", Request: "`/v2/email_submissions?include=account,user,documents.last_document_representation`", Max: 6, Test: "TestStatementCounts",
		Note: "… accounts, users"},
	{Key: "lone poll", Request: "a tracking request's poll, alone (first or repeated)", Max: 6, Test: "TestPollStatementBudget",
		Note: "the request's read, BEGIN, the requests' lock, the poll's one statement, COMMIT; 6 when it meets a vessel this process has not written yet (or moves a known shipment's port of discharge or ETA, or a rule stops it); River's own statements not counted ([tracking.md](tracking.md#numbers))"},
	{Key: "lone repeated poll", Request: "a tracking request's poll, alone, that changes nothing", Max: 5, Test: "TestPollStatementBudget",
		Note: "the request's read, BEGIN, the lock, the poll's one statement (its schedule only), COMMIT"},
	{Key: "polls together", Request: "each of 30 polls of one account that finish together (average)", Max: 3, Test: "TestPollStatementBudget",
		Note: "each poll's read; the batch's BEGIN, lock, one statement, COMMIT (and a vessel statement when new)"},
}

// Max is the budget named key; an unknown key panics (a test that asks
// for a budget the table lacks is wrong, not over budget).
func Max(key string) int {
	for _, b := range All {
		if b.Key == key {
			return b.Max
		}
	}
	panic(fmt.Sprintf("budgets: no budget %q", key))
}

// Markers around the generated table in a markdown file.
const (
	BeginMarker = "<!-- statement budgets: generated from testkit/budgets by `make budgets`; do not edit -->"
	EndMarker   = "<!-- statement budgets: end -->"
)

// Table renders All as a markdown table.
func Table() string {
	var b strings.Builder
	b.WriteString("| request | at most | held by | what the statements are |\n|---|---|---|---|\n")
	for _, x := range All {
		fmt.Fprintf(&b, "| %s | %d | `%s` | %s |\n", x.Request, x.Max, x.Test, x.Note)
	}
	return b.String()
}

// Replace returns doc with the text between the markers replaced by the
// table; ok is false when doc has no markers.
func Replace(doc string) (out string, ok bool) {
	i := strings.Index(doc, BeginMarker)
	j := strings.Index(doc, EndMarker)
	if i < 0 || j < i {
		return doc, false
	}
	head := doc[:i+len(BeginMarker)]
	return head + "\n" + Table() + doc[j:], true
}
