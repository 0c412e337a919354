package resolve_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"shipgraph/model"
	"shipgraph/resolve"
)

// Page arguments are checked against the limits before any SQL, and a
// refusal names the argument in Parameter, as both APIs call it.
func testPageBounds(t *testing.T, e *env) {
	ctx := e.as("acme/viewer")
	page := func(n, size int) *model.PageInput { return &model.PageInput{Number: n, Size: size} }
	lastRowPage := model.MaxPageOffset/model.MaxPageSize + 1 // starts MaxPageOffset rows in
	cases := []struct {
		name      string
		args      resolve.PageArgs
		parameter string // "" when the arguments are good
		rows      int    // rows of a good page (acme has 14 shipments)
	}{
		{"page size 0", resolve.PageArgs{Page: page(1, 0)}, "page[size]", 0},
		{"page size above the most", resolve.PageArgs{Page: page(1, model.MaxPageSize+1)}, "page[size]", 0},
		{"page number 0", resolve.PageArgs{Page: page(0, 10)}, "page[number]", 0},
		{"page number past the offset bound", resolve.PageArgs{Page: page(lastRowPage+1, model.MaxPageSize)}, "page[number]", 0},
		{"page with first", resolve.PageArgs{Page: page(1, 10), First: ptr(5)}, "page", 0},
		{"page with after", resolve.PageArgs{Page: page(1, 10), After: ptr("x")}, "page", 0},
		{"first and last", resolve.PageArgs{First: ptr(1), Last: ptr(1)}, "first", 0},
		{"first negative", resolve.PageArgs{First: ptr(-1)}, "first", 0},
		{"first above the most", resolve.PageArgs{First: ptr(model.MaxPageSize + 1)}, "first", 0},
		{"last negative", resolve.PageArgs{Last: ptr(-1)}, "last", 0},
		{"last above the most", resolve.PageArgs{Last: ptr(model.MaxPageSize + 1)}, "last", 0},

		{"default", resolve.PageArgs{}, "", 14},
		{"first 0: no rows, no statement", resolve.PageArgs{First: ptr(0)}, "", 0},
		{"first at the most", resolve.PageArgs{First: ptr(model.MaxPageSize)}, "", 14},
		{"last 5", resolve.PageArgs{Last: ptr(5)}, "", 5},
		{"page 2 of 10", resolve.PageArgs{Page: page(2, 10)}, "", 4},
		{"page at the offset bound", resolve.PageArgs{Page: page(lastRowPage, model.MaxPageSize)}, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := e.r.Shipments(ctx, who(ctx), resolve.ShipmentQuery{Page: c.args})
			if c.parameter != "" {
				wantErr(t, "shipments", err, model.EINVALID, "", c.parameter)
				return
			}
			if err != nil || len(p.Items) != c.rows {
				t.Fatalf("shipments: %v rows, %v; want %d", p, err, c.rows)
			}
		})
	}
	if n := must[int](t, "count")(e.r.CountShipments(ctx, who(ctx), model.ShipmentFilter{})); n != 14 {
		t.Fatalf("acme has %d shipments, the cases above expect 14 (seed changed?)", n)
	}
}

