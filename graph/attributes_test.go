package graph_test

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"shipgraph/testkit"
)

// The attribute test is driven by the schema itself: for every type that
// implements Node, it reads a sample of records through node(id) selecting
// every field the schema has, and compares each attribute with the row in
// the database (to_jsonb of the table row, snake_case columns). A field the
// schema gains later is covered without touching the test, and one that no
// column or rule below explains fails it.

// nodeTables maps each Node type to its table.
var nodeTables = map[string]string{
	"Account":                "accounts",
	"User":                   "users",
	"Shipment":               "shipments",
	"Container":              "containers",
	"Port":                   "ports",
	"MetroArea":              "metro_areas",
	"Terminal":               "terminals",
	"RailTerminal":           "rail_terminals",
	"ShippingLine":           "shipping_lines",
	"Document":               "documents",
	"EmailSubmission":        "email_submissions",
	"DocumentRepresentation": "document_representations",
	"CustomFieldDefinition":  "custom_field_definitions",
	"CustomFieldOption":      "custom_field_options",
	"CustomField":            "custom_fields",
	"TrackingRequest":        "tracking_requests",
}

// columnOf names the column of fields whose name is not their column's.
var columnOf = map[string]string{
	"Document.downloadUrl":        "", // no column: files_test.go
	"TrackingRequest.customField": "", // no column: tracking_request_custom_fields_test.go
	"EmailSubmission.from":        "from_addresses",
	"EmailSubmission.to":          "to_addresses",
	"EmailSubmission.cc":          "cc_addresses",
}

// toOneColumn names the foreign key behind to-one relationships whose
// column is not <field>_id; unions list one column per member type.
var toOneColumn = map[string]map[string]string{
	"Shipment.destination":          {"Port": "destination_port_id", "MetroArea": "destination_metro_area_id"},
	"Shipment.destinationTerminal":  {"Terminal": "destination_terminal_id", "RailTerminal": "destination_rail_terminal_id"},
	"CustomField.entity":            {"Shipment": "shipment_id", "Container": "container_id", "TrackingRequest": "tracking_request_id"},
	"Container.pickupFacility":      {"Terminal": "pickup_facility_id"},
	"TrackingRequest.trackedObject": {"Shipment": "shipment_id"},
}

// checkedElsewhere are fields with no column of their own, and the test
// that covers them.
var checkedElsewhere = map[string]string{
	"CustomField.apiSlug":                "testCustomFieldRelationships (the definition's slug)",
	"CustomField.displayValue":           "testCustomFieldRelationships (labels, formats)",
	"Container.importDeadlines":          "below: the three pickup_lfd_* columns",
	"Container.holdsAtPodTerminal":       "below: holds_at_pod_terminal jsonb",
	"Container.feesAtPodTerminal":        "below: fees_at_pod_terminal jsonb",
	"Shipment.customField":               "testShipmentRelationships",
	"TrackingRequest.customField":        "TestTrackingRequestCustomFieldsGraphQL",
	"DocumentRepresentation.payload":     "below: jsonb equality",
	"CustomFieldDefinition.validation":   "below: jsonb equality",
	"CustomFieldDefinition.defaultValue": "below: jsonb equality",
	"CustomField.value":                  "below: jsonb equality",
	"Document.downloadUrl":               "TestDocumentFilesGraphQL (a signed URL, no column)",
}

type introField struct {
	Name string
	Args []struct {
		Name string
		Type introType
	}
	Type introType
}

type introType struct {
	Kind   string
	Name   *string
	OfType *introType
}

// named unwraps NON_NULL and LIST.
func (t introType) named() (kind, name string, list, nonNull bool) {
	nonNull = t.Kind == "NON_NULL"
	for t.Kind == "NON_NULL" || t.Kind == "LIST" {
		if t.Kind == "LIST" {
			list = true
		}
		t = *t.OfType
	}
	return t.Kind, *t.Name, list, nonNull
}

const typeIntrospection = `query($name: String!) {
  __type(name: $name) {
    kind
    possibleTypes { name }
    interfaces { name }
    fields {
      name
      args { name type { kind name ofType { kind name } } }
      type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } }
    }
  }
}`

type introTypeDef struct {
	Kind          string
	PossibleTypes []struct{ Name string }
	Interfaces    []struct{ Name string }
	Fields        []introField
}

