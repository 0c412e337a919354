package graph_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"shipgraph/model"
	"shipgraph/testkit"
)

// list describes one connection field for the pagination tests: how to
// order it and the SQL that gives the same order (the ground truth).
type list struct {
	field string // root field
	order string // orderBy literal, "" for none
	sql   string // ids of the account ($1) in list order
	size  int    // page size of the walks
}

var lists = []list{
	{"shipments", "", `SELECT id FROM shipments WHERE account_id = $1 ORDER BY created_at DESC, id DESC`, 9},
	{"shipments", "{field: CREATED_AT}", `SELECT id FROM shipments WHERE account_id = $1 ORDER BY created_at, id`, 9},
	{"shipments", "{field: CREATED_AT, direction: DESC}", `SELECT id FROM shipments WHERE account_id = $1 ORDER BY created_at DESC, id DESC`, 9},
	{"shipments", "{field: POD_ETA_AT}", `SELECT id FROM shipments WHERE account_id = $1 ORDER BY coalesce(pod_eta_at, 'infinity'), id`, 9},
	{"shipments", "{field: POD_ETA_AT, direction: DESC}", `SELECT id FROM shipments WHERE account_id = $1 ORDER BY coalesce(pod_eta_at, 'infinity') DESC, id DESC`, 9},
	{"shipments", "{field: BILL_OF_LADING_NUMBER}", `SELECT id FROM shipments WHERE account_id = $1 ORDER BY bill_of_lading_number, id`, 9},
	{"shipments", "{field: BILL_OF_LADING_NUMBER, direction: DESC}", `SELECT id FROM shipments WHERE account_id = $1 ORDER BY bill_of_lading_number DESC, id DESC`, 9},
	{"containers", "", `SELECT id FROM containers WHERE account_id = $1 ORDER BY created_at DESC, id DESC`, 40},
	{"containers", "{field: CREATED_AT}", `SELECT id FROM containers WHERE account_id = $1 ORDER BY created_at, id`, 40},
	{"containers", "{field: PICKUP_LFD}", `SELECT id FROM containers WHERE account_id = $1 ORDER BY coalesce(pickup_lfd, 'infinity'), id`, 40},
	{"containers", "{field: PICKUP_LFD, direction: DESC}", `SELECT id FROM containers WHERE account_id = $1 ORDER BY coalesce(pickup_lfd, 'infinity') DESC, id DESC`, 40},
	{"containers", "{field: NUMBER}", `SELECT id FROM containers WHERE account_id = $1 ORDER BY number, id`, 40},
	{"containers", "{field: NUMBER, direction: DESC}", `SELECT id FROM containers WHERE account_id = $1 ORDER BY number DESC, id DESC`, 40},
	{"documents", "", `SELECT id FROM documents WHERE account_id = $1 ORDER BY created_at DESC, id DESC`, 12},
	{"documents", "{field: CREATED_AT}", `SELECT id FROM documents WHERE account_id = $1 ORDER BY created_at, id`, 12},
	{"documents", "{field: DOCUMENT_TYPE}", `SELECT id FROM documents WHERE account_id = $1 ORDER BY document_type, id`, 12},
	{"documents", "{field: DOCUMENT_TYPE, direction: DESC}", `SELECT id FROM documents WHERE account_id = $1 ORDER BY document_type DESC, id DESC`, 12},
	{"documents", "{field: ADDED_BY}", `SELECT d.id FROM documents d LEFT JOIN users u ON u.id = d.user_id
		WHERE d.account_id = $1 ORDER BY coalesce(btrim(u.first_name || ' ' || u.last_name), ''), d.id`, 12},
	{"documents", "{field: ADDED_BY, direction: DESC}", `SELECT d.id FROM documents d LEFT JOIN users u ON u.id = d.user_id
		WHERE d.account_id = $1 ORDER BY coalesce(btrim(u.first_name || ' ' || u.last_name), '') DESC, d.id DESC`, 12},
	{"customFieldDefinitions", "", `SELECT id FROM custom_field_definitions WHERE account_id = $1 ORDER BY created_at DESC, id DESC`, 3},
}

type connPage struct {
	TotalCount int
	Edges      []struct {
		Cursor string
		Node   idObj
	}
	Nodes    []idObj
	PageInfo struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
}