// What the resolver layer refuses of a list's filter and order, and what
// it lets through. A sort field off the list's allow-list and a cursor
// that is not the list's are INVALID with no Parameter: each adapter names
// its own argument (/v2's page[after] and sort are checked in rest, whose
// cursorError fills Parameter only when it is empty). Malformed ids in a
// filter match nothing — as a malformed id is not found — rather than
// failing in SQL.
func testListFilters(t *testing.T, e *env) {
	ctx := e.as("acme/admin")
	first := must[*resolve.Page[*model.Shipment]](t, "shipments")(e.r.Shipments(ctx, who(ctx), resolve.ShipmentQuery{}))
	if first.End == "" {
		t.Fatal("no cursor")
	}
	_, err := e.r.Shipments(ctx, who(ctx), resolve.ShipmentQuery{Order: &model.Order{Field: "no_such_column"}})
	wantErr(t, "unknown order", err, model.EINVALID, "", "")
	_, err = e.r.Shipments(ctx, who(ctx), resolve.ShipmentQuery{Order: &model.Order{Field: "account_id"}})
	wantErr(t, "order by a column off the allow-list", err, model.EINVALID, "", "")
	_, err = e.r.Shipments(ctx, who(ctx), resolve.ShipmentQuery{Page: resolve.PageArgs{After: ptr("not a cursor")}})
	wantErr(t, "malformed after", err, model.EINVALID, "", "")
	_, err = e.r.Shipments(ctx, who(ctx), resolve.ShipmentQuery{Page: resolve.PageArgs{Before: ptr("not a cursor")}})
	wantErr(t, "malformed before", err, model.EINVALID, "", "")
	// The default order is newest first; the cursor does not fit oldest
	// first.
	_, err = e.r.Shipments(ctx, who(ctx), resolve.ShipmentQuery{Order: &model.Order{Field: "created_at"}, Page: resolve.PageArgs{After: &first.End}})
	wantErr(t, "cursor of another order", err, model.EINVALID, "", "")

	bad := []string{"not-an-id", "", "00000000-0000-0000-0000-00000000000g"}
	badID := "not-an-id"
	empty := []struct {
		name  string
		list  func() (int, error)
		count func() (int, error)
	}{
		{"shipment ids", func() (int, error) {
			p, err := e.r.Shipments(ctx, who(ctx), resolve.ShipmentQuery{Filter: model.ShipmentFilter{IDs: bad}})
			return rows(p, err)
		}, func() (int, error) { return e.r.CountShipments(ctx, who(ctx), model.ShipmentFilter{IDs: bad}) }},
		{"container shipment ids", func() (int, error) {
			p, err := e.r.Containers(ctx, who(ctx), resolve.ContainerQuery{Filter: model.ContainerFilter{ShipmentIDs: bad}})
			return rows(p, err)
		}, func() (int, error) {
			return e.r.CountContainers(ctx, who(ctx), model.ContainerFilter{ShipmentIDs: bad})
		}},
		{"document ids", func() (int, error) {
			p, err := e.r.Documents(ctx, who(ctx), resolve.DocumentQuery{Filter: model.DocumentFilter{IDs: bad}})
			return rows(p, err)
		}, func() (int, error) { return e.r.CountDocuments(ctx, who(ctx), model.DocumentFilter{IDs: bad}) }},
		{"custom field entity", func() (int, error) {
			p, err := e.r.CustomFields(ctx, who(ctx), resolve.CustomFieldQuery{Filter: model.CustomFieldFilter{EntityID: &badID}})
			return rows(p, err)
		}, func() (int, error) {
			return e.r.CountCustomFields(ctx, who(ctx), model.CustomFieldFilter{EntityID: &badID})
		}},
		{"notification webhook", func() (int, error) {
			p, err := e.r.WebhookNotifications(ctx, who(ctx), resolve.WebhookNotificationQuery{Filter: model.WebhookNotificationFilter{WebhookID: &badID}})
			return rows(p, err)
		}, func() (int, error) {
			return e.r.CountWebhookNotifications(ctx, who(ctx), model.WebhookNotificationFilter{WebhookID: &badID})
		}},
	}
	for _, c := range empty {
		if n, err := c.list(); n != 0 || err != nil {
			t.Errorf("%s: %d rows, %v; want none", c.name, n, err)
		}
		if n, err := c.count(); n != 0 || err != nil {
			t.Errorf("%s: count %d, %v; want 0", c.name, n, err)
		}
	}
}

func rows[T any](p *resolve.Page[T], err error) (int, error) {
	if err != nil {
		return -1, err
	}
	return len(p.Items), nil
}

