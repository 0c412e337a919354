package catalog_test

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"shipgraph/catalog"
	"shipgraph/graph/executor"
)

// loadSchema is the schema the executor was generated from:
// schema.graphqls with the federation directives and types gqlgen adds.
func loadSchema(t *testing.T) *ast.Schema {
	t.Helper()
	return executor.NewExecutableSchema(executor.Config{}).Schema()
}

// possible are the object types a GraphQL type may be, sorted.
func possible(s *ast.Schema, name string) []string {
	var out []string
	for _, d := range s.GetPossibleTypes(s.Types[name]) {
		out = append(out, d.Name)
	}
	sort.Strings(out)
	return out
}

func targetsOf(rel *catalog.Rel, name func(*catalog.Resource) string) []string {
	if rel.Via != nil {
		rel = rel.Via
	}
	var out []string
	for _, t := range rel.Targets {
		out = append(out, name(t.Resource))
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// TestSchemaMatchesCatalogue: every field of a resource's GraphQL type that
// leads to resources is a relationship of the catalogue with the same
// target types and cardinality, and every relationship the catalogue gives
// a GraphQL field is one of the schema.
func TestSchemaMatchesCatalogue(t *testing.T) {
	s := loadSchema(t)
	isResource := func(typ string) bool {
		ps := possible(s, typ)
		if len(ps) == 0 || s.Types[typ].Kind == ast.Scalar || s.Types[typ].Kind == ast.Enum {
			return false
		}
		for _, p := range ps {
			if catalog.ByGraphQL(p) == nil {
				return false
			}
		}
		return true
	}
	for _, res := range catalog.Resources() {
		def := s.Types[res.GraphQL]
		if def == nil || def.Kind != ast.Object {
			t.Errorf("%s: no object type in the schema", res.GraphQL)
			continue
		}
		for _, f := range def.Fields {
			if !isResource(f.Type.Name()) {
				continue
			}
			rel := res.Rel(f.Name)
			if rel == nil {
				t.Errorf("%s.%s leads to %s but is not in the catalogue", res.GraphQL, f.Name, f.Type.Name())
				continue
			}
			if got, want := targetsOf(res.Rel(f.Name), func(r *catalog.Resource) string { return r.GraphQL }), possible(s, f.Type.Name()); !slices.Equal(got, want) {
				t.Errorf("%s.%s: catalogue targets %v, schema %v", res.GraphQL, f.Name, got, want)
			}
			declared := res.Rel(f.Name)
			for _, r := range res.Rels {
				if r.GraphQL == f.Name {
					declared = r
				}
			}
			if list := f.Type.Elem != nil; list != declared.Many {
				t.Errorf("%s.%s: list %v in the schema, many %v in the catalogue", res.GraphQL, f.Name, list, declared.Many)
			}
		}
		for _, rel := range res.Rels {
			if rel.GraphQL == "" {
				continue
			}
			if def.Fields.ForName(rel.GraphQL) == nil {
				t.Errorf("%s.%s is in the catalogue but not in the schema", res.GraphQL, rel.GraphQL)
			}
		}
	}
}

// notHeld are the OpenAPI targets of relationships whose records Shipgraph
// does not hold: they have no target in the catalogue. Tracking requests
// are targets only of the relationships referenceOnlyIn names (a webhook
// notification's reference object, a custom field's entity): those must
// name them, no other.
var (
	notHeld         = map[string]bool{"tracking_request": true}
	referenceOnly   = map[string]bool{"tracking_request": true}
	referenceOnlyIn = map[string]bool{"webhook_notification.reference_object": true, "custom_field.entity": true}
	// misnamed are linkages whose type the OpenAPI document gives under
	// another key: transport_event.vessel's data has "name": ["vessel"].
	misnamed = map[string][]string{"transport_event.vessel": {"vessel"}}
	// narrower are relationships whose catalogue targets are fewer than
	// the document's, and why: an estimated event names no vessel (null);
	// a raw event's location is a port (carriers name no metro areas).
	narrower = map[string][]string{"estimated_event.vessel": {}, "raw_event.location": {"port"}}
)

// TestOpenAPIMatchesCatalogue: every relationship member the OpenAPI
// document (testdata, copied from rest/testdata) gives a resource exists in
// the catalogue with the same target types, and every /v2 member of the
// catalogue is one of the document's. The document's known error (the
// container's type enum says account) is patched in the copy.
func TestOpenAPIMatchesCatalogue(t *testing.T) {
	raw, err := os.ReadFile("testdata/openapi-schemas.json")
	if err != nil {
		t.Fatal(err)
	}
	type typeEnum struct {
		Enum []string `json:"enum"`
	}
	type linkage struct {
		Properties struct {
			Data struct {
				Items *struct {
					Properties struct {
						Type typeEnum `json:"type"`
					} `json:"properties"`
				} `json:"items"`
				Properties struct {
					Type typeEnum `json:"type"`
				} `json:"properties"`
			} `json:"data"`
		} `json:"properties"`
	}
	var doc struct {
		Defs map[string]struct {
			Properties struct {
				Type          typeEnum `json:"type"`
				Relationships *struct {
					Properties map[string]linkage `json:"properties"`
				} `json:"relationships"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]map[string]bool{}
	checked := 0
	for name, def := range doc.Defs {
		if def.Properties.Relationships == nil || len(def.Properties.Type.Enum) != 1 {
			continue
		}
		typ := def.Properties.Type.Enum[0]
		res := catalog.ByJSONAPI(typ)
		if res == nil {
			if !notHeld[typ] {
				t.Errorf("OpenAPI %s: type %s is not in the catalogue", name, typ)
			}
			continue
		}
		if seen[typ] == nil {
			seen[typ] = map[string]bool{}
		}
		for member, l := range def.Properties.Relationships.Properties {
			seen[typ][member] = true
			checked++
			rel := res.Member(member)
			if rel == nil || rel.JSONAPI != member {
				t.Errorf("OpenAPI %s.%s is not a relationship of the catalogue", typ, member)
				continue
			}
			want := l.Properties.Data.Properties.Type.Enum
			if m, ok := misnamed[typ+"."+member]; ok {
				want = m
			}
			if many := l.Properties.Data.Items != nil; many {
				want = l.Properties.Data.Items.Properties.Type.Enum
			}
			if (l.Properties.Data.Items != nil) != rel.Many {
				t.Errorf("%s.%s: many %v in the catalogue, not in the OpenAPI document", typ, member, rel.Many)
			}
			var held []string
			for _, w := range want {
				if referenceOnly[w] && referenceOnlyIn[typ+"."+member] || !notHeld[w] {
					held = append(held, w)
				}
			}
			sort.Strings(held)
			if n, ok := narrower[typ+"."+member]; ok {
				held = n
			}
			if got := targetsOf(rel, func(r *catalog.Resource) string { return r.JSONAPI }); !slices.Equal(got, held) {
				t.Errorf("%s.%s: catalogue targets %v, OpenAPI %v", typ, member, got, want)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d relationships in the OpenAPI copy", checked)
	}
	for _, res := range catalog.Resources() {
		for _, rel := range res.Members() {
			if !seen[res.JSONAPI][rel.JSONAPI] {
				t.Errorf("%s.%s is in the catalogue but in no OpenAPI %s", res.JSONAPI, rel.JSONAPI, res.JSONAPI)
			}
		}
	}
}

// TestSlots: each target's Rel slot is a field of the record's Rel, and
// attaching stores there; the relationship's Go name is its slot.
func TestSlots(t *testing.T) {
	for _, res := range catalog.Resources() {
		for _, rel := range res.Rels {
			if rel.Via != nil {
				continue
			}
			for _, tg := range rel.Targets {
				rec := reflect.New(res.Go.Elem())
				slot := rec.Elem().FieldByName("Rel").FieldByName(tg.Slot)
				if !slot.IsValid() {
					t.Errorf("%s.%s: no Rel.%s", res.GraphQL, rel.PlanName(), tg.Slot)
					continue
				}
				v := reflect.MakeSlice(reflect.SliceOf(slot.Type().Elem()), 0, 0)
				if slot.Kind() != reflect.Slice {
					v = reflect.New(slot.Type().Elem())
				}
				tg.Attach(rec.Interface(), v.Interface())
				if slot.IsNil() {
					t.Errorf("%s.%s: attaching did not set Rel.%s", res.GraphQL, rel.PlanName(), tg.Slot)
				}
				if tg.Resource == nil || tg.Read == nil || tg.KeyCol == "" {
					t.Errorf("%s.%s: incomplete target", res.GraphQL, rel.PlanName())
				}
			}
			if len(rel.Targets) == 1 && rel.Go != rel.Targets[0].Slot {
				t.Errorf("%s.%s: Go name %q, slot %q", res.GraphQL, rel.PlanName(), rel.Go, rel.Targets[0].Slot)
			}
		}
	}
}

// TestReadsUsed: every read of the catalogue reads a resource by id or a
// relationship.
func TestReadsUsed(t *testing.T) {
	used := map[catalog.Read]bool{}
	for _, res := range catalog.Resources() {
		if res.ByID != nil {
			used[res.ByID] = true
		}
		for _, rel := range res.Rels {
			for _, tg := range rel.Targets {
				used[tg.Read] = true
			}
		}
	}
	for i, r := range catalog.Reads() {
		if r.Index() != i {
			t.Errorf("%s: index %d at %d", r.Name(), r.Index(), i)
		}
		if !used[r] {
			t.Errorf("%s: no resource or relationship reads through it", r.Name())
		}
	}
}
