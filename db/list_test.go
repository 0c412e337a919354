package db_test

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/model"
)

// lister reads one page of some list of account A.
type lister[T any] func(ctx context.Context, p model.PageRequest) (*model.Page[T], error)

// orderCase is an ordering and the Go comparison of its sort key, the
// reference the database's order is checked against.
type orderCase[T any] struct {
	field string
	cmp   func(a, b T) int
}

func cmpTime(a, b *time.Time) int {
	// NULL sorts as infinity: last ascending.
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return a.Compare(*b)
}

// expectedOrder sorts items by key then id, both reversed when desc.
func expectedOrder[T interface{ GetID() string }](items []T, c func(a, b T) int, desc bool) []string {
	s := slices.Clone(items)
	slices.SortStableFunc(s, func(a, b T) int {
		r := c(a, b)
		if r == 0 {
			r = strings.Compare(a.GetID(), b.GetID())
		}
		if desc {
			r = -r
		}
		return r
	})
	return ids(s)
}

// roundTrip passes a cursor through its opaque form, as a client would.
func roundTrip(t *testing.T, c model.Cursor, o model.Order) *model.Cursor {
	t.Helper()
	back, err := model.DecodeCursor(c.Encode(), o.Name())
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// checkList checks one ordering of a list against the Go reference order:
// forward (first/after) and backward (last/before) keyset walks with several
// page sizes, numbered pages, and pages between two cursors, checking
// HasNext/HasPrevious on every page and that the walks see every row once.
func checkList[T interface{ GetID() string }](t *testing.T, list lister[T], all []T, oc orderCase[T]) {
	ctx := context.Background()
	for _, desc := range []bool{false, true} {
		order := model.Order{Field: oc.field, Desc: desc}
		t.Run(order.Name(), func(t *testing.T) {
			want := expectedOrder(all, oc.cmp, desc)
			full, err := list(ctx, model.PageRequest{Order: order, Limit: model.MaxPageSize})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(full.Items); !slices.Equal(got, want) {
				t.Fatalf("full list order:\n got %v\nwant %v", got, want)
			}
			if full.HasNext || full.HasPrevious || len(full.Keys) != len(full.Items) {
				t.Fatalf("full page: next=%v previous=%v keys=%d", full.HasNext, full.HasPrevious, len(full.Keys))
			}
			cursorAt := func(p *model.Page[T], i int) *model.Cursor {
				return roundTrip(t, p.Cursor(i, order, p.Items[i].GetID()), order)
			}

			for _, size := range []int{1, 2, 5} {
				// Forward.
				var got []string
				var after *model.Cursor
				for n := 0; ; n++ {
					p, err := list(ctx, model.PageRequest{Order: order, Limit: size, After: after})
					if err != nil {
						t.Fatal(err)
					}
					if len(p.Items) > size || len(p.Keys) != len(p.Items) || len(p.Items) == 0 {
						t.Fatalf("forward size %d page %d: %d items, %d keys", size, n, len(p.Items), len(p.Keys))
					}
					if p.HasPrevious != (n > 0) {
						t.Fatalf("forward size %d page %d: HasPrevious = %v", size, n, p.HasPrevious)
					}
					got = append(got, ids(p.Items)...)
					if !p.HasNext {
						break
					}
					after = cursorAt(p, len(p.Items)-1)
					if n > len(want) {
						t.Fatal("forward walk does not end")
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("forward walk size %d:\n got %v\nwant %v", size, got, want)
				}

				// Backward.
				got = nil
				var before *model.Cursor
				for n := 0; ; n++ {
					p, err := list(ctx, model.PageRequest{Order: order, Limit: size, Before: before, FromEnd: true})
					if err != nil {
						t.Fatal(err)
					}
					if len(p.Items) > size || len(p.Keys) != len(p.Items) || len(p.Items) == 0 {
						t.Fatalf("backward size %d page %d: %d items", size, n, len(p.Items))
					}
					if p.HasNext != (n > 0) {
						t.Fatalf("backward size %d page %d: HasNext = %v", size, n, p.HasNext)
					}
					got = append(slices.Clone(ids(p.Items)), got...)
					if !p.HasPrevious {
						break
					}
					before = cursorAt(p, 0)
					if n > len(want) {
						t.Fatal("backward walk does not end")
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("backward walk size %d:\n got %v\nwant %v", size, got, want)
				}

				// Numbered pages.
				got = nil
				for n := 0; ; n++ {
					p, err := list(ctx, model.PageRequest{Order: order, Limit: size, Offset: n * size})
					if err != nil {
						t.Fatal(err)
					}
					if p.HasPrevious != (n > 0) {
						t.Fatalf("numbered size %d page %d: HasPrevious = %v", size, n, p.HasPrevious)
					}
					got = append(got, ids(p.Items)...)
					if !p.HasNext {
						break
					}
					if n > len(want) {
						t.Fatal("numbered walk does not end")
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("numbered pages size %d:\n got %v\nwant %v", size, got, want)
				}
			}

			// From the middle of the list: last/before, first/before (the
			// start of the rows before), first/after, and both cursors.
			m := len(want) / 2
			mid := cursorAt(full, m)
			p, err := list(ctx, model.PageRequest{Order: order, Limit: 2, Before: mid, FromEnd: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(p.Items); !slices.Equal(got, want[m-2:m]) || !p.HasNext || p.HasPrevious != (m-2 > 0) {
				t.Fatalf("last before middle: %v next=%v previous=%v, want %v", got, p.HasNext, p.HasPrevious, want[m-2:m])
			}
			p, err = list(ctx, model.PageRequest{Order: order, Limit: 2, Before: mid})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(p.Items); !slices.Equal(got, want[:2]) || !p.HasNext || p.HasPrevious {
				t.Fatalf("first before middle: %v next=%v previous=%v, want %v", got, p.HasNext, p.HasPrevious, want[:2])
			}
			p, err = list(ctx, model.PageRequest{Order: order, Limit: m, Before: mid})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(p.Items); !slices.Equal(got, want[:m]) || !p.HasNext || p.HasPrevious {
				t.Fatalf("all before middle: %v next=%v previous=%v, want %v", got, p.HasNext, p.HasPrevious, want[:m])
			}
			p, err = list(ctx, model.PageRequest{Order: order, Limit: 2, After: mid})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(p.Items); !slices.Equal(got, want[m+1:m+3]) || !p.HasPrevious || p.HasNext != (m+3 < len(want)) {
				t.Fatalf("after middle: %v next=%v previous=%v", got, p.HasNext, p.HasPrevious)
			}
			for _, fromEnd := range []bool{false, true} {
				p, err = list(ctx, model.PageRequest{Order: order, Limit: 10, After: cursorAt(full, 1), Before: cursorAt(full, m), FromEnd: fromEnd})
				if err != nil {
					t.Fatal(err)
				}
				if got := ids(p.Items); !slices.Equal(got, want[2:m]) || !p.HasPrevious || !p.HasNext {
					t.Fatalf("between cursors: %v next=%v previous=%v, want %v", got, p.HasNext, p.HasPrevious, want[2:m])
				}
			}
			p, err = list(ctx, model.PageRequest{Order: order, Limit: 1, After: cursorAt(full, 1), Before: cursorAt(full, m)})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(p.Items); !slices.Equal(got, want[2:3]) || !p.HasPrevious || !p.HasNext {
				t.Fatalf("first between cursors: %v next=%v previous=%v", got, p.HasNext, p.HasPrevious)
			}
			p, err = list(ctx, model.PageRequest{Order: order, Limit: 1, After: cursorAt(full, 1), Before: cursorAt(full, m), FromEnd: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(p.Items); !slices.Equal(got, want[m-1:m]) || !p.HasPrevious || !p.HasNext {
				t.Fatalf("last between cursors: %v next=%v previous=%v", got, p.HasNext, p.HasPrevious)
			}
			// Past either end: an empty page that still knows what is behind it.
			last := len(want) - 1
			p, err = list(ctx, model.PageRequest{Order: order, Limit: 3, After: cursorAt(full, last)})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Items) != 0 || p.HasNext || !p.HasPrevious {
				t.Fatalf("after the last row: %d items next=%v previous=%v", len(p.Items), p.HasNext, p.HasPrevious)
			}
			p, err = list(ctx, model.PageRequest{Order: order, Limit: 3, Before: cursorAt(full, 0), FromEnd: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Items) != 0 || !p.HasNext || p.HasPrevious {
				t.Fatalf("before the first row: %d items next=%v previous=%v", len(p.Items), p.HasNext, p.HasPrevious)
			}
		})
	}
}

// checkOrders reads account A's rows of ids and walks list (unfiltered)
// through them in each order; it returns the rows.
func checkOrders[F any, T interface{ GetID() string }](t *testing.T, f *fixture, ids []string,
	byIDs func(context.Context, string, []string) ([]T, error),
	list func(context.Context, string, F, model.PageRequest) (*model.Page[T], error),
	orders ...orderCase[T]) []T {
	t.Helper()
	all, err := byIDs(context.Background(), f.A.Account, ids)
	if err != nil || len(all) != len(ids) || len(all) == 0 {
		t.Fatalf("%d rows of %d, %v", len(all), len(ids), err)
	}
	var unfiltered F
	ofA := func(ctx context.Context, p model.PageRequest) (*model.Page[T], error) {
		return list(ctx, f.A.Account, unfiltered, p)
	}
	for _, oc := range orders {
		t.Run(oc.field, func(t *testing.T) { checkList(t, ofA, all, oc) })
	}
	return all
}

func TestListShipmentsPagination(t *testing.T) {
	f := newFixture(t)
	if len(f.A.Shipments) != nShipmentsA {
		t.Fatalf("%d shipments, want %d", len(f.A.Shipments), nShipmentsA)
	}
	checkOrders(t, f, f.A.Shipments, f.DB.ShipmentsByIDs, f.DB.ListShipments,
		orderCase[*model.Shipment]{"created_at", func(a, b *model.Shipment) int { return a.CreatedAt.Compare(b.CreatedAt) }},
		orderCase[*model.Shipment]{"pod_eta_at", func(a, b *model.Shipment) int { return cmpTime(a.PodEtaAt, b.PodEtaAt) }},
		orderCase[*model.Shipment]{"bill_of_lading_number", func(a, b *model.Shipment) int { return cmp.Compare(a.BillOfLadingNumber, b.BillOfLadingNumber) }})
}

// A page of a list filtered by its account alone is planned once per
// connection: prepared, PostgreSQL keeps the statement's generic plan after
// its first five runs instead of planning it on every run. With the page
// size alone as its LIMIT, the generic plan assumed a tenth of the
// account's rows were wanted and lost to a plan per run, every run.
func TestAccountPagePlannedOnce(t *testing.T) {
	f := newFixture(t)
	if dbtest.Citus(t) {
		t.Skip("Citus plans a distributed statement on the coordinator itself (its router plans)")
	}
	ctx := context.Background()
	// Enough shipments that a tenth of the account is more than a page.
	f.exec(t, `INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number,
			shipping_line_scac, shipping_line_name, shipping_line_short_name, created_at)
		SELECT $1, 'PLAN' || g, 'PLAN' || g, 'MAEU', 'Maersk', 'Maersk', $2::timestamptz + g * interval '1 minute'
		FROM generate_series(1, 2000) g`, f.A.Account, base)
	f.exec(t, `ANALYZE shipments`)
	for _, p := range []model.PageRequest{
		{Order: model.Order{Field: "created_at", Desc: true}, Limit: 50},
		{Order: model.Order{Field: "bill_of_lading_number"}, Limit: 10, After: &model.Cursor{Order: "bill_of_lading_number", Key: ptr("PLAN5"), ID: f.A.Shipments[0]}},
	} {
		q, args, err := db.ShipmentPage(f.A.Account, model.ShipmentFilter{}, p)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := f.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		stmt, err := conn.PrepareContext(ctx, q)
		if err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
		for range 10 {
			rows, err := stmt.QueryContext(ctx, args...)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			if err := rows.Close(); err != nil || n != p.Limit+1 && p.After == nil {
				t.Fatalf("%d rows, %v; want %d", n, err, p.Limit+1)
			}
		}
		var generic, custom int
		if err := conn.QueryRowContext(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1`, q).
			Scan(&generic, &custom); err != nil {
			t.Fatal(err)
		}
		_ = stmt.Close()
		_ = conn.Close()
		if generic < 5 || custom > 5 {
			t.Errorf("%s: %d generic and %d custom plans in 10 runs; want the generic plan from the sixth run\n%s", p.Order.Name(), generic, custom, q)
		}
	}
}

// A timestamp ordering's cursor key is the timestamp's JSON text (ISO
// 8601 whatever the session's DateStyle; "infinity" for a missing date
// under coalesce), the text cursors have always carried: cursors handed
// out stay valid when the statement computes the key another way
// (to_jsonb since stop 42, to_json before).
func TestPageKeysAreJSONTimestamps(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// Fractional seconds with trailing zeros, none, and no date at all.
	f.exec(t, `UPDATE containers SET pickup_lfd_line = NULL, pickup_lfd_rail = NULL,
		pickup_lfd_terminal = CASE WHEN id = $2 THEN '2026-03-02 10:00:00.1200+00'::timestamptz
		WHEN id = $3 THEN '2026-03-02 10:00:00+00'::timestamptz END WHERE account_id = $1`,
		f.A.Account, f.A.Containers[0], f.A.Containers[1])
	want := map[string]string{}
	for _, q := range []string{
		`SELECT id::text, to_json(coalesce(pickup_lfd, 'infinity'::timestamptz)) #>> '{}' FROM containers WHERE account_id = $1`,
		`SELECT id::text, to_json(created_at) #>> '{}' FROM shipments WHERE account_id = $1`,
	} {
		rows, err := f.SQL.QueryContext(ctx, q, f.A.Account)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, key string
			if err := rows.Scan(&id, &key); err != nil {
				t.Fatal(err)
			}
			want[id] = key
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(ids []string, keys []*string) {
		t.Helper()
		if len(ids) == 0 || len(ids) != len(keys) {
			t.Fatalf("%d rows, %d keys", len(ids), len(keys))
		}
		for i, id := range ids {
			if keys[i] == nil || *keys[i] != want[id] {
				t.Errorf("%s: key %v, want %q", id, keys[i], want[id])
			}
		}
	}
	cp, err := f.DB.ListContainers(ctx, f.A.Account, model.ContainerFilter{}, model.PageRequest{Order: model.Order{Field: "pickup_lfd"}, Limit: model.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cp.Items {
		ids = append(ids, c.ID)
	}
	check(ids, cp.Keys)
	if *cp.Keys[0] != "2026-03-02T10:00:00+00:00" || *cp.Keys[1] != "2026-03-02T10:00:00.12+00:00" || *cp.Keys[len(cp.Keys)-1] != "infinity" {
		t.Errorf("keys %q, %q … %q", *cp.Keys[0], *cp.Keys[1], *cp.Keys[len(cp.Keys)-1])
	}
	sp, err := f.DB.ListShipments(ctx, f.A.Account, model.ShipmentFilter{}, model.PageRequest{Order: model.Order{Field: "created_at", Desc: true}, Limit: model.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	ids = ids[:0]
	for _, s := range sp.Items {
		ids = append(ids, s.ID)
	}
	check(ids, sp.Keys)
}

func TestListContainersPagination(t *testing.T) {
	f := newFixture(t)
	checkOrders(t, f, f.A.Containers, f.DB.ContainersByIDs, f.DB.ListContainers,
		orderCase[*model.Container]{"created_at", func(a, b *model.Container) int { return a.CreatedAt.Compare(b.CreatedAt) }},
		orderCase[*model.Container]{"pickup_lfd", func(a, b *model.Container) int { return cmpTime(a.PickupLfd, b.PickupLfd) }},
		orderCase[*model.Container]{"number", func(a, b *model.Container) int { return cmp.Compare(a.Number, b.Number) }})
}

func TestListDocumentsPagination(t *testing.T) {
	f := newFixture(t)
	names := map[string]string{f.A.Admin: "alice Zed", f.A.Member: "bob Young", f.A.Viewer: "carol"}
	addedBy := func(d *model.Document) string {
		if d.UserID == nil {
			return ""
		}
		return names[*d.UserID]
	}
	checkOrders(t, f, f.A.Documents, f.DB.DocumentsByIDs, f.DB.ListDocuments,
		orderCase[*model.Document]{"created_at", func(a, b *model.Document) int { return a.CreatedAt.Compare(b.CreatedAt) }},
		orderCase[*model.Document]{"document_type", func(a, b *model.Document) int { return cmp.Compare(a.DocumentType, b.DocumentType) }},
		orderCase[*model.Document]{"added_by", func(a, b *model.Document) int { return cmp.Compare(addedBy(a), addedBy(b)) }})
}

func TestListCustomFieldDefinitionsPagination(t *testing.T) {
	f := newFixture(t)
	createdAt := func(a, b *model.CustomFieldDefinition) int { return a.CreatedAt.Compare(b.CreatedAt) }
	all := checkOrders(t, f, f.A.Defs, f.DB.CustomFieldDefinitionsByIDs, f.DB.ListCustomFieldDefinitions,
		orderCase[*model.CustomFieldDefinition]{"created_at", createdAt},
		orderCase[*model.CustomFieldDefinition]{"display_name", func(a, b *model.CustomFieldDefinition) int { return cmp.Compare(a.DisplayName, b.DisplayName) }})
	// An empty order field is the default, created_at.
	p, err := f.DB.ListCustomFieldDefinitions(context.Background(), f.A.Account, model.CustomFieldDefinitionFilter{}, model.PageRequest{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(p.Items), expectedOrder(all, createdAt, false); !slices.Equal(got, want) {
		t.Fatalf("default order: %v, want %v", got, want)
	}
}

func TestPageRequestValidation(t *testing.T) {
	f := newFixture(t)
	order := model.Order{Field: "created_at"}
	other := model.Order{Field: "pod_eta_at"}
	key := func(s string) *string { return &s }
	good := &model.Cursor{Order: "created_at", Key: key("2025-03-01T12:00:00+00:00"), ID: f.A.Shipments[0]}
	for name, p := range map[string]model.PageRequest{
		"limit 0":               {Order: order, Limit: 0},
		"limit over max":        {Order: order, Limit: model.MaxPageSize + 1},
		"negative offset":       {Order: order, Limit: 5, Offset: -1},
		"offset and cursor":     {Order: order, Limit: 5, Offset: 5, After: good},
		"offset and last":       {Order: order, Limit: 5, Offset: 5, FromEnd: true},
		"unknown order":         {Order: model.Order{Field: "customer_name"}, Limit: 5},
		"cursor of other order": {Order: other, Limit: 5, After: good},
		"bad time key":          {Order: order, Limit: 5, After: &model.Cursor{Order: "created_at", Key: key("yesterday"), ID: f.A.Shipments[0]}},
		"sql in key":            {Order: order, Limit: 5, Before: &model.Cursor{Order: "created_at", Key: key("2025-01-01'; --"), ID: f.A.Shipments[0]}},
		"null key":              {Order: order, Limit: 5, After: &model.Cursor{Order: "created_at", ID: f.A.Shipments[0]}},
		"bad cursor id":         {Order: order, Limit: 5, After: &model.Cursor{Order: "created_at", Key: good.Key, ID: "x"}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, n := counting()
			_, err := f.DB.ListShipments(ctx, f.A.Account, model.ShipmentFilter{}, p)
			wantCode(t, err, model.EINVALID)
			if n.Load() != 0 {
				t.Fatalf("%d statements sent for an invalid request", n.Load())
			}
		})
	}
	_, err := f.DB.ListShipments(context.Background(), f.A.Account, model.ShipmentFilter{}, model.PageRequest{Order: model.Order{Field: "customer_name"}, Limit: 5})
	if !strings.Contains(model.ErrorMessage(err), `"customer_name"`) {
		t.Fatalf("message %q does not name the field", model.ErrorMessage(err))
	}
	// A text key is any string: it is bound, never spliced.
	p, err := f.DB.ListShipments(context.Background(), f.A.Account, model.ShipmentFilter{},
		model.PageRequest{Order: model.Order{Field: "bill_of_lading_number"}, Limit: 5,
			After: &model.Cursor{Order: "bill_of_lading_number", Key: key("'); DROP TABLE shipments; --"), ID: f.A.Shipments[0]}})
	if err != nil || len(p.Items) != 5 {
		t.Fatalf("text key: %v, %d items", err, len(p.Items))
	}
	// Each list answers one statement per page, probes included.
	ctx, n := counting()
	if _, err := f.DB.ListShipments(ctx, f.A.Account, model.ShipmentFilter{}, model.PageRequest{Order: order, Limit: 2, After: good, Before: good}); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 1 {
		t.Fatalf("a page cost %d statements", n.Load())
	}
}

// The added_by order reads a name the triggers keep in the document row:
// it follows renames and deletions of users.
func TestAddedByFollowsUsers(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	order := func() []string {
		t.Helper()
		p, err := f.DB.ListDocuments(ctx, f.A.Account, model.DocumentFilter{}, model.PageRequest{Order: model.Order{Field: "added_by"}, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for i := range p.Items {
			names = append(names, *p.Keys[i])
		}
		return names
	}
	want := []string{"", "", "alice Zed", "alice Zed", "alice Zed", "bob Young", "bob Young", "carol"}
	if got := order(); !slices.Equal(got, want) {
		t.Fatalf("keys %q, want %q", got, want)
	}
	f.exec(t, `UPDATE users SET first_name = 'Zoe', last_name = 'Able' WHERE id = $1`, f.A.Admin)
	if dbtest.Citus(t) {
		// There the key's ON DELETE SET NULL (user_id) is NO ACTION
		// (db/citus.go): what it would do, first.
		f.exec(t, `UPDATE documents SET user_id = NULL WHERE account_id = $1 AND user_id = $2`, f.A.Account, f.A.Viewer)
	}
	f.exec(t, `DELETE FROM users WHERE id = $1`, f.A.Viewer)
	want = []string{"", "", "", "Zoe Able", "Zoe Able", "Zoe Able", "bob Young", "bob Young"}
	if got := order(); !slices.Equal(got, want) {
		t.Fatalf("after rename and delete: keys %q, want %q", got, want)
	}
	f.exec(t, `UPDATE documents SET user_id = $1 WHERE id = $2`, f.A.Member, f.A.Documents[6])
	want = []string{"", "", "Zoe Able", "Zoe Able", "Zoe Able", "bob Young", "bob Young", "bob Young"}
	if got := order(); !slices.Equal(got, want) {
		t.Fatalf("after reassigning: keys %q, want %q", got, want)
	}
}
