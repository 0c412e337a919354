package load

import (
	"slices"
	"testing"
)

// The columns a request reads follow what it asks for: each field's
// column, the derived columns of computed fields, the key column of each
// relationship, and the id; a type with a field the mapping does not know
// is read whole, and so is a type the request does not name.
func TestFieldsSelection(t *testing.T) {
	sel := Fields{
		"Container":   {"number": true, "currentStatus": true, "podTerminal": true, "importDeadlines": true, "__typename": true},
		"CustomField": {"apiSlug": true, "value": true},
		"Shipment":    {"billOfLadingNumber": true, "destination": true, "customField": true},
		"Terminal":    {"name": true, "noSuchField": true},
		"Viewer":      {"role": true},
	}.Selection()
	want := map[string][]string{
		"Container":   {"current_status", "id", "number", "pickup_lfd_line", "pickup_lfd_rail", "pickup_lfd_terminal", "pod_terminal_id"},
		"CustomField": {"api_slug", "id", "value"}, // no option_labels: displayValue was not asked for
		"Shipment":    {"bill_of_lading_number", "destination_metro_area_id", "destination_port_id", "id", "id"},
	}
	for typ, cols := range want {
		got := slices.Clone(sel[typ])
		slices.Sort(got)
		if !slices.Equal(got, cols) {
			t.Errorf("%s: columns %v, want %v", typ, got, cols)
		}
	}
	for _, typ := range []string{"Terminal", "Viewer", "Port"} {
		if _, ok := sel[typ]; ok {
			t.Errorf("%s is narrowed to %v; want it read whole", typ, sel[typ])
		}
	}
	withDisplay := Fields{"CustomField": {"displayValue": true}}.Selection()
	if !slices.Contains(withDisplay["CustomField"], "option_labels") {
		t.Errorf("displayValue does not read option_labels: %v", withDisplay["CustomField"])
	}
}
