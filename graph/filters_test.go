package graph_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"shipgraph/testkit"
)

// walk reads every row of a filtered list (pages of 100) and returns the
// ids and the totalCount of the first page.
func walk(t *testing.T, e *testkit.Env, k, field, filterType string, filter any) ([]string, int) {
	t.Helper()
	q := fmt.Sprintf(`query($f: %s, $after: String) { c: %s(first: 100, after: $after, filter: $f) {
		totalCount nodes { id } pageInfo { hasNextPage endCursor } } }`, filterType, field)
	var out []string
	var after any
	total := -1
	for range 100 {
		var d struct {
			C struct {
				TotalCount int
				Nodes      []idObj
				PageInfo   struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
		}
		e.Must(t, k, q, testkit.Vars{"f": filter, "after": after}, &d)
		if total < 0 {
			total = d.C.TotalCount
		}
		out = append(out, ids(d.C.Nodes)...)
		if !d.C.PageInfo.HasNextPage {
			return out, total
		}
		after = *d.C.PageInfo.EndCursor
	}
	t.Fatal("walk does not end")
	return nil, 0
}

type filterCase struct {
	name   string
	filter map[string]any
	sql    string // ids of the account ($1) that match; more args follow
	args   []any
}

func runFilterCases(t *testing.T, e *testkit.Env, field, filterType string, cases []filterCase) {
	t.Helper()
	k := e.Key(t, acmeAdmin)
	acme := e.Account(t, "acme")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []string
			e.SQL(t, &want, c.sql, append([]any{acme}, c.args...)...)
			got, total := walk(t, e, k, field, filterType, c.filter)
			if !sameSet(got, want) || len(got) != len(want) {
				t.Errorf("filter %v: %d rows %v, want %d %v", c.filter, len(got), got, len(want), want)
			}
			if total != len(want) {
				t.Errorf("filter %v: totalCount %d, want %d", c.filter, total, len(want))
			}
			if len(want) == 0 && !strings.Contains(c.name, "none") {
				t.Errorf("filter %v matches nothing in the seed: the case tests little", c.filter)
			}
		})
	}
}

func testShipmentFilters(t *testing.T, e *testkit.Env) {
	acme := e.Account(t, "acme")
	bol := e.Text(t, `SELECT bill_of_lading_number FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 1`, acme)
	normalized := e.Text(t, `SELECT normalized_number FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 1`, acme)
	ref := e.Text(t, `SELECT ref_numbers[1] FROM shipments WHERE account_id = $1 AND cardinality(ref_numbers) > 0 ORDER BY id LIMIT 1`, acme)
	box := e.Text(t, `SELECT number FROM containers WHERE account_id = $1 ORDER BY id LIMIT 1`, acme)
	scac := e.Text(t, `SELECT shipping_line_scac FROM shipments WHERE account_id = $1 GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`, acme)
	scac2 := e.Text(t, `SELECT shipping_line_scac FROM shipments WHERE account_id = $1 GROUP BY 1 ORDER BY count(*) DESC, 1 OFFSET 1 LIMIT 1`, acme)
	pod := e.Text(t, `SELECT port_of_discharge_id FROM shipments WHERE account_id = $1 GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`, acme)
	term := e.Text(t, `SELECT pod_terminal_id FROM shipments WHERE account_id = $1 AND pod_terminal_id IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`, acme)
	tag := e.Text(t, `SELECT t FROM shipments, unnest(tags) t WHERE account_id = $1 GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`, acme)
	tag2 := e.Text(t, `SELECT t FROM shipments, unnest(tags) t WHERE account_id = $1 GROUP BY 1 ORDER BY count(*) DESC, 1 OFFSET 1 LIMIT 1`, acme)
	from, to := testkit.SeedNow.AddDate(0, 0, -10), testkit.SeedNow.AddDate(0, 0, 10)

	const base = `SELECT id FROM shipments s WHERE account_id = $1 AND `
	search := base + `(upper(bill_of_lading_number) LIKE upper($2) || '%' OR upper(normalized_number) = upper($2)
		OR upper($2) = ANY(SELECT upper(r) FROM unnest(ref_numbers) r)
		OR id IN (SELECT shipment_id FROM containers WHERE upper(number) = upper($2)))`
	runFilterCases(t, e, "shipments", "ShipmentFilter", []filterCase{
		{"search bill of lading", map[string]any{"search": strings.ToLower(bol)}, search, []any{bol}},
		{"search bill of lading prefix", map[string]any{"search": bol[:len(bol)-3]}, search, []any{bol[:len(bol)-3]}},
		{"search normalized number", map[string]any{"search": " " + normalized + " "}, search, []any{normalized}},
		{"search reference", map[string]any{"search": ref}, search, []any{ref}},
		{"search container number", map[string]any{"search": strings.ToLower(box)}, search, []any{box}},
		{"search none", map[string]any{"search": "NO-SUCH-NUMBER"}, search, []any{"NO-SUCH-NUMBER"}},
		{"search like metacharacters none", map[string]any{"search": "%"}, search, []any{`\%`}},
		{"shippingLineScacs", map[string]any{"shippingLineScacs": []string{scac, scac2}}, base + `shipping_line_scac IN ($2, $3)`, []any{scac, scac2}},
		{"portOfDischargeIds", map[string]any{"portOfDischargeIds": []string{pod}}, base + `port_of_discharge_id = $2`, []any{pod}},
		{"podTerminalIds", map[string]any{"podTerminalIds": []string{term}}, base + `pod_terminal_id = $2`, []any{term}},
		{"etaFrom", map[string]any{"etaFrom": from.Format(time.RFC3339)}, base + `pod_eta_at >= $2`, []any{from}},
		{"etaTo", map[string]any{"etaTo": to.Format(time.RFC3339)}, base + `pod_eta_at < $2`, []any{to}},
		{"etaFrom and etaTo", map[string]any{"etaFrom": from.Format(time.RFC3339), "etaTo": to.Format(time.RFC3339)}, base + `pod_eta_at >= $2 AND pod_eta_at < $3`, []any{from, to}},
		{"tags", map[string]any{"tags": []string{tag}}, base + `$2 = ANY(tags)`, []any{tag}},
		{"all tags", map[string]any{"tags": []string{tag, tag2}}, base + `$2 = ANY(tags) AND $3 = ANY(tags)`, []any{tag, tag2}},
		{"trackingStopped", map[string]any{"trackingStopped": true}, base + `line_tracking_stopped_at IS NOT NULL`, nil},
		{"tracking", map[string]any{"trackingStopped": false}, base + `line_tracking_stopped_at IS NULL`, nil},
		{"combined", map[string]any{"shippingLineScacs": []string{scac}, "trackingStopped": false, "etaFrom": from.Format(time.RFC3339)},
			base + `shipping_line_scac = $2 AND line_tracking_stopped_at IS NULL AND pod_eta_at >= $3`, []any{scac, from}},
	})
}

