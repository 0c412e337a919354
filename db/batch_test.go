package db_test

import (
	"context"
	"slices"
	"testing"

	"shipgraph/db"
	"shipgraph/model"
)

// batch is one batch read as seen by a test: it reads ids for account A
// and returns the ids that came back (for to-many reads: the child ids).
type batch struct {
	name  string
	read  func(ctx context.Context, ids []string) ([]string, error)
	mine  []string // ids of account A (or shared reference data)
	other []string // ids that must never come back to account A
	want  []string // what reading mine returns (default: mine)
}

func linkedIDs[T interface{ GetID() string }](ls []db.Linked[T], err error) ([]string, error) {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.ParentID + ">" + l.Item.GetID()
	}
	return out, err
}

func idsOf[T interface{ GetID() string }](items []T, err error) ([]string, error) {
	return ids(items), err
}

func batches(f *fixture) []batch {
	a, b := f.A, f.B
	d, acct := f.DB, a.Account
	// Expected parent>child pairs of the fixture's links (account A).
	docShip := []string{
		a.Documents[0] + ">" + a.Shipments[0],
		a.Documents[1] + ">" + a.Shipments[1],
		a.Documents[3] + ">" + a.Shipments[3],
		a.Documents[5] + ">" + a.Shipments[0], a.Documents[5] + ">" + a.Shipments[2],
	}
	docCont := []string{a.Documents[1] + ">" + a.Containers[0], a.Documents[2] + ">" + a.Containers[1]}
	flip := func(pairs []string) []string {
		out := make([]string, len(pairs))
		for i, p := range pairs {
			out[i] = p[37:] + ">" + p[:36]
		}
		return out
	}
	return []batch{
		{name: "AccountsByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.AccountsByIDs(ctx, acct, ids))
		}, mine: []string{a.Account}, other: []string{b.Account}},
		{name: "UsersByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.UsersByIDs(ctx, acct, ids))
		}, mine: []string{a.Admin, a.Member, a.Viewer}, other: []string{b.Admin, b.Member}},
		{name: "PortsByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.PortsByIDs(ctx, ids))
		}, mine: []string{f.PortLA, f.PortOK}},
		{name: "MetroAreasByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.MetroAreasByIDs(ctx, ids))
		}, mine: []string{f.Metro}},
		{name: "TerminalsByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.TerminalsByIDs(ctx, ids))
		}, mine: []string{f.TermLA, f.TermOK}},
		{name: "RailTerminalsByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.RailTerminalsByIDs(ctx, ids))
		}, mine: []string{f.Rail}},
		{name: "ShippingLinesByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.ShippingLinesByIDs(ctx, ids))
		}, mine: []string{f.LineMA, f.LineMS}},
		{name: "ShipmentsByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.ShipmentsByIDs(ctx, acct, ids))
		}, mine: a.Shipments[:5], other: b.Shipments},
		{name: "ContainersByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.ContainersByIDs(ctx, acct, ids))
		}, mine: a.Containers[:4], other: b.Containers},
		{name: "DocumentsByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.DocumentsByIDs(ctx, acct, ids))
		}, mine: a.Documents, other: b.Documents},
		{name: "EmailSubmissionsByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.EmailSubmissionsByIDs(ctx, acct, ids))
		}, mine: []string{a.Email}, other: []string{b.Email}},
		{name: "DocumentRepresentationsByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.DocumentRepresentationsByIDs(ctx, acct, ids))
		}, mine: []string{a.Representation}, other: []string{b.Representation}},
		{name: "CustomFieldDefinitionsByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.CustomFieldDefinitionsByIDs(ctx, acct, ids))
		}, mine: a.Defs, other: b.Defs},
		{name: "CustomFieldOptionsByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.CustomFieldOptionsByIDs(ctx, acct, ids))
		}, mine: []string{a.OptHigh, a.OptC}, other: []string{b.OptHigh, b.OptC}},
		{name: "ContainersByShipmentIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.ContainersByShipmentIDs(ctx, acct, ids))
		}, mine: a.Shipments, other: b.Shipments, want: a.Containers},
		{name: "ShipmentsByDocumentIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return linkedIDs(d.ShipmentsByDocumentIDs(ctx, acct, ids))
		}, mine: a.Documents, other: b.Documents, want: docShip},
		{name: "ContainersByDocumentIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return linkedIDs(d.ContainersByDocumentIDs(ctx, acct, ids))
		}, mine: a.Documents, other: b.Documents, want: docCont},
		{name: "DocumentsByShipmentIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return linkedIDs(d.DocumentsByShipmentIDs(ctx, acct, ids))
		}, mine: a.Shipments, other: b.Shipments, want: flip(docShip)},
		{name: "DocumentsByContainerIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return linkedIDs(d.DocumentsByContainerIDs(ctx, acct, ids))
		}, mine: a.Containers, other: b.Containers, want: flip(docCont)},
		{name: "CustomFieldOptionsByDefinitionIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.CustomFieldOptionsByDefinitionIDs(ctx, acct, ids))
		}, mine: a.Defs, other: b.Defs, want: []string{a.OptHigh, a.OptMed, a.OptLow, a.OptA, a.OptB, a.OptC}},
		{name: "CustomFieldsByIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.CustomFieldsByIDs(ctx, acct, ids))
		}, mine: []string{a.ValPriority, a.ValFlags, a.ValNote}, other: []string{b.ValPriority, b.ValFlags}},
		{name: "CustomFieldsByEntityIDs", read: func(ctx context.Context, ids []string) ([]string, error) {
			return idsOf(d.CustomFieldsByEntityIDs(ctx, acct, ids))
		}, mine: append(slices.Clone(a.Shipments), a.Containers...), other: append(slices.Clone(b.Shipments), b.Containers...),
			want: []string{a.ValPriority, a.ValFlags, a.ValNote}},
	}
}