// page reads one page of l with the given arguments (a GraphQL argument
// list without orderBy).
func (l list) page(t *testing.T, e *testkit.Env, k, args string, vars testkit.Vars) connPage {
	t.Helper()
	if l.order != "" {
		args += ", orderBy: " + l.order
	}
	var decl []string
	for _, v := range []string{"after", "before"} {
		if strings.Contains(args, "$"+v) {
			decl = append(decl, "$"+v+": String")
		}
	}
	op := "query"
	if len(decl) > 0 {
		op += "(" + strings.Join(decl, ", ") + ")"
	}
	q := fmt.Sprintf(`%s { c: %s(%s) {
		totalCount edges { cursor node { id } } nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`, op, l.field, args)
	var d struct{ C connPage }
	e.Must(t, k, q, vars, &d)
	p := d.C
	if len(p.Nodes) != len(p.Edges) {
		t.Fatalf("%d nodes but %d edges", len(p.Nodes), len(p.Edges))
	}
	for i := range p.Nodes {
		if p.Nodes[i].ID != p.Edges[i].Node.ID {
			t.Fatalf("nodes[%d] %s, edges[%d].node %s", i, p.Nodes[i].ID, i, p.Edges[i].Node.ID)
		}
	}
	if len(p.Edges) > 0 {
		if p.PageInfo.StartCursor == nil || *p.PageInfo.StartCursor != p.Edges[0].Cursor ||
			p.PageInfo.EndCursor == nil || *p.PageInfo.EndCursor != p.Edges[len(p.Edges)-1].Cursor {
			t.Fatalf("start/end cursors do not match the edges: %+v", p.PageInfo)
		}
	} else if p.PageInfo.StartCursor != nil || p.PageInfo.EndCursor != nil {
		t.Fatalf("empty page with cursors: %+v", p.PageInfo)
	}
	return p
}

func pageIDs(p connPage) []string {
	out := make([]string, len(p.Nodes))
	for i, n := range p.Nodes {
		out[i] = n.ID
	}
	return out
}

// testPagination walks every list, in every order, forward with
// first/after and backward with last/before, and compares both walks with
// the order the database gives: the same rows, each once, in order.
func testPagination(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	acme := e.Account(t, "acme")
	for _, l := range lists {
		t.Run(l.field+l.order, func(t *testing.T) {
			t.Parallel()
			var want []string
			e.SQL(t, &want, l.sql, acme)
			if len(want) <= 2*l.size {
				t.Fatalf("only %d rows: the walk would not page", len(want))
			}

			// walk pages through the list one way, l.size rows a page, and
			// returns the ids in the list's order.
			walk := func(backward bool) []string {
				t.Helper()
				way, args, name := "forward", "first: %d, after: $after", "after"
				if backward {
					way, args, name = "backward", "last: %d, before: $before", "before"
				}
				var got []string
				var cursor any
				for i := 0; ; i++ {
					p := l.page(t, e, k, fmt.Sprintf(args, l.size), testkit.Vars{name: cursor})
					if p.TotalCount != len(want) {
						t.Fatalf("%s page %d: totalCount %d, want %d", way, i, p.TotalCount, len(want))
					}
					ahead, behind, next := p.PageInfo.HasNextPage, p.PageInfo.HasPreviousPage, p.PageInfo.EndCursor
					if backward {
						ahead, behind, next = behind, ahead, p.PageInfo.StartCursor
						got = append(pageIDs(p), got...)
					} else {
						got = append(got, pageIDs(p)...)
					}
					if behind != (i > 0) {
						t.Fatalf("%s page %d: a page behind it %v", way, i, behind)
					}
					if !ahead {
						if len(p.Nodes) == 0 {
							t.Fatalf("%s page %d is empty", way, i)
						}
						return got
					}
					if len(p.Nodes) != l.size {
						t.Fatalf("%s page %d has %d rows and a page after it", way, i, len(p.Nodes))
					}
					cursor = *next
					if i > len(want) {
						t.Fatalf("the %s walk does not end", way)
					}
				}
			}
			for _, backward := range []bool{false, true} {
				if got := walk(backward); !slices.Equal(got, want) {
					t.Fatalf("walk (backward %v) differs from the database order:\n got %v\nwant %v", backward, got, want)
				}
			}

			// A window between two cursors, from either end.
			start := l.page(t, e, k, fmt.Sprintf("first: %d", l.size), nil)
			afterC := start.Edges[1].Cursor
			second := l.page(t, e, k, fmt.Sprintf("first: %d, after: $after", l.size), testkit.Vars{"after": start.PageInfo.EndCursor})
			beforeC := second.Edges[len(second.Edges)-1].Cursor
			for _, dir := range []string{"first", "last"} {
				w := l.page(t, e, k, dir+": 100, after: $after, before: $before", testkit.Vars{"after": afterC, "before": beforeC})
				if got := pageIDs(w); !slices.Equal(got, want[2:2*l.size-1]) {
					t.Errorf("%s between cursors: %v, want %v", dir, got, want[2:2*l.size-1])
				}
				if !w.PageInfo.HasPreviousPage || !w.PageInfo.HasNextPage {
					t.Errorf("%s between cursors: pageInfo %+v, want rows on both sides", dir, w.PageInfo)
				}
			}
			// Relay's order of operations: cursors narrow the list, then
			// first takes from its start and last from its end.
			end := 2*l.size - 1
			for _, c := range []struct {
				args string
				want []string
			}{
				{"first: 3, after: $after, before: $before", want[2:5]},
				{"last: 3, after: $after, before: $before", want[end-3 : end]},
				{"first: 3, before: $before", want[0:3]},
				{"last: 3, after: $after", want[len(want)-3:]},
			} {
				w := l.page(t, e, k, c.args, testkit.Vars{"after": afterC, "before": beforeC})
				if got := pageIDs(w); !slices.Equal(got, c.want) {
					t.Errorf("%s: %v, want %v", c.args, got, c.want)
				}
			}
		})
	}
}

