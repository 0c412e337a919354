package graph_test

import (
	"slices"
	"testing"

	"shipgraph/graph"
	"shipgraph/load"
	"shipgraph/testkit"
)

// GraphQL's names become the catalogue's columns in graph (load speaks no
// GraphQL): each field's column (its snake case), the derived columns of
// computed fields, the key columns of each relationship, and the id; a
// type with a field the mapping does not know is read whole, and so is a
// type the operation does not name.
func TestFieldsSelection(t *testing.T) {
	fs := load.Fields{}
	for typ, fields := range map[string][]string{
		"Container":   {"number", "currentStatus", "podTerminal", "importDeadlines", "__typename"},
		"CustomField": {"apiSlug", "value"},
		"Shipment":    {"billOfLadingNumber", "destination", "customField"},
		"Terminal":    {"name", "noSuchField"},
		"Viewer":      {"role"},
	} {
		for _, f := range fields {
			graph.AddField(fs, typ, f)
		}
	}
	sel := fs.Selection()
	want := map[string][]string{
		"Container":   {"current_status", "id", "number", "pickup_lfd_line", "pickup_lfd_rail", "pickup_lfd_terminal", "pod_terminal_id"},
		"CustomField": {"api_slug", "id", "value"}, // no option_labels: displayValue was not asked for
		"Shipment":    {"bill_of_lading_number", "destination_metro_area_id", "destination_port_id", "id"},
	}
	testkit.WantSelection(t, sel, want, "Terminal", "Viewer", "Port")
	withDisplay := load.Fields{}
	graph.AddField(withDisplay, "CustomField", "displayValue")
	if !slices.Contains(withDisplay.Selection()["CustomField"], "option_labels") {
		t.Errorf("displayValue does not read option_labels: %v", withDisplay.Selection()["CustomField"])
	}
}