func testContainerFilters(t *testing.T, e *testkit.Env) {
	acme := e.Account(t, "acme")
	term := e.Text(t, `SELECT pod_terminal_id FROM containers WHERE account_id = $1 AND pod_terminal_id IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`, acme)
	box := e.Text(t, `SELECT number FROM containers WHERE account_id = $1 ORDER BY id LIMIT 1`, acme)
	from, to := testkit.SeedNow.AddDate(0, 0, -5), testkit.SeedNow.AddDate(0, 0, 5)
	const base = `SELECT id FROM containers WHERE account_id = $1 AND `
	runFilterCases(t, e, "containers", "ContainerFilter", []filterCase{
		{"statuses", map[string]any{"statuses": []string{"AVAILABLE", "ON_RAIL", "EMPTY_RETURNED"}}, base + `current_status IN ('available', 'on_rail', 'empty_returned')`, nil},
		{"podTerminalIds", map[string]any{"podTerminalIds": []string{term}}, base + `pod_terminal_id = $2`, []any{term}},
		{"lastFreeDayFrom", map[string]any{"lastFreeDayFrom": from.Format(time.RFC3339)}, base + `pickup_lfd >= $2`, []any{from}},
		{"lastFreeDayTo", map[string]any{"lastFreeDayTo": to.Format(time.RFC3339)}, base + `pickup_lfd < $2`, []any{to}},
		{"availableForPickup", map[string]any{"availableForPickup": true}, base + `available_for_pickup`, nil},
		{"not availableForPickup", map[string]any{"availableForPickup": false}, base + `coalesce(available_for_pickup, false) = false`, nil},
		{"hasHolds", map[string]any{"hasHolds": true}, base + `jsonb_array_length(holds_at_pod_terminal) > 0`, nil},
		{"no holds", map[string]any{"hasHolds": false}, base + `jsonb_array_length(holds_at_pod_terminal) = 0`, nil},
		{"number", map[string]any{"number": strings.ToLower(box)}, base + `number = $2`, []any{box}},
		{"combined", map[string]any{"statuses": []string{"AVAILABLE", "NOT_AVAILABLE"}, "hasHolds": true},
			base + `current_status IN ('available', 'not_available') AND jsonb_array_length(holds_at_pod_terminal) > 0`, nil},
	})
}

