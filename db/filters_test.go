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
	cases := []struct {
		name   string
		filter model.ShipmentFilter
		want   func(*model.Shipment) bool
		empty  bool // the filter is meant to match nothing
	}{
		{"ids", model.ShipmentFilter{IDs: []string{f.A.Shipments[1], f.A.Shipments[4], f.B.Shipments[0], "nope"}},
			func(s *model.Shipment) bool { return s.ID == f.A.Shipments[1] || s.ID == f.A.Shipments[4] }, false},
		{"only invalid ids", model.ShipmentFilter{IDs: []string{"nope"}}, nil, true},
		{"search bill of lading prefix", model.ShipmentFilter{Search: " maeu001"}, search("maeu001"), false},
		{"search normalized number", model.ShipmentFilter{Search: "nrm4 "}, search("nrm4"), false},
		{"search reference", model.ShipmentFilter{Search: "po-777"}, search("po-777"), false},
		{"search container number stored lowercase", model.ShipmentFilter{Search: "TCNU0000001"}, search("TCNU0000001"), false},
		{"search container number", model.ShipmentFilter{Search: "mscu0000002"}, search("mscu0000002"), false},
		{"search % is literal", model.ShipmentFilter{Search: "MAEU%"}, nil, true},
		{"search _ is literal", model.ShipmentFilter{Search: "_AEU"}, nil, true},
		{"number", model.ShipmentFilter{Number: "maeu0010"}, number("maeu0010"), false},
		{"number normalized", model.ShipmentFilter{Number: " nrm7 "}, number("nrm7"), false},
		{"number is not a prefix", model.ShipmentFilter{Number: "MAEU001"}, nil, true},
		{"scacs", model.ShipmentFilter{ShippingLineScacs: []string{"MSCU"}},
			func(s *model.Shipment) bool { return s.ShippingLineScac == "MSCU" }, false},
		{"port of discharge", model.ShipmentFilter{PortOfDischargeIDs: []string{f.PortOK, "bad"}},
			func(s *model.Shipment) bool { return eq(s.PortOfDischargeID, f.PortOK) }, false},
		{"pod terminal", model.ShipmentFilter{PodTerminalIDs: []string{f.TermLA, f.TermOK}},
			func(s *model.Shipment) bool { return s.PodTerminalID != nil }, false},
		{"eta from", model.ShipmentFilter{EtaFrom: ptr(days(2))}, etaIn(ptr(days(2)), nil), false},
		{"eta to", model.ShipmentFilter{EtaTo: ptr(days(2))}, etaIn(nil, ptr(days(2))), false},
		{"eta range", model.ShipmentFilter{EtaFrom: ptr(days(1)), EtaTo: ptr(days(3))}, etaIn(ptr(days(1)), ptr(days(3))), false},
		{"tags", model.ShipmentFilter{Tags: []string{"hot", "cold"}},
			func(s *model.Shipment) bool { return slices.Contains(s.Tags, "hot") && slices.Contains(s.Tags, "cold") }, false},
		{"tracking stopped", model.ShipmentFilter{TrackingStopped: ptr(true)},
			func(s *model.Shipment) bool { return s.LineTrackingStoppedAt != nil }, false},
		{"tracking not stopped", model.ShipmentFilter{TrackingStopped: ptr(false)},
			func(s *model.Shipment) bool { return s.LineTrackingStoppedAt == nil }, false},
		{"combined", model.ShipmentFilter{ShippingLineScacs: []string{"MAEU"}, TrackingStopped: ptr(false), Search: "MAEU"},
			func(s *model.Shipment) bool { return s.ShippingLineScac == "MAEU" && s.LineTrackingStoppedAt == nil }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []string
			if !c.empty {
				want = pick(ships, c.want)
				if len(want) == 0 || len(want) == len(ships) {
					t.Fatalf("test case selects %d of %d shipments: it cannot fail", len(want), len(ships))
				}
			}
			p, err := f.DB.ListShipments(ctx, f.A.Account, c.filter, all100)
			if err != nil {
				t.Fatal(err)
			}
			sameSet(t, "list", ids(p.Items), want)
			n, err := f.DB.CountShipments(ctx, f.A.Account, c.filter)
			if err != nil || n != len(want) {
				t.Fatalf("count = %d (%v), want %d", n, err, len(want))
			}
		})
	}
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
	cases := []struct {
		name   string
		filter model.ContainerFilter
		want   func(*model.Container) bool
		empty  bool
	}{
		{"ids", model.ContainerFilter{IDs: []string{f.A.Containers[2], f.B.Containers[0]}},
			func(c *model.Container) bool { return c.ID == f.A.Containers[2] }, false},
		{"shipments", model.ContainerFilter{ShipmentIDs: []string{f.A.Shipments[2], f.A.Shipments[4], f.B.Shipments[2]}},
			func(c *model.Container) bool {
				return c.ShipmentID == f.A.Shipments[2] || c.ShipmentID == f.A.Shipments[4]
			}, false},
		{"statuses", model.ContainerFilter{Statuses: []model.ContainerStatus{"new", "available"}},
			func(c *model.Container) bool { return c.CurrentStatus == "new" || c.CurrentStatus == "available" }, false},
		{"pod terminal", model.ContainerFilter{PodTerminalIDs: []string{f.TermOK}},
			func(c *model.Container) bool { return c.PodTerminalID != nil && *c.PodTerminalID == f.TermOK }, false},
		{"lfd from", model.ContainerFilter{LastFreeDayFrom: ptr(days(2))}, lfdIn(ptr(days(2)), nil), false},
		{"lfd to", model.ContainerFilter{LastFreeDayTo: ptr(days(2))}, lfdIn(nil, ptr(days(2))), false},
		{"lfd range", model.ContainerFilter{LastFreeDayFrom: ptr(days(1)), LastFreeDayTo: ptr(days(3))}, lfdIn(ptr(days(1)), ptr(days(3))), false},
		{"available", model.ContainerFilter{AvailableForPickup: ptr(true)},
			func(c *model.Container) bool { return c.AvailableForPickup != nil && *c.AvailableForPickup }, false},
		{"not available (or unknown)", model.ContainerFilter{AvailableForPickup: ptr(false)},
			func(c *model.Container) bool { return c.AvailableForPickup == nil || !*c.AvailableForPickup }, false},
		{"holds", model.ContainerFilter{HasHolds: ptr(true)},
			func(c *model.Container) bool { return len(c.HoldsAtPodTerminal) > 0 }, false},
		{"no holds", model.ContainerFilter{HasHolds: ptr(false)},
			func(c *model.Container) bool { return len(c.HoldsAtPodTerminal) == 0 }, false},
		{"number, case-insensitive", model.ContainerFilter{Number: " TCNU0000001 "},
			func(c *model.Container) bool { return strings.EqualFold(c.Number, "tcnu0000001") }, false},
		{"number exact", model.ContainerFilter{Number: "MSCU000000"}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []string
			if !c.empty {
				want = pick(conts, c.want)
				if len(want) == 0 || len(want) == len(conts) {
					t.Fatalf("test case selects %d of %d containers: it cannot fail", len(want), len(conts))
				}
			}
			p, err := f.DB.ListContainers(ctx, f.A.Account, c.filter, all100)
			if err != nil {
				t.Fatal(err)
			}
			sameSet(t, "list", ids(p.Items), want)
			n, err := f.DB.CountContainers(ctx, f.A.Account, c.filter)
			if err != nil || n != len(want) {
				t.Fatalf("count = %d (%v), want %d", n, err, len(want))
			}
		})
	}
}

