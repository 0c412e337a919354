package graph_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"shipgraph/catalog"
	"shipgraph/graph/executor"
	"shipgraph/graph/gqlhttp"
	"shipgraph/testkit"
)

// entitiesQuery is what a gateway sends for shipments: the representations
// as a variable, the fields it needs on an inline fragment, relationships
// two levels deep (containers, their terminal and its port).
const entitiesQuery = `query($representations: [_Any!]!) { _entities(representations: $representations) {
	__typename
	... on Shipment { id billOfLadingNumber containers { number podTerminal { name port { code } } } customFields { apiSlug } }
	... on Container { id number shipment { id } }
	... on Port { id code name }
	... on ShippingLine { id scac name }
	... on Terminal { id name port { code } }
	... on Document { id name }
	... on CustomFieldDefinition { id apiSlug options { value } }
} }`

type entity struct {
	Typename           string `json:"__typename"`
	ID                 string
	BillOfLadingNumber string
	Containers         []struct {
		Number      string
		PodTerminal *struct {
			Name string
			Port struct{ Code string }
		}
	}
	Number  string
	Code    string
	Scac    string
	Name    string
	APISlug string
}

func reps(typ, key string, values ...string) []map[string]any {
	out := make([]map[string]any, len(values))
	for i, v := range values {
		out[i] = map[string]any{"__typename": typ, key: v}
	}
	return out
}

func idsOf(t *testing.T, e *testkit.Env, query string, args ...any) []string {
	t.Helper()
	var out []string
	for _, r := range e.Rows(t, query, args...) {
		out = append(out, r[0])
	}
	if len(out) == 0 {
		t.Fatalf("no rows: %s", query)
	}
	return out
}

// testEntitiesStatements: 100 representations cost the statements of one
// (the shipments, then one statement per relationship and level of the
// selection), and several entity types together one more per type. Serial:
// it reads the process-wide counter too.
func testEntitiesStatements(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	ships := idsOf(t, e, `SELECT id FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 100`, e.Account(t, "acme"))
	if len(ships) < 100 {
		t.Fatalf("want 100 shipments, seeded %d", len(ships))
	}
	e.Must(t, k, entitiesQuery, testkit.Vars{"representations": reps("Shipment", "id", ships[:100]...)}, nil) // warm
	counts := map[int][]int64{}
	for _, n := range []int{1, 10, 100} {
		for range 5 {
			var d struct {
				Entities []*entity `json:"_entities"`
			}
			res := scrapedMatches(t, fmt.Sprintf("%d representations", n), func() *testkit.Result {
				return e.Must(t, k, entitiesQuery, testkit.Vars{"representations": reps("Shipment", "id", ships[:n]...)}, &d)
			})
			counts[n] = append(counts[n], res.Statements)
			if len(d.Entities) != n {
				t.Fatalf("%d representations, %d entities", n, len(d.Entities))
			}
			withContainers := 0
			for i, en := range d.Entities {
				if en == nil || en.ID != ships[i] || en.Typename != "Shipment" || en.BillOfLadingNumber == "" {
					t.Fatalf("entity %d: %+v, want shipment %s", i, en, ships[i])
				}
				if len(en.Containers) > 0 && en.Containers[0].Number != "" {
					withContainers++
				}
			}
			if n == 100 && withContainers == 0 {
				t.Errorf("no shipment came with its containers")
			}
		}
	}
	t.Logf("statements for 1, 10, 100 shipment representations: %v", counts)
	if a, b := slices.Max(counts[1]), slices.Max(counts[100]); a != b || slices.Min(counts[1]) != slices.Min(counts[100]) || slices.Max(counts[10]) != a {
		t.Errorf("_entities cost depends on the number of representations: %v", counts)
	}
	// shipments, custom fields, containers, terminals, ports: 5.
	if m := slices.Max(counts[100]); m > 5 {
		t.Errorf("100 shipment representations cost %d statements, want at most 5", m)
	}
}