// Every batch read: returns the caller's rows, never another account's,
// skips ids that are not UUIDs, and costs exactly one statement whatever
// the number of ids (none when no id is a UUID).
func TestBatchReads(t *testing.T) {
	f := newFixture(t)
	for _, b := range batches(f) {
		t.Run(b.name, func(t *testing.T) {
			want := b.want
			if want == nil {
				want = b.mine
			}
			ask := append(append(slices.Clone(b.mine), b.other...), "not-a-uuid", "", "00000000-0000-0000-0000-000000000000")
			ctx, n := counting()
			got, err := b.read(ctx, ask)
			if err != nil {
				t.Fatal(err)
			}
			sameSet(t, "mine and other", got, want)
			if n.Load() != 1 {
				t.Fatalf("%d statements for %d ids", n.Load(), len(ask))
			}
			ctx, n = counting()
			if _, err := b.read(ctx, b.mine[:1]); err != nil || n.Load() != 1 {
				t.Fatalf("one id: %d statements, %v", n.Load(), err)
			}
			if b.other != nil {
				got, err := b.read(context.Background(), b.other)
				if err != nil || len(got) != 0 {
					t.Fatalf("other account's ids returned %v, %v", got, err)
				}
			}
			ctx, n = counting()
			got, err = b.read(ctx, []string{"x", "robert'); DROP TABLE accounts; --"})
			if err != nil || len(got) != 0 || n.Load() != 0 {
				t.Fatalf("invalid ids: %v, %v, %d statements", got, err, n.Load())
			}
			ctx, n = counting()
			if got, err := b.read(ctx, nil); err != nil || len(got) != 0 || n.Load() != 0 {
				t.Fatalf("no ids: %v, %v, %d statements", got, err, n.Load())
			}
		})
	}
}

// To-many reads come ordered so loaders can slice them without sorting.
func TestToManyOrder(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cs, err := f.DB.ContainersByShipmentIDs(ctx, f.A.Account, f.A.Shipments)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(cs, func(a, b *model.Container) int {
		if a.ShipmentID != b.ShipmentID {
			return compareStrings(a.ShipmentID, b.ShipmentID)
		}
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return compareStrings(a.ID, b.ID)
	}) {
		t.Fatal("containers are not in (shipment, created_at, id) order")
	}
	opts, err := f.DB.CustomFieldOptionsByDefinitionIDs(ctx, f.A.Account, []string{f.A.DefPriority, f.A.DefFlags})
	if err != nil {
		t.Fatal(err)
	}
	// Per definition: by position, unpositioned last.
	var got []string
	for _, o := range opts {
		if o.DefinitionID == f.A.DefPriority {
			got = append(got, o.Value)
		}
	}
	if !slices.Equal(got, []string{"high", "low", "med"}) {
		t.Fatalf("priority options in order %v", got)
	}
	got = nil
	for _, o := range opts {
		if o.DefinitionID == f.A.DefFlags {
			got = append(got, o.Value)
		}
	}
	if !slices.Equal(got, []string{"c", "b", "a"}) {
		t.Fatalf("flag options in order %v", got)
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestSingleLookups(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.A
	def, err := f.DB.FindCustomFieldDefinitionBySlug(ctx, a.Account, "Shipment", "priority")
	if err != nil || def.ID != a.DefPriority {
		t.Fatalf("by slug: %v, %v", def, err)
	}
	_, err = f.DB.FindCustomFieldDefinitionBySlug(ctx, a.Account, "Container", "priority")
	wantCode(t, err, model.ENOTFOUND)
	cf, err := customField(ctx, f.DB, a.Account, a.Shipments[0], a.DefFlags)
	if err != nil || cf.ID != a.ValFlags || cf.APISlug != "flags" || !slices.Equal(cf.OptionLabels, []string{"Charlie", "Alpha"}) {
		t.Fatalf("custom field: %+v, %v", cf, err)
	}
}

// customField returns the value of one definition on one entity.
func customField(ctx context.Context, d *db.DB, accountID, entityID, definitionID string) (*model.CustomField, error) {
	fields, err := d.CustomFieldsByEntityIDs(ctx, accountID, []string{entityID})
	for _, cf := range fields {
		if cf.DefinitionID == definitionID {
			return cf, err
		}
	}
	if err == nil {
		err = model.NotFound("custom field")
	}
	return nil, err
}