func testDocumentFilters(t *testing.T, e *testkit.Env) {
	acme := e.Account(t, "acme")
	typ := e.Text(t, `SELECT document_type FROM documents WHERE account_id = $1 GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`, acme)
	manual := e.Text(t, `SELECT document_type_manual FROM documents WHERE account_id = $1 AND document_type_manual IS NOT NULL AND document_type_manual <> document_type ORDER BY id LIMIT 1`, acme)
	bol := e.Text(t, `SELECT s.bill_of_lading_number FROM document_shipments ds JOIN shipments s ON s.account_id = ds.account_id AND s.id = ds.shipment_id WHERE s.account_id = $1 ORDER BY s.id LIMIT 1`, acme)
	box := e.Text(t, `SELECT c.number FROM document_containers dc JOIN containers c ON c.account_id = dc.account_id AND c.id = dc.container_id WHERE c.account_id = $1 ORDER BY c.id LIMIT 1`, acme)
	bolType := e.Text(t, `SELECT d.document_type FROM documents d JOIN document_shipments ds ON ds.account_id = d.account_id AND ds.document_id = d.id
		JOIN shipments s ON s.account_id = ds.account_id AND s.id = ds.shipment_id WHERE s.account_id = $1 ORDER BY s.id, d.id LIMIT 1`, acme)
	word := e.Text(t, `SELECT w FROM documents, regexp_split_to_table(lower(file_name), '[^a-z0-9]+') w WHERE account_id = $1 AND length(w) > 4 GROUP BY 1 ORDER BY count(*), 1 LIMIT 1`, acme)
	const base = `SELECT id FROM documents d WHERE account_id = $1 AND `
	byFileName := base + `EXISTS (SELECT 1 FROM regexp_split_to_table(lower(file_name), '[^a-z0-9]+') w WHERE w LIKE $2 || '%')`
	byReference := base + `id IN (SELECT ds.document_id FROM document_shipments ds JOIN shipments s ON s.account_id = ds.account_id AND s.id = ds.shipment_id
			WHERE upper(s.bill_of_lading_number) = upper($2) OR upper(s.normalized_number) = upper($2) OR upper($2) = ANY(s.ref_numbers)
		UNION SELECT dc.document_id FROM document_containers dc JOIN containers c ON c.account_id = dc.account_id AND c.id = dc.container_id
			WHERE upper(c.number) = upper($2) OR upper($2) = ANY(c.ref_numbers))`
	runFilterCases(t, e, "documents", "DocumentFilter", []filterCase{
		{"filename word", map[string]any{"filename": strings.ToUpper(word)}, byFileName, []any{word}},
		{"filename prefix", map[string]any{"filename": word[:3]}, byFileName, []any{word[:3]}},
		{"filename none", map[string]any{"filename": "zzqqxx"}, byFileName, []any{"zzqqxx"}},
		{"reference bill of lading", map[string]any{"reference": strings.ToLower(bol)}, byReference, []any{bol}},
		{"reference container", map[string]any{"reference": box}, byReference, []any{box}},
		{"documentTypes", map[string]any{"documentTypes": []string{typ}}, base + `(document_type = $2 OR document_type_manual = $2)`, []any{typ}},
		{"documentTypes manual", map[string]any{"documentTypes": []string{manual}}, base + `(document_type = $2 OR document_type_manual = $2)`, []any{manual}},
		{"combined", map[string]any{"documentTypes": []string{bolType}, "reference": bol},
			`SELECT id FROM (` + byReference + `) r WHERE id IN (SELECT id FROM documents WHERE document_type = $3 OR document_type_manual = $3)`, []any{bol, bolType}},
	})
}

func testDefinitionFilters(t *testing.T, e *testkit.Env) {
	const base = `SELECT id FROM custom_field_definitions WHERE account_id = $1 AND `
	runFilterCases(t, e, "customFieldDefinitions", "CustomFieldDefinitionFilter", []filterCase{
		{"entityType", map[string]any{"entityType": "CONTAINER"}, base + `entity_type = 'Container'`, nil},
		{"dataType", map[string]any{"dataType": "ENUM"}, base + `data_type = 'enum'`, nil},
		{"displayName prefix", map[string]any{"displayName": "pRI"}, base + `lower(display_name) LIKE 'pri%'`, nil},
		{"displayName metacharacter none", map[string]any{"displayName": "_"}, base + `display_name LIKE '\_%'`, nil},
		{"combined", map[string]any{"entityType": "SHIPMENT", "dataType": "ENUM_MULTI"}, base + `entity_type = 'Shipment' AND data_type = 'enum_multi'`, nil},
	})
}