func introspect(t *testing.T, e *testkit.Env, k, name string) introTypeDef {
	t.Helper()
	var d struct {
		Type introTypeDef `json:"__type"`
	}
	e.Must(t, k, typeIntrospection, testkit.Vars{"name": name}, &d)
	return d.Type
}

// selection selects every field of an object type: leaves by name,
// relationships by __typename and id, small value objects (holds, fees,
// deadlines) by all their leaves.
func selection(t *testing.T, e *testkit.Env, k string, def introTypeDef) string {
	var b strings.Builder
	for _, f := range def.Fields {
		kind, name, _, _ := f.Type.named()
		args := ""
		for _, a := range f.Args {
			if a.Type.Kind == "NON_NULL" {
				args = "(apiSlug: \"customer_po\")" // the only field with a required argument
				if a.Name != "apiSlug" {
					t.Fatalf("%s has required argument %s: teach the test a value for it", f.Name, a.Name)
				}
			}
		}
		switch kind {
		case "SCALAR", "ENUM":
			b.WriteString(f.Name + " ")
		case "OBJECT", "UNION", "INTERFACE":
			sub := introspect(t, e, k, name)
			if kind == "OBJECT" && !implementsNode(sub) {
				b.WriteString(f.Name + args + " { ")
				for _, sf := range sub.Fields {
					b.WriteString(sf.Name + " ")
				}
				b.WriteString("} ")
				continue
			}
			if kind == "OBJECT" && !isNode(sub) {
				// A record with an id that is not a Node (a
				// container's transport and raw events): its id.
				b.WriteString(f.Name + args + " { __typename id } ")
				continue
			}
			b.WriteString(f.Name + args + " { __typename ... on Node { id } } ")
		default:
			t.Fatalf("field %s of kind %s", f.Name, kind)
		}
	}
	return b.String()
}

// isNode: the type implements Node.
func isNode(d introTypeDef) bool {
	for _, i := range d.Interfaces {
		if i.Name == "Node" {
			return true
		}
	}
	return false
}

func implementsNode(d introTypeDef) bool {
	for _, f := range d.Fields {
		if f.Name == "id" {
			return true
		}
	}
	return false
}

var upperSnake = regexp.MustCompile(`([a-z0-9])([A-Z])`)

func snake(s string) string { return strings.ToLower(upperSnake.ReplaceAllString(s, "${1}_${2}")) }

// sampleIDs picks records of a table visible to acme: its own rows, or
// shared reference rows. The sample leans on rows with few NULLs so most
// nullable attributes are compared with a value at least once.
func sampleIDs(t *testing.T, e *testkit.Env, table, acme string, n int) []string {
	var ids []string
	const density = "(SELECT count(*) FROM jsonb_each(to_jsonb(x)) j WHERE j.value <> 'null'::jsonb)"
	switch table {
	case "custom_field_options":
		e.SQL(t, &ids, `SELECT x.id FROM custom_field_options x JOIN custom_field_definitions d ON d.account_id = x.account_id AND d.id = x.definition_id
			WHERE d.account_id = $1 ORDER BY x.id LIMIT $2`, acme, n)
	case "ports", "metro_areas", "terminals", "rail_terminals", "shipping_lines":
		e.SQL(t, &ids, `SELECT x.id FROM `+table+` x ORDER BY `+density+` DESC, x.id LIMIT $1`, n)
	case "accounts":
		ids = []string{acme}
	default:
		e.SQL(t, &ids, `(SELECT x.id FROM `+table+` x WHERE x.account_id = $1 ORDER BY `+density+` DESC, x.id LIMIT $2)
			UNION (SELECT x.id FROM `+table+` x WHERE x.account_id = $1 ORDER BY x.id LIMIT $2)`, acme, n/2)
	}
	if len(ids) == 0 {
		t.Fatalf("no %s in the seeded data", table)
	}
	return ids
}

