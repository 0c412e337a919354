package load_test

import (
	"testing"

	"shipgraph/catalog"
	"shipgraph/load"
	"shipgraph/testkit"
)

// The columns a request reads follow what it asks for, in the catalogue's
// terms: the columns named, the key columns of each relationship, and the
// id; a resource with a column the store does not know (or every column)
// is read whole, and so is a resource the request does not name.
func TestFieldsSelection(t *testing.T) {
	fs := load.Fields{}
	fs.AddColumn(catalog.Container, "number")
	fs.AddColumn(catalog.Container, "current_status")
	fs.AddRel(catalog.Container.Rel("podTerminal"))
	fs.AddColumn(catalog.CustomField, "api_slug")
	fs.AddColumn(catalog.CustomField, "value")
	fs.AddColumn(catalog.Shipment, "bill_of_lading_number")
	fs.AddRel(catalog.Shipment.Rel("destination")) // two targets, two keys
	fs.AddRel(catalog.Shipment.Rel("customField")) // read through customFields: the id
	fs.AddColumn(catalog.Terminal, "name")
	fs.AddColumn(catalog.Terminal, "no_such_column")
	fs.AddColumn(catalog.Document, "filename")
	fs.AddAll(catalog.Document)
	sel := fs.Selection()
	want := map[string][]string{
		"Container":   {"current_status", "id", "number", "pod_terminal_id"},
		"CustomField": {"api_slug", "id", "value"},
		"Shipment":    {"bill_of_lading_number", "destination_metro_area_id", "destination_port_id", "id"},
	}
	testkit.WantSelection(t, sel, want, "Terminal", "Document", "Port")
}

// A plan names relationships of the catalogue: NewPlan resolves dotted
// plan names through each target, and skips a name a target lacks.
func TestNewPlan(t *testing.T) {
	p := load.NewPlan(catalog.Container, "transportEvents.vessel", "noSuch", "shipment.noSuch")
	events := p.Rels[catalog.Container.Rel("transportEvents")]
	if len(p.Rels) != 2 || events == nil || p.Rels[catalog.Container.Rel("shipment")] == nil {
		t.Fatalf("plan %v: want transportEvents and shipment", p.Rels)
	}
	if len(events.Rels) != 1 || events.Rels[catalog.TransportEvent.Rel("vessel")] == nil {
		t.Errorf("below transportEvents: %v, want vessel", events.Rels)
	}
}
