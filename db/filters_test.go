package db_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"shipgraph/model"
)

func ptr[T any](v T) *T { return &v }

// sameSet fails unless got and want hold the same ids.
func sameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Fatalf("%s:\n got %v\nwant %v", what, g, w)
	}
}

// pick returns the ids of the items that match keep.
func pick[T interface{ GetID() string }](items []T, keep func(T) bool) []string {
	var out []string
	for _, it := range items {
		if keep(it) {
			out = append(out, it.GetID())
		}
	}
	return out
}

var all100 = model.PageRequest{Limit: model.MaxPageSize}

// filterCase is a filter and the rows of account A it must select: those
// of the fixture's rows that keep returns true for (a case that selects
// none or all of them cannot fail, so is refused), or, with no keep,
// exactly ids.
type filterCase[F any, T any] struct {
	name   string
	filter F
	keep   func(T) bool
	ids    []string
}

// checkFilters lists and counts every case's filter in account A: the list
// holds exactly the rows the case selects, and the count is their number.
func checkFilters[F any, T interface{ GetID() string }](t *testing.T, f *fixture, rows []T, cases []filterCase[F, T],
	list func(context.Context, string, F, model.PageRequest) (*model.Page[T], error),
	count func(context.Context, string, F) (int, error)) {
	t.Helper()
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := c.ids
			if c.keep != nil {
				want = pick(rows, c.keep)
				if len(want) == 0 || len(want) == len(rows) {
					t.Fatalf("test case selects %d of %d rows: it cannot fail", len(want), len(rows))
				}
			}
			p, err := list(ctx, f.A.Account, c.filter, all100)
			if err != nil {
				t.Fatal(err)
			}
			sameSet(t, "list", ids(p.Items), want)
			n, err := count(ctx, f.A.Account, c.filter)
			if err != nil || n != len(want) {
				t.Fatalf("count = %d (%v), want %d", n, err, len(want))
			}
		})
	}
}

