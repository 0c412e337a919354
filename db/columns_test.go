package db_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"shipgraph/db"
	"shipgraph/graph/model"
)

// Every db-tagged field of a model is in its column list, and nothing else
// is: a forgotten column would silently read as a zero value.
func TestColumnListsMatchModels(t *testing.T) {
	for name, v := range map[string]any{
		"Account": model.Account{}, "User": model.User{}, "APIToken": model.APIToken{},
		"Port": model.Port{}, "MetroArea": model.MetroArea{}, "Terminal": model.Terminal{},
		"RailTerminal": model.RailTerminal{}, "ShippingLine": model.ShippingLine{},
		"Shipment": model.Shipment{}, "Container": model.Container{}, "Document": model.Document{},
		"EmailSubmission": model.EmailSubmission{}, "DocumentRepresentation": model.DocumentRepresentation{},
		"CustomFieldDefinition": model.CustomFieldDefinition{}, "CustomFieldOption": model.CustomFieldOption{},
		"CustomField": model.CustomField{},
	} {
		var tags []string
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			if tag := typ.Field(i).Tag.Get("db"); tag != "" {
				tags = append(tags, tag)
			}
		}
		cols := outputNames(db.Columns[name])
		slices.Sort(tags)
		slices.Sort(cols)
		if !slices.Equal(tags, cols) {
			t.Errorf("%s:\n columns %v\n    tags %v", name, cols, tags)
		}
	}
}

// outputNames returns the output column names of a select list: the items
// are split at top-level commas; an item is "alias.column" or "… AS name".
func outputNames(list string) []string {
	var items []string
	depth, start := 0, 0
	for i, c := range list {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				items = append(items, list[start:i])
				start = i + 1
			}
		}
	}
	items = append(items, list[start:])
	names := make([]string, len(items))
	for i, it := range items {
		it = strings.TrimSpace(it)
		if j := strings.LastIndex(it, " AS "); j >= 0 {
			names[i] = strings.TrimSpace(it[j+4:])
		} else {
			names[i] = it[strings.LastIndex(it, ".")+1:]
		}
	}
	return names
}
