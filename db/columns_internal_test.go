package db

import (
	"strconv"
	"strings"
	"testing"

	"shipgraph/model"
)

// A container read that names the journey linkage gets its subqueries with
// the statement's own account parameter, also when the same selection was
// read before under another parameter (the made lists are kept per
// parameter); the placeholder never reaches PostgreSQL, and a read not
// narrowed has none.
func TestContainerColsAtNamesTheAccountParameter(t *testing.T) {
	narrowed := (&DB{}).Select(model.Selection{"Container": {"number", "transport_event_ids", "raw_event_ids"}})
	for round := 0; round < 2; round++ { // the first builds, the second reads the made lists
		for _, param := range []string{"$1", "$2"} {
			list := narrowed.containerColsAt(param)
			if strings.Contains(list, accountParam) {
				t.Errorf("%s: the placeholder %s is left in %q", param, accountParam, list)
			}
			for _, want := range []string{"te.account_id = " + param, "re.account_id = " + param, "c.number", "c.shipment_id"} {
				if !strings.Contains(list, want) {
					t.Errorf("%s: %q lacks %q", param, list, want)
				}
			}
			if strings.Contains(list, "c.current_status") {
				t.Errorf("%s: %q selects a column not asked for", param, list)
			}
			if whole := (&DB{}).containerColsAt(param); whole != pickers["Container"].all || strings.Contains(whole, "transport_event_ids") {
				t.Errorf("%s: a read not narrowed selects %q, want the whole list", param, whole)
			}
		}
	}
}

// A shipment read that names its containers' ids gets the subquery with
// the statement's own account parameter; a read not narrowed has none.
func TestShipmentColsAtNamesTheAccountParameter(t *testing.T) {
	narrowed := (&DB{}).Select(model.Selection{"Shipment": {"bill_of_lading_number", "container_ids"}})
	for _, param := range []string{"$1", "$2", "$1"} {
		list := narrowed.shipmentColsAt(param)
		if strings.Contains(list, accountParam) || !strings.Contains(list, "c.account_id = "+param) ||
			!strings.Contains(list, "s.bill_of_lading_number") || strings.Contains(list, "s.customer_name") {
			t.Errorf("%s: %q", param, list)
		}
		if whole := (&DB{}).shipmentColsAt(param); whole != pickers["Shipment"].all || strings.Contains(whole, "container_ids") {
			t.Errorf("%s: a read not narrowed selects %q, want the whole list", param, whole)
		}
	}
}

// A picker keeps at most maxMadeLists lists; past that it still answers
// every selection rightly, building the list per read.
func TestPickerMadeListsBounded(t *testing.T) {
	p := newPicker(portCols, "id")
	names := OutputNames(portCols)
	for i := 0; i < maxMadeLists+50; i++ {
		want := []string{names[1], "unknown" + strconv.Itoa(i)} // a new shape each time
		if got, want := p.list(want, ""), p.build(want, ""); got != want {
			t.Fatalf("shape %d: %q, want %q", i, got, want)
		}
	}
	n := 0
	p.made.Range(func(any, any) bool { n++; return true })
	if n != maxMadeLists {
		t.Errorf("%d made lists kept, want %d", n, maxMadeLists)
	}
	if got := p.list([]string{names[1]}, ""); got != p.items["id"]+", "+p.items[names[1]] {
		t.Errorf("after the bound: %q", got)
	}
}
