package graph

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
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

// TestComplexityFromRelations: every list field of the schema that is a
// relationship of relations.go weighs manyWeight times its selection, and
// no other field is weighed so.
func TestComplexityFromRelations(t *testing.T) {
	c := execConfig(&Resolver{}).Complexity
	v := reflect.ValueOf(c)
	weighed := 0
	for _, def := range parsedSchema.Types {
		if def.Kind != ast.Object || def.BuiltIn {
			continue
		}
		obj := v.FieldByName(def.Name)
		for _, f := range def.Fields {
			fn := obj.FieldByName(strings.ToUpper(f.Name[:1]) + f.Name[1:])
			if !fn.IsValid() || fn.IsNil() || fn.Type() != reflect.TypeOf(func(int) int { return 0 }) {
				continue
			}
			rels, isRel := relations[def.Name][f.Name]
			list := f.Type.Elem != nil
			got := fn.Interface().(func(int) int)(3)
			switch {
			case isRel && rels[0].many && list:
				weighed++
				if got != 1+3*manyWeight {
					t.Errorf("%s.%s weighs %d for a selection of 3, want %d", def.Name, f.Name, got, 1+3*manyWeight)
				}
			default:
				t.Errorf("%s.%s has a complexity function but is no to-many relationship", def.Name, f.Name)
			}
		}
		for name := range relations[def.Name] {
			f := def.Fields.ForName(name)
			if f == nil || f.Type.Elem == nil || len(f.Arguments) > 0 {
				continue
			}
			if fn := obj.FieldByName(strings.ToUpper(name[:1]) + name[1:]); !fn.IsValid() || fn.IsNil() {
				t.Errorf("to-many relationship %s.%s has no complexity weight", def.Name, name)
			}
		}
	}
	if weighed < 9 {
		t.Errorf("only %d to-many relationships weighed", weighed)
	}
}