func TestDocumentFilters(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	docs := func(idx ...int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, f.A.Documents[i])
		}
		return out
	}
	cases := []struct {
		name   string
		filter model.DocumentFilter
		want   []string
	}{
		{"none", model.DocumentFilter{}, f.A.Documents},
		{"ids", model.DocumentFilter{IDs: []string{f.A.Documents[3], f.B.Documents[0]}}, docs(3)},
		{"filename token prefix", model.DocumentFilter{Filename: "bl"}, docs(0, 5)},
		{"filename several tokens", model.DocumentFilter{Filename: "Pack LIST"}, docs(2)},
		{"filename any case", model.DocumentFilter{Filename: "FINAL"}, docs(2, 6)},
		{"filename split like the column", model.DocumentFilter{Filename: "maeu0000.PDF"}, docs(0)},
		{"filename with tsquery syntax", model.DocumentFilter{Filename: "100%_sure & !|("}, docs(7)},
		{"filename no match", model.DocumentFilter{Filename: "zzz"}, nil},
		{"filename blank is ignored", model.DocumentFilter{Filename: "  "}, f.A.Documents},
		{"filename without tokens matches nothing", model.DocumentFilter{Filename: "--"}, nil},
		{"reference bill of lading", model.DocumentFilter{Reference: "maeu0000"}, docs(0, 5)},
		{"reference shipment ref number", model.DocumentFilter{Reference: " PO-777 "}, docs(3)},
		{"reference normalized number", model.DocumentFilter{Reference: "nrm2"}, docs(5)},
		{"reference container number", model.DocumentFilter{Reference: "MSCU0000000"}, docs(1)},
		{"reference container stored lowercase", model.DocumentFilter{Reference: "TCNU0000001"}, docs(2)},
		{"reference container ref number", model.DocumentFilter{Reference: "CREF1"}, docs(2)},
		{"reference is a token, not a prefix", model.DocumentFilter{Reference: "MAEU000"}, nil},
		{"types", model.DocumentFilter{DocumentTypes: []string{"bill_of_lading"}}, docs(0, 3, 5)},
		{"types several", model.DocumentFilter{DocumentTypes: []string{"invoice", "other"}}, docs(1, 3, 4, 6)},
		{"combined", model.DocumentFilter{DocumentTypes: []string{"bill_of_lading"}, Filename: "pdf", Reference: "maeu0000"}, docs(0, 5)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := f.DB.ListDocuments(ctx, f.A.Account, c.filter, all100)
			if err != nil {
				t.Fatal(err)
			}
			sameSet(t, "list", ids(p.Items), c.want)
			n, err := f.DB.CountDocuments(ctx, f.A.Account, c.filter)
			if err != nil || n != len(c.want) {
				t.Fatalf("count = %d (%v), want %d", n, err, len(c.want))
			}
		})
	}
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
	cases := []struct {
		name   string
		filter model.CustomFieldDefinitionFilter
		want   []string
	}{
		{"entity type", model.CustomFieldDefinitionFilter{EntityType: ptr(model.CustomFieldEntityType("Container"))}, byName("note", "percent")},
		{"data type", model.CustomFieldDefinitionFilter{DataType: ptr(model.CustomFieldDataType("enum"))}, byName("priority")},
		{"display name prefix", model.CustomFieldDefinitionFilter{DisplayName: "du"}, byName("dup_one", "dup_two")},
		{"display name any case", model.CustomFieldDefinitionFilter{DisplayName: "PRI"}, byName("priority")},
		{"display name % is literal", model.CustomFieldDefinitionFilter{DisplayName: "100%"}, byName("percent")},
		{"display name _ is literal", model.CustomFieldDefinitionFilter{DisplayName: "100_"}, nil},
		{"display name is a prefix", model.CustomFieldDefinitionFilter{DisplayName: "riority"}, nil},
		{"combined", model.CustomFieldDefinitionFilter{EntityType: ptr(model.CustomFieldEntityType("Shipment")), DisplayName: "d"}, byName("dup_one", "dup_two")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := f.DB.ListCustomFieldDefinitions(ctx, f.A.Account, c.filter, all100)
			if err != nil {
				t.Fatal(err)
			}
			sameSet(t, "list", ids(p.Items), c.want)
			n, err := f.DB.CountCustomFieldDefinitions(ctx, f.A.Account, c.filter)
			if err != nil || n != len(c.want) {
				t.Fatalf("count = %d (%v), want %d", n, err, len(c.want))
			}
		})
	}
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