func testEveryAttribute(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	acme := e.Account(t, "acme")
	node := introspect(t, e, k, "Node")
	if len(node.PossibleTypes) != len(nodeTables) {
		t.Errorf("Node has %d implementations, the test knows %d", len(node.PossibleTypes), len(nodeTables))
	}
	for _, pt := range node.PossibleTypes {
		typ := pt.Name
		t.Run(typ, func(t *testing.T) {
			table, ok := nodeTables[typ]
			if !ok {
				t.Fatalf("Node type %s has no table in the test", typ)
			}
			def := introspect(t, e, k, typ)
			sel := selection(t, e, k, def)
			ids := sampleIDs(t, e, table, acme, 24)
			nonNullSeen := map[string]bool{}
			for start := 0; start < len(ids); start += 12 {
				batch := ids[start:min(start+12, len(ids))]
				var q strings.Builder
				q.WriteString("query(")
				for i := range batch {
					fmt.Fprintf(&q, "$id%d: ID! ", i)
				}
				q.WriteString(") {")
				vars := testkit.Vars{}
				for i, id := range batch {
					fmt.Fprintf(&q, " n%d: node(id: $id%d) { __typename ... on %s { %s } }", i, i, typ, sel)
					vars[fmt.Sprintf("id%d", i)] = id
				}
				q.WriteString(" }")
				var got map[string]map[string]any
				e.Must(t, k, q.String(), vars, &got)
				for i, id := range batch {
					obj := got[fmt.Sprintf("n%d", i)]
					if obj == nil {
						t.Fatalf("node(%s) is null; want the %s", id, typ)
					}
					if obj["__typename"] != typ {
						t.Fatalf("node(%s) is a %v, want %s", id, obj["__typename"], typ)
					}
					rowJSON := e.Text(t, `SELECT to_jsonb(x)::text FROM `+table+` x WHERE x.id = $1`, id)
					var row map[string]any
					if err := json.Unmarshal([]byte(rowJSON), &row); err != nil {
						t.Fatal(err)
					}
					for _, f := range def.Fields {
						if obj[f.Name] != nil {
							nonNullSeen[f.Name] = true
						}
						compareField(t, typ, id, f, obj[f.Name], row)
					}
				}
			}
			// A nullable attribute that is null on every sampled row is
			// suspicious (bound to the wrong struct field?) unless the
			// column is NULL on all of them too.
			for _, f := range def.Fields {
				if nonNullSeen[f.Name] {
					continue
				}
				col := columnFor(typ, f)
				if col == "" {
					continue
				}
				var n int
				e.SQL(t, &n, `SELECT count(*) FROM `+table+` x WHERE x.id = ANY($1::uuid[]) AND x.`+col+` IS NOT NULL`, pqArray(ids))
				if n > 0 {
					t.Errorf("%s.%s is null on all %d sampled records, but %s is set on %d", typ, f.Name, len(ids), col, n)
				}
			}
		})
	}
}

// columnFor returns the column a field reads, "" for fields checked another way.
func columnFor(typ string, f introField) string {
	if c, ok := columnOf[typ+"."+f.Name]; ok {
		return c
	}
	kind, _, list, _ := f.Type.named()
	switch {
	case kind == "SCALAR" || kind == "ENUM":
		return snake(f.Name)
	case !list && kind == "OBJECT" && toOneColumn[typ+"."+f.Name] == nil:
		return snake(f.Name) + "_id"
	}
	return ""
}

