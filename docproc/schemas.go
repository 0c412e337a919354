package docproc

import (
	"encoding/json"
	"time"

	"shipgraph/model"
)

// SchemaVersion is the one version of every document type's schema;
// a change of the fields a type extracts is a new version (and the old one
// stays readable, current false).
const SchemaVersion = "2026-03-23"

// schemaActiveAt is when SchemaVersion became active.
var schemaActiveAt = time.Date(2026, 3, 23, 0, 0, 0, 0, time.UTC)

// Schema is the fields one document type extracts.
type Schema struct {
	Type   string
	Fields []string
}

// FullVersion is the schema's id, "<type>@<version>", which a document
// representation's schema_version names.
func (s Schema) FullVersion() string { return s.Type + "@" + SchemaVersion }

var refFields = []string{"bill_of_lading_number", "booking_number", "container_numbers"}

// schemas: the numbers every type links by, then the type's parties,
// places and dates.
var schemas = map[string][]string{
	"bill_of_lading":        {"shipper", "consignee", "notify_party", "carrier", "vessel", "voyage", "port_of_loading", "port_of_discharge", "issue_date"},
	"commercial_invoice":    {"invoice_number", "invoice_date", "shipper", "consignee", "total_amount", "country_of_origin"},
	"packing_list":          {"shipper", "consignee", "packages", "gross_weight", "issue_date"},
	"certificate_of_origin": {"shipper", "consignee", "country_of_origin", "issue_date"},
	"arrival_notice":        {"consignee", "notify_party", "carrier", "vessel", "voyage", "port_of_discharge", "eta", "last_free_day"},
	"delivery_order":        {"consignee", "carrier", "release_number", "delivery_address", "last_free_day", "issue_date"},
	"customs_entry":         {"entry_number", "entry_date", "consignee", "country_of_origin", "port_of_discharge"},
	"other":                 {},
}

// SchemaOf is the schema of a document type ("other" for an unknown one).
func SchemaOf(typ string) Schema {
	f, ok := schemas[typ]
	if !ok {
		typ, f = "other", schemas["other"]
	}
	return Schema{Type: typ, Fields: append(append([]string{}, refFields...), f...)}
}

// DocumentSchema returns the schema of full version id
// ("bill_of_lading@2026-03-23"); ok is false for an unknown one.
func DocumentSchema(id string) (*model.DocumentSchema, bool) {
	for _, t := range model.DocumentTypes {
		s := SchemaOf(t.Code)
		if s.Type != t.Code || s.FullVersion() != id {
			continue
		}
		return &model.DocumentSchema{
			ID: id, DocumentType: t.Code, Label: t.Label, SchemaVersion: SchemaVersion, Current: true,
			ActiveAt:    schemaActiveAt,
			Description: "Fields Shipgraph extracts from the text of a " + t.Label + " by labelled-field rules (no model): absent when not found.",
			Payload:     s.jsonSchema(t.Label),
		}, true
	}
	return nil, false
}

// jsonSchema is the JSON Schema of the payload of the schema's document
// representations.
func (s Schema) jsonSchema(label string) model.JSON {
	props := map[string]any{}
	for _, name := range s.Fields {
		f := fields[name]
		p := map[string]any{"description": f.Description}
		switch f.Kind {
		case "date":
			p["type"], p["format"] = "string", "date"
		case "strings":
			p["type"], p["items"] = "array", map[string]any{"type": "string"}
		default:
			p["type"] = "string"
		}
		props[name] = p
	}
	b, _ := json.Marshal(map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  s.FullVersion(),
		"title":                label,
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	})
	return model.JSON(b)
}