// testEntities: every entity type and key resolves, in the order of the
// representations; unknown, malformed and another account's keys are null
// (never the record, never an error), for every entity type of account
// data.
func testEntities(t *testing.T, e *testkit.Env) {
	acme, globex := e.Account(t, "acme"), e.Account(t, "globex")
	k := e.Key(t, acmeViewer)
	for _, typ := range []string{"Shipment", "Container", "Document", "CustomFieldDefinition"} {
		own := idsOf(t, e, strings.Replace(accountRecords[typ], "LIMIT 1", "LIMIT 2", 1), acme)
		other := idsOf(t, e, accountRecords[typ], globex)
		keys := []string{own[0], other[0], "00000000-0000-0000-0000-000000000000", "not-a-uuid", strings.ToUpper(own[len(own)-1])}
		var d struct {
			Entities []*entity `json:"_entities"`
		}
		e.Must(t, k, entitiesQuery, testkit.Vars{"representations": reps(typ, "id", keys...)}, &d)
		if len(d.Entities) != len(keys) {
			t.Fatalf("%s: %d entities for %d representations", typ, len(d.Entities), len(keys))
		}
		if en := d.Entities[0]; en == nil || en.ID != own[0] || en.Typename != typ {
			t.Errorf("%s: own record: %+v", typ, en)
		}
		for i := 1; i < 4; i++ {
			if d.Entities[i] != nil {
				t.Errorf("%s: %s resolved to %+v, want null", typ, keys[i], d.Entities[i])
			}
		}
		if en := d.Entities[4]; en == nil || en.ID != own[len(own)-1] {
			t.Errorf("%s: an upper-case id: %+v", typ, en)
		}
	}

	// Reference data, shared by every account, by id and by natural key.
	port := e.Rows(t, `SELECT id, code, name FROM ports ORDER BY code LIMIT 1`)[0]
	line := e.Rows(t, `SELECT id, scac, name FROM shipping_lines ORDER BY scac LIMIT 1`)[0]
	term := e.Rows(t, `SELECT t.id, t.name, p.code FROM terminals t JOIN ports p ON p.id = t.port_id ORDER BY t.id LIMIT 1`)[0]
	var alt []string
	for _, r := range e.Rows(t, `SELECT a, l.id FROM shipping_lines l, unnest(l.alternative_scacs) a
		WHERE a NOT IN (SELECT scac FROM shipping_lines) ORDER BY a LIMIT 1`) {
		alt = r
	}
	for _, c := range []struct {
		name string
		reps []map[string]any
		want []string // per representation: "id" or "" for null
	}{
		{"port by id", reps("Port", "id", port[0], "00000000-0000-0000-0000-000000000000"), []string{port[0], ""}},
		{"port by UN/LOCODE", reps("Port", "code", port[1], strings.ToLower(port[1]), "ZZZZZ", "nope"), []string{port[0], port[0], "", ""}},
		{"shipping line by id", reps("ShippingLine", "id", line[0], "x"), []string{line[0], ""}},
		{"shipping line by SCAC", reps("ShippingLine", "scac", line[1], "QQQQ"), []string{line[0], ""}},
		{"terminal by id", reps("Terminal", "id", term[0]), []string{term[0]}},
		{"several types at once", append(reps("Port", "code", port[1]), append(reps("Terminal", "id", term[0]), reps("Shipment", "id", idsOf(t, e, accountRecords["Shipment"], acme)[0])...)...),
			[]string{port[0], term[0], idsOf(t, e, accountRecords["Shipment"], acme)[0]}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var d struct {
				Entities []*entity `json:"_entities"`
			}
			e.Must(t, k, entitiesQuery, testkit.Vars{"representations": c.reps}, &d)
			if len(d.Entities) != len(c.want) {
				t.Fatalf("%d entities, want %d", len(d.Entities), len(c.want))
			}
			for i, w := range c.want {
				switch got := d.Entities[i]; {
				case w == "" && got != nil:
					t.Errorf("representation %d: %+v, want null", i, got)
				case w != "" && (got == nil || got.ID != w):
					t.Errorf("representation %d: %+v, want %s", i, got, w)
				}
			}
		})
	}
	if alt != nil {
		var d struct {
			Entities []*entity `json:"_entities"`
		}
		e.Must(t, k, entitiesQuery, testkit.Vars{"representations": reps("ShippingLine", "scac", alt[0])}, &d)
		if d.Entities[0] == nil || d.Entities[0].ID != alt[1] {
			t.Errorf("shipping line by alternative SCAC %s: %+v, want %s", alt[0], d.Entities[0], alt[1])
		}
	}

	// Without a key, nothing.
	res := e.Do(t, "", entitiesQuery, testkit.Vars{"representations": reps("Port", "code", port[1])})
	if !slices.Contains(res.Codes(), "UNAUTHENTICATED") || strings.Contains(string(res.Data), port[0]) {
		t.Errorf("without a key: %s", res)
	}
}