func compareField(t *testing.T, typ, id string, f introField, got any, row map[string]any) {
	t.Helper()
	name := typ + "." + f.Name
	kind, fieldType, list, nonNull := f.Type.named()
	where := fmt.Sprintf("%s(%s).%s", typ, id, f.Name)
	if nonNull && got == nil {
		t.Errorf("%s is null but non-null in the schema", where)
		return
	}
	switch name {
	case "Container.holdsAtPodTerminal", "Container.feesAtPodTerminal":
		compareValueObjects(t, where, got, row[snake(f.Name)])
		return
	case "Container.importDeadlines":
		want := map[string]any{}
		for _, c := range []string{"pickup_lfd_terminal", "pickup_lfd_rail", "pickup_lfd_line"} {
			want[c] = row[c]
		}
		if got == nil {
			for c, v := range want {
				if v != nil {
					t.Errorf("%s is null but %s is %v", where, c, v)
				}
			}
			return
		}
		m := got.(map[string]any)
		compareScalar(t, where+".pickupLfdTerminal", "DateTime", m["pickupLfdTerminal"], want["pickup_lfd_terminal"])
		compareScalar(t, where+".pickupLfdRail", "DateTime", m["pickupLfdRail"], want["pickup_lfd_rail"])
		compareScalar(t, where+".pickupLfdLine", "DateTime", m["pickupLfdLine"], want["pickup_lfd_line"])
		return
	case "DocumentRepresentation.payload", "CustomFieldDefinition.validation", "CustomFieldDefinition.defaultValue", "CustomField.value":
		if !reflect.DeepEqual(got, row[snake(f.Name)]) {
			t.Errorf("%s = %v, want %v", where, got, row[snake(f.Name)])
		}
		return
	}
	if _, ok := checkedElsewhere[name]; ok {
		return
	}
	switch {
	case kind == "SCALAR" || kind == "ENUM":
		col := columnFor(typ, f)
		want, ok := row[col]
		if !ok {
			t.Errorf("%s: no column %s in %s and no rule in the test", where, col, nodeTables[typ])
			return
		}
		if list {
			compareList(t, where, got, want)
			return
		}
		if kind == "ENUM" {
			fieldType = "ENUM"
		}
		compareScalar(t, where, fieldType, got, want)
	case list:
		// To-many relationships: checked against the join tables by the
		// relationship tests; here they only have to resolve.
		if got == nil {
			t.Errorf("%s is null; want a list", where)
		}
	default:
		var wantID any
		var wantType string
		if cols, ok := toOneColumn[name]; ok {
			for mt, c := range cols {
				if row[c] != nil {
					wantID, wantType = row[c], mt
				}
			}
		} else if c := snake(f.Name) + "_id"; row[c] != nil || hasKey(row, c) {
			wantID, wantType = row[c], fieldType
		} else {
			t.Errorf("%s: no column %s_id and no rule in the test", where, snake(f.Name))
			return
		}
		if wantID == nil {
			if got != nil {
				t.Errorf("%s = %v, want null", where, got)
			}
			return
		}
		m, _ := got.(map[string]any)
		if m == nil || m["id"] != wantID || (kind != "INTERFACE" && m["__typename"] != wantType) {
			t.Errorf("%s = %v, want the %s %v", where, got, wantType, wantID)
		}
	}
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

func compareScalar(t *testing.T, where, typ string, got, want any) {
	t.Helper()
	if want == nil || got == nil {
		if want != got {
			t.Errorf("%s = %v, want %v", where, got, want)
		}
		return
	}
	switch typ {
	case "DateTime":
		g, err1 := time.Parse(time.RFC3339Nano, got.(string))
		w, err2 := time.Parse(time.RFC3339Nano, want.(string))
		if err1 != nil || err2 != nil || !g.Equal(w) {
			t.Errorf("%s = %v, want %v", where, got, want)
		}
	case "ENUM":
		w := strings.ToUpper(strings.NewReplacer(" ", "_", "-", "_").Replace(fmt.Sprint(want)))
		if got != w {
			t.Errorf("%s = %v, want %v (%v)", where, got, w, want)
		}
	case "Float", "Int":
		g, w := got.(float64), want.(float64)
		if math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
			t.Errorf("%s = %v, want %v", where, got, want)
		}
	default:
		if got != want {
			t.Errorf("%s = %#v, want %#v", where, got, want)
		}
	}
}

func compareList(t *testing.T, where string, got, want any) {
	t.Helper()
	if want == nil {
		want = []any{}
	}
	if got == nil {
		got = []any{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %v, want %v", where, got, want)
	}
}

// compareValueObjects compares holds or fees with the jsonb array they
// come from: same entries in order, every member present, enums renamed.
func compareValueObjects(t *testing.T, where string, got, want any) {
	t.Helper()
	g, _ := got.([]any)
	w, _ := want.([]any)
	if len(g) != len(w) {
		t.Errorf("%s has %d entries, the column %d", where, len(g), len(w))
		return
	}
	for i := range g {
		gm, wm := g[i].(map[string]any), w[i].(map[string]any)
		for wk, wv := range wm {
			gk := lowerCamel(wk)
			gv, ok := gm[gk]
			if !ok {
				t.Errorf("%s[%d] has no %s (column member %s)", where, i, gk, wk)
				continue
			}
			if s, isStr := wv.(string); isStr && (gk == "status" || gk == "type") {
				wv = strings.ToUpper(s)
			}
			if !reflect.DeepEqual(gv, wv) {
				t.Errorf("%s[%d].%s = %v, want %v", where, i, gk, gv, wv)
			}
		}
	}
}

func lowerCamel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// pqArray renders ids as a PostgreSQL array literal.
func pqArray(ids []string) string { return "{" + strings.Join(ids, ",") + "}" }