func TestShipmentFilters(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ships, err := f.DB.ShipmentsByIDs(ctx, f.A.Account, f.A.Shipments)
	if err != nil {
		t.Fatal(err)
	}
	conts, err := f.DB.ContainersByIDs(ctx, f.A.Account, f.A.Containers)
	if err != nil {
		t.Fatal(err)
	}
	// The reference semantics, in Go.
	search := func(term string) func(*model.Shipment) bool {
		u := strings.ToUpper(strings.TrimSpace(term))
		return func(s *model.Shipment) bool {
			if strings.HasPrefix(strings.ToUpper(s.BillOfLadingNumber), u) || strings.ToUpper(s.NormalizedNumber) == u ||
				slices.Contains(s.RefNumbers, u) {
				return true
			}
			for _, c := range conts {
				if c.ShipmentID == s.ID && strings.ToUpper(c.Number) == u {
					return true
				}
			}
			return false
		}
	}
	number := func(n string) func(*model.Shipment) bool {
		return func(s *model.Shipment) bool {
			return strings.EqualFold(s.BillOfLadingNumber, n) || strings.EqualFold(s.NormalizedNumber, n)
		}
	}
	etaIn := func(from, to *time.Time) func(*model.Shipment) bool {
		return func(s *model.Shipment) bool {
			return s.PodEtaAt != nil && (from == nil || !s.PodEtaAt.Before(*from)) && (to == nil || s.PodEtaAt.Before(*to))
		}
	}
	eq := func(p *string, v string) bool { return p != nil && *p == v }
	cases := []filterCase[model.ShipmentFilter, *model.Shipment]{
		{"ids", model.ShipmentFilter{IDs: []string{f.A.Shipments[1], f.A.Shipments[4], f.B.Shipments[0], "nope"}},
			func(s *model.Shipment) bool { return s.ID == f.A.Shipments[1] || s.ID == f.A.Shipments[4] }, nil},
		{"only invalid ids", model.ShipmentFilter{IDs: []string{"nope"}}, nil, nil},
		{"search bill of lading prefix", model.ShipmentFilter{Search: " maeu001"}, search("maeu001"), nil},
		{"search normalized number", model.ShipmentFilter{Search: "nrm4 "}, search("nrm4"), nil},
		{"search reference", model.ShipmentFilter{Search: "po-777"}, search("po-777"), nil},
		{"search container number stored lowercase", model.ShipmentFilter{Search: "TCNU0000001"}, search("TCNU0000001"), nil},
		{"search container number", model.ShipmentFilter{Search: "mscu0000002"}, search("mscu0000002"), nil},
		{"search % is literal", model.ShipmentFilter{Search: "MAEU%"}, nil, nil},
		{"search _ is literal", model.ShipmentFilter{Search: "_AEU"}, nil, nil},
		{"number", model.ShipmentFilter{Number: "maeu0010"}, number("maeu0010"), nil},
		{"number normalized", model.ShipmentFilter{Number: " nrm7 "}, number("nrm7"), nil},
		{"number is not a prefix", model.ShipmentFilter{Number: "MAEU001"}, nil, nil},
		{"scacs", model.ShipmentFilter{ShippingLineScacs: []string{"MSCU"}},
			func(s *model.Shipment) bool { return s.ShippingLineScac == "MSCU" }, nil},
		{"port of discharge", model.ShipmentFilter{PortOfDischargeIDs: []string{f.PortOK, "bad"}},
			func(s *model.Shipment) bool { return eq(s.PortOfDischargeID, f.PortOK) }, nil},
		{"pod terminal", model.ShipmentFilter{PodTerminalIDs: []string{f.TermLA, f.TermOK}},
			func(s *model.Shipment) bool { return s.PodTerminalID != nil }, nil},
		{"eta from", model.ShipmentFilter{EtaFrom: ptr(days(2))}, etaIn(ptr(days(2)), nil), nil},
		{"eta to", model.ShipmentFilter{EtaTo: ptr(days(2))}, etaIn(nil, ptr(days(2))), nil},
		{"eta range", model.ShipmentFilter{EtaFrom: ptr(days(1)), EtaTo: ptr(days(3))}, etaIn(ptr(days(1)), ptr(days(3))), nil},
		{"tags", model.ShipmentFilter{Tags: []string{"hot", "cold"}},
			func(s *model.Shipment) bool { return slices.Contains(s.Tags, "hot") && slices.Contains(s.Tags, "cold") }, nil},
		{"tracking stopped", model.ShipmentFilter{TrackingStopped: ptr(true)},
			func(s *model.Shipment) bool { return s.LineTrackingStoppedAt != nil }, nil},
		{"tracking not stopped", model.ShipmentFilter{TrackingStopped: ptr(false)},
			func(s *model.Shipment) bool { return s.LineTrackingStoppedAt == nil }, nil},
		{"combined", model.ShipmentFilter{ShippingLineScacs: []string{"MAEU"}, TrackingStopped: ptr(false), Search: "MAEU"},
			func(s *model.Shipment) bool { return s.ShippingLineScac == "MAEU" && s.LineTrackingStoppedAt == nil }, nil},
	}
	checkFilters(t, f, ships, cases, f.DB.ListShipments, f.DB.CountShipments)
}