// testService: _service.sdl is the schema a gateway composes, a federation
// v2 subgraph with the entity keys.
func testService(t *testing.T, e *testkit.Env) {
	var d struct {
		Service struct{ SDL string } `json:"_service"`
	}
	e.Must(t, e.Key(t, acmeViewer), `{ _service { sdl } }`, nil, &d)
	for _, want := range []string{
		`extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])`,
		`type Shipment implements Node @key(fields: "id")`,
		`type Port implements Node @key(fields: "id") @key(fields: "code")`,
		`type ShippingLine implements Node @key(fields: "id") @key(fields: "scac")`,
	} {
		if !strings.Contains(d.Service.SDL, want) {
			t.Errorf("_service.sdl lacks %s", want)
		}
	}
}

// TestEntitiesFastPath: the fast path hands _entities and _service over to
// gqlgen's executor (their resolvers are gqlgen's own, federation.go), and
// the answer is gqlgen's.
func TestEntitiesFastPath(t *testing.T) {
	e := testkit.New(t, testkit.Options{Shipments: 3})
	k := e.Key(t, acmeAdmin)
	ship := idsOf(t, e, accountRecords["Shipment"], e.Account(t, "acme"))[0]
	for _, q := range []string{
		`{ _service { __typename sdl } }`,
		`{ _entities(representations: [{__typename: "Shipment", id: "` + ship + `"}]) { __typename ... on Shipment { id } } }`,
	} {
		handed := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("handed_over"))
		res := e.Must(t, k, q, nil, nil)
		if d := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("handed_over")) - handed; d != 1 {
			t.Errorf("%s: handed over %v times, want 1", q, d)
		}
		var v map[string]json.RawMessage
		res.Decode(t, &v)
		if len(v) != 1 || (!strings.Contains(string(res.Data), ship) && !strings.Contains(string(res.Data), "sdl")) {
			t.Errorf("%s: %s", q, res.Data)
		}
	}
}

// TestEntityKeys: the entities are the list, each a resource of
// the catalogue keyed by id, reference data also by its natural key, and
// every key a non-null field of the type.
func TestEntityKeys(t *testing.T) {
	s := executor.NewExecutableSchema(executor.Config{}).Schema()
	want := map[string][]string{
		"Shipment": {"id"}, "Container": {"id"}, "Document": {"id"}, "Terminal": {"id"},
		"Port": {"id", "code"}, "ShippingLine": {"id", "scac"}, "CustomFieldDefinition": {"id"},
	}
	got := map[string][]string{}
	for name, def := range s.Types {
		for _, d := range def.Directives.ForNames("key") {
			field := d.Arguments.ForName("fields").Value.Raw
			got[name] = append(got[name], field)
			if f := def.Fields.ForName(field); f == nil || !f.Type.NonNull {
				t.Errorf("%s @key(fields: %q): no such non-null field", name, field)
			}
			if catalog.ByGraphQL(name) == nil {
				t.Errorf("%s is an entity but no resource of the catalogue", name)
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entity keys: %v, want %v", got, want)
	}
	if members := s.Types["_Entity"].Types; len(members) != len(want) {
		t.Errorf("_Entity = %v", members)
	}
}

// TestServiceIntrospectionOff: with introspection off, _service (the
// schema) is refused too, and _entities still answers.
func TestServiceIntrospectionOff(t *testing.T) {
	hc := gqlhttp.DefaultHandlerConfig
	hc.Introspection = false
	e := testkit.New(t, testkit.Options{Shipments: 3, Handler: &hc})
	k := e.Key(t, acmeAdmin)
	res := e.Do(t, k, `{ _service { sdl } }`, nil)
	if !slices.Equal(res.Codes(), []string{"FORBIDDEN"}) || strings.Contains(string(res.Data), "Shipment") {
		t.Errorf("_service with introspection off: %s", res)
	}
	ship := idsOf(t, e, accountRecords["Shipment"], e.Account(t, "acme"))[0]
	var d struct {
		Entities []*entity `json:"_entities"`
	}
	e.Must(t, k, entitiesQuery, testkit.Vars{"representations": reps("Shipment", "id", ship)}, &d)
	if len(d.Entities) != 1 || d.Entities[0] == nil || d.Entities[0].ID != ship {
		t.Errorf("_entities with introspection off: %+v", d.Entities)
	}
}