// On a small account, every list's count equals its length (whole, and
// filtered), and walking it a few rows at a time — forward by cursor,
// backward by cursor, by numbered page — gives the same rows in the same
// order, each once.
func testCountMatchesList(t *testing.T, e *env, acme, globex *records) {
	gctx := func() context.Context { return e.as("globex/admin") }
	actx := func() context.Context { return e.as("acme/admin") }
	shipmentKind, containerKind := model.CustomFieldEntityType("Shipment"), model.CustomFieldEntityType("Container")
	tracked := false
	lists := []struct {
		name  string
		ctx   func() context.Context
		list  func(ctx context.Context, a resolve.PageArgs) (ids []string, start, end string, next, prev bool, err error)
		count func(ctx context.Context) (int, error)
		min   int // the seed gives at least this many
	}{
		{"shipments", gctx, walk(func(ctx context.Context, a resolve.PageArgs) (*resolve.Page[*model.Shipment], error) {
			return e.r.Shipments(ctx, who(ctx), resolve.ShipmentQuery{Page: a})
		}), func(ctx context.Context) (int, error) {
			return e.r.CountShipments(ctx, who(ctx), model.ShipmentFilter{})
		}, 5},
		{"shipments still tracked", gctx, walk(func(ctx context.Context, a resolve.PageArgs) (*resolve.Page[*model.Shipment], error) {
			return e.r.Shipments(ctx, who(ctx), resolve.ShipmentQuery{Page: a, Filter: model.ShipmentFilter{TrackingStopped: &tracked}})
		}), func(ctx context.Context) (int, error) {
			return e.r.CountShipments(ctx, who(ctx), model.ShipmentFilter{TrackingStopped: &tracked})
		}, 1},
		{"containers", gctx, walk(func(ctx context.Context, a resolve.PageArgs) (*resolve.Page[*model.Container], error) {
			return e.r.Containers(ctx, who(ctx), resolve.ContainerQuery{Page: a})
		}), func(ctx context.Context) (int, error) {
			return e.r.CountContainers(ctx, who(ctx), model.ContainerFilter{})
		}, 5},
		{"containers of a shipment", gctx, walk(func(ctx context.Context, a resolve.PageArgs) (*resolve.Page[*model.Container], error) {
			return e.r.Containers(ctx, who(ctx), resolve.ContainerQuery{Page: a, Filter: model.ContainerFilter{ShipmentIDs: globex.shipmentIDs[:2]}})
		}), func(ctx context.Context) (int, error) {
			return e.r.CountContainers(ctx, who(ctx), model.ContainerFilter{ShipmentIDs: globex.shipmentIDs[:2]})
		}, 1},
		{"documents", gctx, walk(func(ctx context.Context, a resolve.PageArgs) (*resolve.Page[*model.Document], error) {
			return e.r.Documents(ctx, who(ctx), resolve.DocumentQuery{Page: a})
		}), func(ctx context.Context) (int, error) {
			return e.r.CountDocuments(ctx, who(ctx), model.DocumentFilter{})
		}, 5},
		{"container definitions", gctx, walk(func(ctx context.Context, a resolve.PageArgs) (*resolve.Page[*model.CustomFieldDefinition], error) {
			return e.r.Definitions(ctx, who(ctx), resolve.DefinitionQuery{Page: a, Filter: model.CustomFieldDefinitionFilter{EntityType: &containerKind}})
		}), func(ctx context.Context) (int, error) {
			return e.r.CountDefinitions(ctx, who(ctx), model.CustomFieldDefinitionFilter{EntityType: &containerKind})
		}, 2},
		{"shipment values", gctx, walk(func(ctx context.Context, a resolve.PageArgs) (*resolve.Page[*model.CustomField], error) {
			return e.r.CustomFields(ctx, who(ctx), resolve.CustomFieldQuery{Page: a, Filter: model.CustomFieldFilter{EntityType: &shipmentKind}})
		}), func(ctx context.Context) (int, error) {
			return e.r.CountCustomFields(ctx, who(ctx), model.CustomFieldFilter{EntityType: &shipmentKind})
		}, 5},
		{"email submissions", actx, walk(func(ctx context.Context, a resolve.PageArgs) (*resolve.Page[*model.EmailSubmission], error) {
			return e.r.EmailSubmissions(ctx, who(ctx), resolve.EmailSubmissionQuery{Page: a})
		}), func(ctx context.Context) (int, error) { return e.r.CountEmailSubmissions(ctx, who(ctx)) }, len(acme.submissionIDs)},
	}
	for _, l := range lists {
		t.Run(l.name, func(t *testing.T) {
			n, err := l.count(l.ctx())
			if err != nil || n < l.min {
				t.Fatalf("count %d, %v; want at least %d", n, err, l.min)
			}
			if n > model.MaxPageSize {
				t.Fatalf("count %d: not a small list", n)
			}
			all, _, _, next, prev, err := l.list(l.ctx(), resolve.PageArgs{First: ptr(model.MaxPageSize)})
			if err != nil || len(all) != n || next || prev {
				t.Fatalf("list: %d rows (next %v, prev %v), %v; count %d", len(all), next, prev, err, n)
			}
			if dup := duplicates(all); dup != "" {
				t.Fatalf("list: %s twice", dup)
			}
			const size = 2
			// Forward by cursor.
			var fwd []string
			var after *string
			for i := 0; ; i++ {
				ids, _, end, next, prev, err := l.list(l.ctx(), resolve.PageArgs{First: ptr(size), After: after})
				if err != nil || prev != (i > 0) {
					t.Fatalf("forward page %d: prev %v, %v", i, prev, err)
				}
				fwd = append(fwd, ids...)
				if !next {
					break
				}
				after = &end
			}
			// Backward by cursor.
			var back []string
			var before *string
			for i := 0; ; i++ {
				ids, start, _, next, prev, err := l.list(l.ctx(), resolve.PageArgs{Last: ptr(size), Before: before})
				if err != nil || next != (i > 0) {
					t.Fatalf("backward page %d: next %v, %v", i, next, err)
				}
				back = append(slices.Clone(ids), back...)
				if !prev {
					break
				}
				before = &start
			}
			// By numbered page.
			var numbered []string
			for i := 1; i <= n/size+1; i++ {
				ids, _, _, _, _, err := l.list(l.ctx(), resolve.PageArgs{Page: &model.PageInput{Number: i, Size: size}})
				if err != nil {
					t.Fatalf("page %d: %v", i, err)
				}
				numbered = append(numbered, ids...)
			}
			for name, got := range map[string][]string{"forward": fwd, "backward": back, "numbered": numbered} {
				if !slices.Equal(got, all) {
					t.Errorf("%s walk: %v, want %v", name, got, all)
				}
			}
		})
	}
}

// walk adapts a list to TestCountMatchesList's shape.
func walk[T interface{ GetID() string }](list func(context.Context, resolve.PageArgs) (*resolve.Page[T], error)) func(context.Context, resolve.PageArgs) ([]string, string, string, bool, bool, error) {
	return func(ctx context.Context, a resolve.PageArgs) ([]string, string, string, bool, bool, error) {
		p, err := list(ctx, a)
		if err != nil {
			return nil, "", "", false, false, err
		}
		ids, _ := pageIDs(p, nil)
		return ids, p.Start, p.End, p.HasNext, p.HasPrevious, nil
	}
}

func duplicates(ids []string) string {
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			return fmt.Sprint(id)
		}
		seen[id] = true
	}
	return ""
}
