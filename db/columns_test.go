package db_test

import (
	"reflect"
	"slices"
	"testing"

	"shipgraph/db"
	"shipgraph/model"
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
			if tag := typ.Field(i).Tag.Get("db"); tag != "" && tag != "-" {
				tags = append(tags, tag)
			}
		}
		cols := db.OutputNames(db.Columns[name])
		slices.Sort(tags)
		slices.Sort(cols)
		if !slices.Equal(tags, cols) {
			t.Errorf("%s:\n columns %v\n    tags %v", name, cols, tags)
		}
	}
}
