package load

import (
	"reflect"
	"strings"
	"sync"

	"shipgraph/catalog"
	"shipgraph/model"
)

// ---------------------------------------------------------------- columns

// Fields names, by GraphQL type, the fields a request reads of each type;
// a type it does not name is read whole.
type Fields map[string]map[string]bool

// derivedColumns are the fields read from columns other than their own
// (fields whose column is the snake case of their name need no entry).
var derivedColumns = map[string]map[string][]string{
	"Container": {
		"importDeadlines": {"pickup_lfd_terminal", "pickup_lfd_rail", "pickup_lfd_line"},
	},
	"CustomField": {
		"displayValue": {"value", "data_type", "option_labels"},
	},
}

// columnTags are the db columns of the model types whose reads the store
// can narrow, from their struct tags.
var columnTags = sync.OnceValue(func() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for name, v := range map[string]any{
		"Shipment": model.Shipment{}, "Container": model.Container{}, "Document": model.Document{},
		"Terminal": model.Terminal{}, "Port": model.Port{}, "CustomField": model.CustomField{},
	} {
		t := reflect.TypeOf(v)
		out[name] = map[string]bool{}
		for i := range t.NumField() {
			if tag := t.Field(i).Tag.Get("db"); tag != "" && tag != "-" {
				out[name][tag] = true
			}
		}
	}
	return out
})

// Selection turns the fields of a request into the columns the store reads:
// each field's column (or derived columns), and the key column of each
// relationship. A type with a field the mapping does not know is read whole.
func (fs Fields) Selection() model.Selection {
	sel := model.Selection{}
	tags := columnTags()
	for typ, fields := range fs {
		cols, ok := tags[typ]
		if !ok {
			continue
		}
		var want []string
		whole := false
		for f := range fields {
			if f == "__typename" || f == "id" {
				continue
			}
			if rel := catalog.ByGraphQL(typ).Rel(f); rel != nil {
				for _, t := range rel.Targets {
					want = append(want, t.KeyCol)
				}
				continue
			}
			if d, ok := derivedColumns[typ][f]; ok {
				want = append(want, d...)
				continue
			}
			if c := snake(f); cols[c] {
				want = append(want, c)
				continue
			}
			whole = true
			break
		}
		if !whole {
			sel[typ] = append(want, "id")
		}
	}
	return sel
}

// snake converts a GraphQL field name to its column: podEtaAt → pod_eta_at.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if 'A' <= r && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