func TestContainerFilters(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	conts, err := f.DB.ContainersByIDs(ctx, f.A.Account, f.A.Containers)
	if err != nil {
		t.Fatal(err)
	}
	lfdIn := func(from, to *time.Time) func(*model.Container) bool {
		return func(c *model.Container) bool {
			return c.PickupLfd != nil && (from == nil || !c.PickupLfd.Before(*from)) && (to == nil || c.PickupLfd.Before(*to))
		}
	}
	cases := []filterCase[model.ContainerFilter, *model.Container]{
		{"ids", model.ContainerFilter{IDs: []string{f.A.Containers[2], f.B.Containers[0]}},
			func(c *model.Container) bool { return c.ID == f.A.Containers[2] }, nil},
		{"shipments", model.ContainerFilter{ShipmentIDs: []string{f.A.Shipments[2], f.A.Shipments[4], f.B.Shipments[2]}},
			func(c *model.Container) bool {
				return c.ShipmentID == f.A.Shipments[2] || c.ShipmentID == f.A.Shipments[4]
			}, nil},
		{"statuses", model.ContainerFilter{Statuses: []model.ContainerStatus{"new", "available"}},
			func(c *model.Container) bool { return c.CurrentStatus == "new" || c.CurrentStatus == "available" }, nil},
		{"pod terminal", model.ContainerFilter{PodTerminalIDs: []string{f.TermOK}},
			func(c *model.Container) bool { return c.PodTerminalID != nil && *c.PodTerminalID == f.TermOK }, nil},
		{"lfd from", model.ContainerFilter{LastFreeDayFrom: ptr(days(2))}, lfdIn(ptr(days(2)), nil), nil},
		{"lfd to", model.ContainerFilter{LastFreeDayTo: ptr(days(2))}, lfdIn(nil, ptr(days(2))), nil},
		{"lfd range", model.ContainerFilter{LastFreeDayFrom: ptr(days(1)), LastFreeDayTo: ptr(days(3))}, lfdIn(ptr(days(1)), ptr(days(3))), nil},
		{"available", model.ContainerFilter{AvailableForPickup: ptr(true)},
			func(c *model.Container) bool { return c.AvailableForPickup != nil && *c.AvailableForPickup }, nil},
		{"not available (or unknown)", model.ContainerFilter{AvailableForPickup: ptr(false)},
			func(c *model.Container) bool { return c.AvailableForPickup == nil || !*c.AvailableForPickup }, nil},
		{"holds", model.ContainerFilter{HasHolds: ptr(true)},
			func(c *model.Container) bool { return len(c.HoldsAtPodTerminal) > 0 }, nil},
		{"no holds", model.ContainerFilter{HasHolds: ptr(false)},
			func(c *model.Container) bool { return len(c.HoldsAtPodTerminal) == 0 }, nil},
		{"number, case-insensitive", model.ContainerFilter{Number: " TCNU0000001 "},
			func(c *model.Container) bool { return strings.EqualFold(c.Number, "tcnu0000001") }, nil},
		{"number exact", model.ContainerFilter{Number: "MSCU000000"}, nil, nil},
	}
	checkFilters(t, f, conts, cases, f.DB.ListContainers, f.DB.CountContainers)
}

func TestDocumentFilters(t *testing.T) {
	f := newFixture(t)
	docs := func(idx ...int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, f.A.Documents[i])
		}
		return out
	}
	cases := []filterCase[model.DocumentFilter, *model.Document]{
		{"none", model.DocumentFilter{}, nil, f.A.Documents},
		{"ids", model.DocumentFilter{IDs: []string{f.A.Documents[3], f.B.Documents[0]}}, nil, docs(3)},
		{"filename token prefix", model.DocumentFilter{Filename: "bl"}, nil, docs(0, 5)},
		{"filename several tokens", model.DocumentFilter{Filename: "Pack LIST"}, nil, docs(2)},
		{"filename any case", model.DocumentFilter{Filename: "FINAL"}, nil, docs(2, 6)},
		{"filename split like the column", model.DocumentFilter{Filename: "maeu0000.PDF"}, nil, docs(0)},
		{"filename with tsquery syntax", model.DocumentFilter{Filename: "100%_sure & !|("}, nil, docs(7)},
		{"filename no match", model.DocumentFilter{Filename: "zzz"}, nil, nil},
		{"filename blank is ignored", model.DocumentFilter{Filename: "  "}, nil, f.A.Documents},
		{"filename without tokens matches nothing", model.DocumentFilter{Filename: "--"}, nil, nil},
		{"reference bill of lading", model.DocumentFilter{Reference: "maeu0000"}, nil, docs(0, 5)},
		{"reference shipment ref number", model.DocumentFilter{Reference: " PO-777 "}, nil, docs(3)},
		{"reference normalized number", model.DocumentFilter{Reference: "nrm2"}, nil, docs(5)},
		{"reference container number", model.DocumentFilter{Reference: "MSCU0000000"}, nil, docs(1)},
		{"reference container stored lowercase", model.DocumentFilter{Reference: "TCNU0000001"}, nil, docs(2)},
		{"reference container ref number", model.DocumentFilter{Reference: "CREF1"}, nil, docs(2)},
		{"reference is a token, not a prefix", model.DocumentFilter{Reference: "MAEU000"}, nil, nil},
		{"types", model.DocumentFilter{DocumentTypes: []string{"bill_of_lading"}}, nil, docs(0, 3, 5)},
		{"types several", model.DocumentFilter{DocumentTypes: []string{"invoice", "other"}}, nil, docs(1, 3, 4, 6)},
		{"combined", model.DocumentFilter{DocumentTypes: []string{"bill_of_lading"}, Filename: "pdf", Reference: "maeu0000"}, nil, docs(0, 5)},
	}
	checkFilters(t, f, []*model.Document(nil), cases, f.DB.ListDocuments, f.DB.CountDocuments)
}