// testNumberedPages reads every list page by page with page:{number,size}.
func testNumberedPages(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	acme := e.Account(t, "acme")
	for _, l := range []list{lists[3], lists[9], lists[17], lists[19]} {
		t.Run(l.field+l.order, func(t *testing.T) {
			var want []string
			e.SQL(t, &want, l.sql, acme)
			var got []string
			pages := (len(want) + l.size - 1) / l.size
			for n := 1; n <= pages+1; n++ {
				p := l.page(t, e, k, fmt.Sprintf("page: {number: %d, size: %d}", n, l.size), nil)
				if p.TotalCount != len(want) {
					t.Fatalf("page %d: totalCount %d, want %d", n, p.TotalCount, len(want))
				}
				wantRows := min(l.size, max(len(want)-(n-1)*l.size, 0))
				if len(p.Nodes) != wantRows || p.PageInfo.HasNextPage != (n < pages) || p.PageInfo.HasPreviousPage != (n > 1) {
					t.Fatalf("page %d of %d: %d rows, pageInfo %+v", n, pages, len(p.Nodes), p.PageInfo)
				}
				got = append(got, pageIDs(p)...)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("numbered pages differ from the database order:\n got %v\nwant %v", got, want)
			}
		})
	}
}

// testPaginationArguments: what is refused, and how.
func testPaginationArguments(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	var d struct{ Shipments connPage }
	e.Must(t, k, `{ shipments(first: 3) { totalCount edges { cursor node { id } } nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`, nil, &d)
	cursor := d.Shipments.Edges[0].Cursor
	notADate := "not a date"
	forged := model.Cursor{Order: "-created_at", Key: &notADate, ID: "00000000-0000-0000-0000-000000000000"}.Encode()

	// first: 0 answers the count alone.
	var z struct{ Shipments connPage }
	res := e.Must(t, k, `{ shipments(first: 0) { totalCount edges { cursor } nodes { id } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`, nil, &z)
	if z.Shipments.TotalCount != d.Shipments.TotalCount || len(z.Shipments.Nodes) != 0 || z.Shipments.PageInfo.StartCursor != nil {
		t.Errorf("first: 0 → %s", res)
	}
	// No size: the default page of 30.
	var def struct{ Shipments struct{ Nodes []idObj } }
	e.Must(t, k, `{ shipments { nodes { id } } }`, nil, &def)
	if len(def.Shipments.Nodes) != 30 {
		t.Errorf("default page has %d rows, want 30", len(def.Shipments.Nodes))
	}

	bad := []struct{ name, args, argument string }{
		{"first over 100", "first: 101", "first"},
		{"last over 100", "last: 101", "last"},
		{"negative first", "first: -1", "first"},
		{"negative last", "last: -5", "last"},
		{"first and last", "first: 5, last: 5", "first"},
		{"page and first", "first: 5, page: {number: 1, size: 5}", "page"},
		{"page and after", `after: "` + cursor + `", page: {number: 1, size: 5}`, "page"},
		{"page size 0", "page: {number: 1, size: 0}", "page[size]"},
		{"page size 101", "page: {number: 1, size: 101}", "page[size]"},
		{"page number 0", "page: {number: 0, size: 10}", "page[number]"},
		{"huge page number", "page: {number: 2000000000, size: 100}", "page[number]"},
		{"page beyond the numbered bound", "page: {number: 2002, size: 50}", "page[number]"},
		{"deep page of one", "page: {number: 100002, size: 1}", "page[number]"},
		{"garbage cursor", `first: 5, after: "garbage"`, ""},
		{"forged cursor key", `first: 5, after: "` + forged + `"`, ""},
		{"cursor of another order", `first: 5, after: "` + cursor + `", orderBy: {field: BILL_OF_LADING_NUMBER}`, ""},
		{"before cursor of another order", `last: 5, before: "` + cursor + `", orderBy: {field: POD_ETA_AT}`, ""},
	}
	for _, b := range bad {
		res := e.Do(t, k, `{ shipments(`+b.args+`) { totalCount nodes { id } } }`, nil)
		if !testkit.CodesEqual(res.Codes(), "BAD_USER_INPUT") || string(res.Data) != "null" {
			t.Errorf("%s: %s; want one BAD_USER_INPUT and no data", b.name, res)
			continue
		}
		if b.argument != "" && res.Errors[0].Extensions["argument"] != b.argument {
			t.Errorf("%s: extensions %v, want argument %q", b.name, res.Errors[0].Extensions, b.argument)
		}
		// Refused before any SQL but the key lookup.
		if res.AfterAuth != 0 {
			t.Errorf("%s: %d statements after the key lookup, want none", b.name, res.AfterAuth)
		}
	}
	for _, field := range []string{"containers", "documents", "customFieldDefinitions"} {
		res := e.Do(t, k, `{ `+field+`(first: 101) { nodes { id } } }`, nil)
		if !testkit.CodesEqual(res.Codes(), "BAD_USER_INPUT") {
			t.Errorf("%s(first: 101): %s", field, res)
		}
	}
}