func TestCustomFieldDefinitionFilters(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	defs, err := f.DB.CustomFieldDefinitionsByIDs(ctx, f.A.Account, f.A.Defs)
	if err != nil {
		t.Fatal(err)
	}
	byName := func(names ...string) []string {
		return pick(defs, func(d *model.CustomFieldDefinition) bool { return slices.Contains(names, d.APISlug) })
	}
	cases := []filterCase[model.CustomFieldDefinitionFilter, *model.CustomFieldDefinition]{
		{"entity type", model.CustomFieldDefinitionFilter{EntityType: ptr(model.CustomFieldEntityType("Container"))}, nil, byName("note", "percent")},
		{"data type", model.CustomFieldDefinitionFilter{DataType: ptr(model.CustomFieldDataType("enum"))}, nil, byName("priority")},
		{"display name prefix", model.CustomFieldDefinitionFilter{DisplayName: "du"}, nil, byName("dup_one", "dup_two")},
		{"display name any case", model.CustomFieldDefinitionFilter{DisplayName: "PRI"}, nil, byName("priority")},
		{"display name % is literal", model.CustomFieldDefinitionFilter{DisplayName: "100%"}, nil, byName("percent")},
		{"display name _ is literal", model.CustomFieldDefinitionFilter{DisplayName: "100_"}, nil, nil},
		{"display name is a prefix", model.CustomFieldDefinitionFilter{DisplayName: "riority"}, nil, nil},
		{"combined", model.CustomFieldDefinitionFilter{EntityType: ptr(model.CustomFieldEntityType("Shipment")), DisplayName: "d"}, nil, byName("dup_one", "dup_two")},
	}
	checkFilters(t, f, defs, cases, f.DB.ListCustomFieldDefinitions, f.DB.CountCustomFieldDefinitions)
}

// Lists and counts never show another account's rows: account B's lists
// hold exactly B's ids, and the same numbers and names exist in both.
func TestListsAreScoped(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, x := range []tenant{f.A, f.B} {
		s, err := f.DB.ListShipments(ctx, x.Account, model.ShipmentFilter{Search: "MAEU"}, all100)
		if err != nil {
			t.Fatal(err)
		}
		sameSet(t, "shipments", ids(s.Items), x.Shipments)
		c, err := f.DB.ListContainers(ctx, x.Account, model.ContainerFilter{}, all100)
		if err != nil {
			t.Fatal(err)
		}
		sameSet(t, "containers", ids(c.Items), x.Containers)
		d, err := f.DB.ListDocuments(ctx, x.Account, model.DocumentFilter{}, model.PageRequest{Order: model.Order{Field: "added_by"}, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		sameSet(t, "documents", ids(d.Items), x.Documents)
		defs, err := f.DB.ListCustomFieldDefinitions(ctx, x.Account, model.CustomFieldDefinitionFilter{}, all100)
		if err != nil {
			t.Fatal(err)
		}
		sameSet(t, "definitions", ids(defs.Items), x.Defs)
		for what, count := range map[string]func() (int, error){
			"shipments":  func() (int, error) { return f.DB.CountShipments(ctx, x.Account, model.ShipmentFilter{}) },
			"containers": func() (int, error) { return f.DB.CountContainers(ctx, x.Account, model.ContainerFilter{}) },
			"documents":  func() (int, error) { return f.DB.CountDocuments(ctx, x.Account, model.DocumentFilter{}) },
			"definitions": func() (int, error) {
				return f.DB.CountCustomFieldDefinitions(ctx, x.Account, model.CustomFieldDefinitionFilter{})
			},
		} {
			want := map[string]int{"shipments": len(x.Shipments), "containers": len(x.Containers),
				"documents": len(x.Documents), "definitions": len(x.Defs)}[what]
			if n, err := count(); err != nil || n != want {
				t.Fatalf("count %s = %d (%v), want %d", what, n, err, want)
			}
		}
	}
	// Filtering by the other account's ids finds nothing.
	p, err := f.DB.ListShipments(ctx, f.A.Account, model.ShipmentFilter{IDs: f.B.Shipments}, all100)
	if err != nil || len(p.Items) != 0 {
		t.Fatalf("other account's ids: %d items, %v", len(p.Items), err)
	}
}
