package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/vektah/gqlparser/v2/ast"

	"shipgraph/db"
	"shipgraph/graph/executor"
	"shipgraph/graph/gqlhttp"
	"shipgraph/load"
	"shipgraph/testkit"
)

// TestFastPathRandom is a differential test of the fast path: queries
// generated at random from the executable schema (fields of the query root
// and of nested objects, inline and named fragments on objects, interfaces
// and unions, aliases, arguments as literals and as variables, @skip and
// @include on variables, __typename) are sent to the server's chain and to
// one with the fast path off (gqlgen's executor alone), over the same
// seeded database, and must be answered with the same bytes. Queries the
// server refuses (limits, bad arguments) are compared too: they are
// gqlgen's on both sides.
//
// FASTPATH_RANDOM_SEED sets the seed (default 1, so CI runs the same
// queries every time); FASTPATH_RANDOM_N the number of queries (default
// 300). A failure prints the seed, the query and its variables. Not
// parallel: it reads process-wide counters.
func TestFastPathRandom(t *testing.T) {
	seed := envInt(t, "FASTPATH_RANDOM_SEED", 1)
	n := envInt(t, "FASTPATH_RANDOM_N", 300)
	if testing.Short() {
		n = min(n, 50)
	}

	e := testkit.New(t, testkit.Options{Shipments: 30})
	k := e.Key(t, acmeAdmin)
	acme := e.Account(t, "acme")
	hc := gqlhttp.DefaultHandlerConfig
	hc.NoFastPath = true
	gq := testkit.Chain(t, e.Store, hc, load.DefaultLoaderConfig)
	fast := e.Handler

	g := newQueryGen(executor.NewExecutableSchema(executor.Config{}).Schema(), sampleValues(t, e, acme))
	var written, handedOver, refused int
	var wasted []int64 // statements of the fast attempt of handed-over queries
	start := time.Now()
	for i := range n {
		r := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
		q, vars := g.query(r)
		body, err := json.Marshal(map[string]any{"query": q, "variables": vars})
		if err != nil {
			t.Fatal(err)
		}
		w0 := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("written"))
		h0 := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("handed_over"))
		got, gotStmts := serve(t, fast, k, body)
		dw := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("written")) - w0
		dh := testutil.ToFloat64(executor.FastPathTotal.WithLabelValues("handed_over")) - h0
		want, wantStmts := serve(t, gq, k, body)
		hasErrors := bytes.Contains(want, []byte(`"errors"`))
		switch {
		case dw == 1 && dh == 0:
			written++
		case dw == 0 && dh == 1:
			handedOver++
			wasted = append(wasted, gotStmts-wantStmts)
		case dw == 0 && dh == 0:
			refused++ // before execution: validation, limits
		}
		fail := func(format string, args ...any) {
			t.Helper()
			vj, _ := json.Marshal(vars)
			t.Fatalf("query %d (FASTPATH_RANDOM_SEED=%d): %s\nquery: %s\nvariables: %s", i, seed, fmt.Sprintf(format, args...), q, vj)
		}
		if !sameResponse(got, want) {
			fail("fast path and gqlgen differ\nfast:   %s\ngqlgen: %s", got, want)
		}
		if dw+dh > 1 {
			fail("one operation counted %v written and %v handed over", dw, dh)
		}
		if dw == 1 && hasErrors {
			fail("a response with errors was written on the fast path: %s", want)
		}
	}
	sort.Slice(wasted, func(a, b int) bool { return wasted[a] < wasted[b] })
	t.Logf("seed %d: %d queries in %v: %d written on the fast path, %d handed over, %d refused before execution",
		seed, n, time.Since(start).Round(time.Millisecond), written, handedOver, refused)
	if len(wasted) > 0 {
		t.Logf("statements of the fast attempt of a handed-over query (fast path on minus off): median %d, max %d",
			wasted[len(wasted)/2], wasted[len(wasted)-1])
	}
	// The generator must exercise the fast path, not only gqlgen.
	if n >= 50 && written < n/2 {
		t.Errorf("only %d of %d queries were written on the fast path; the generator makes too many queries it refuses", written, n)
	}
	if n >= 50 && handedOver == 0 {
		t.Errorf("no query was handed over; the generator should also make some the fast path refuses")
	}
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return v
}

// serve sends body to h as a POST /graphql with key and returns the body
// of a 200 answer and the statements the request sent.
func serve(t *testing.T, h http.Handler, key string, body []byte) ([]byte, int64) {
	t.Helper()
	var n atomic.Int64
	req := httptest.NewRequestWithContext(db.WithQueryCounter(context.Background(), &n), http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Token "+key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s\nrequest: %s", rec.Code, rec.Body, body)
	}
	return rec.Body.Bytes(), n.Load()
}

// sameResponse compares two answers byte for byte, except that the errors
// of root fields resolved side by side may come in either order.
func sameResponse(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	type resp struct {
		Data   json.RawMessage   `json:"data"`
		Errors []json.RawMessage `json:"errors"`
	}
	var ra, rb resp
	if json.Unmarshal(a, &ra) != nil || json.Unmarshal(b, &rb) != nil || len(ra.Errors) == 0 {
		return false
	}
	key := func(m json.RawMessage) string { return string(m) }
	ea, eb := make([]string, len(ra.Errors)), make([]string, len(rb.Errors))
	for i := range ra.Errors {
		ea[i] = key(ra.Errors[i])
	}
	for i := range rb.Errors {
		eb[i] = key(rb.Errors[i])
	}
	slices.Sort(ea)
	slices.Sort(eb)
	return bytes.Equal(ra.Data, rb.Data) && slices.Equal(ea, eb)
}

// samples are values of the seeded database for arguments, so that
// lookups and filters find something most of the time.
type samples struct {
	ids   map[string][]string // by GraphQL type
	slugs []string            // custom field api slugs
	words map[string][]string // search terms by argument name
}

func sampleValues(t *testing.T, e *testkit.Env, acme string) *samples {
	s := &samples{ids: map[string][]string{}, words: map[string][]string{}}
	for typ, table := range nodeTables {
		s.ids[typ] = sampleIDs(t, e, table, acme, 6)
	}
	var ids []string
	e.SQL(t, &ids, `SELECT id::text FROM custom_field_definitions WHERE account_id = $1 ORDER BY id LIMIT 4`, acme)
	s.ids["CustomFieldDefinition"] = ids
	ids = nil
	e.SQL(t, &ids, `SELECT c.id::text FROM custom_fields c JOIN custom_field_definitions d ON d.account_id = c.account_id AND d.id = c.definition_id WHERE d.account_id = $1 ORDER BY c.id LIMIT 4`, acme)
	s.ids["CustomField"] = ids
	e.SQL(t, &s.slugs, `SELECT api_slug FROM custom_field_definitions WHERE account_id = $1 ORDER BY api_slug`, acme)
	s.slugs = append(s.slugs, "no_such_slug")
	var bls, numbers, scacs, tags, locodes []string
	e.SQL(t, &bls, `SELECT bill_of_lading_number FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 3`, acme)
	e.SQL(t, &numbers, `SELECT number FROM containers WHERE account_id = $1 ORDER BY id LIMIT 3`, acme)
	e.SQL(t, &scacs, `SELECT DISTINCT shipping_line_scac FROM shipments WHERE account_id = $1 ORDER BY 1 LIMIT 3`, acme)
	e.SQL(t, &tags, `SELECT DISTINCT unnest(tags) FROM shipments WHERE account_id = $1 ORDER BY 1 LIMIT 3`, acme)
	e.SQL(t, &locodes, `SELECT code FROM ports ORDER BY id LIMIT 2`)
	s.words["search"] = append(bls, append(numbers, "zz", "no \"such\" \\ thing\n")...)
	s.words["number"] = append(numbers, "NOPE1234567")
	s.words["shippingLineScacs"] = append(scacs, "XXXX")
	s.words["tags"] = append(tags, "no-such-tag")
	s.words["locode"] = locodes
	s.words["documentTypes"] = []string{"bill_of_lading", "commercial_invoice", "other"}
	s.words[""] = []string{"a", "ü é", "x\"y", "acme"}
	return s
}

// queryGen writes random valid queries over a schema.
type queryGen struct {
	schema *ast.Schema
	s      *samples
}

func newQueryGen(schema *ast.Schema, s *samples) *queryGen { return &queryGen{schema: schema, s: s} }

// Bounds: well inside the server's depth (12) and alias (15) limits; the
// complexity limit refuses some, which both sides answer alike.
const (
	genMaxDepth   = 5
	genMaxFields  = 40
	genMaxAliases = 12
)

// genQuery is the state of one query being written.
type genQuery struct {
	*queryGen
	r       *rand.Rand
	vars    map[string]any
	varDefs []string
	frags   []string
	fields  int
	aliases int
	names   int
}

func (g *queryGen) query(r *rand.Rand) (string, map[string]any) {
	q := &genQuery{queryGen: g, r: r, vars: map[string]any{}}
	root := g.schema.Query
	var body strings.Builder
	body.WriteString(q.selection(root, 0, 1+r.IntN(3)))
	var out strings.Builder
	out.WriteString("query Q")
	if len(q.varDefs) > 0 {
		out.WriteString("(" + strings.Join(q.varDefs, ", ") + ")")
	}
	out.WriteString(" " + body.String())
	for _, f := range q.frags {
		out.WriteString("\n" + f)
	}
	return out.String(), q.vars
}

func (q *genQuery) chance(p float64) bool { return q.r.Float64() < p }

func (q *genQuery) name(prefix string) string {
	q.names++
	return fmt.Sprintf("%s%d", prefix, q.names)
}

// respKeys tracks the response keys of one selection set, with its
// fragments (they merge into it): a key is used again only for the same
// field with the same arguments and type, else the field gets a fresh
// alias, so that merged fields never conflict.
type respKeys map[string]string

// selection writes a selection set for a value of type def.
func (q *genQuery) selection(def *ast.Definition, depth, want int) string {
	keys := respKeys{}
	var parts []string
	if def.Kind == ast.Union || q.chance(0.2) {
		parts = append(parts, q.typename(keys))
	}
	for range want {
		if q.fields >= genMaxFields {
			break
		}
		switch x := q.r.Float64(); {
		case def.Kind != ast.Object && x < 0.6 || x < 0.1:
			parts = append(parts, q.fragment(def, depth, keys))
		default:
			if f := q.field(def, depth, keys); f != "" {
				parts = append(parts, f)
			}
		}
	}
	if len(parts) == 0 {
		parts = append(parts, q.typename(keys))
	}
	return "{ " + strings.Join(parts, " ") + " }"
}

func (q *genQuery) typename(keys respKeys) string {
	if _, ok := keys["__typename"]; ok && q.aliases < genMaxAliases {
		q.aliases++
		return q.name("t") + ": __typename"
	}
	keys["__typename"] = "__typename"
	return "__typename"
}

// fragment writes an inline fragment or a named fragment spread on def or
// on one of its possible types, maybe under @skip or @include.
func (q *genQuery) fragment(def *ast.Definition, depth int, keys respKeys) string {
	on := def
	if types := q.schema.GetPossibleTypes(def); def.Kind != ast.Object && len(types) > 0 && q.chance(0.8) {
		on = types[q.r.IntN(len(types))]
	}
	inner := q.fragmentBody(on, depth, keys)
	dir := q.directive()
	switch x := q.r.Float64(); {
	case x < 0.4:
		name := q.name("F")
		q.frags = append(q.frags, fmt.Sprintf("fragment %s on %s %s", name, on.Name, inner))
		return "..." + name + dir
	case x < 0.5 && on == def:
		return "..." + dir + " " + inner
	default:
		return "... on " + on.Name + dir + " " + inner
	}
}

// fragmentBody is a selection set whose keys merge into the enclosing one.
func (q *genQuery) fragmentBody(on *ast.Definition, depth int, keys respKeys) string {
	var parts []string
	for range 1 + q.r.IntN(3) {
		if q.fields >= genMaxFields {
			break
		}
		if on.Kind == ast.Union || q.chance(0.1) {
			parts = append(parts, q.typename(keys))
			continue
		}
		if f := q.field(on, depth, keys); f != "" {
			parts = append(parts, f)
		}
	}
	if len(parts) == 0 {
		parts = append(parts, q.typename(keys))
	}
	return "{ " + strings.Join(parts, " ") + " }"
}

// directive is "", or @skip / @include on a variable or a literal.
func (q *genQuery) directive() string {
	if !q.chance(0.25) {
		return ""
	}
	name := "include"
	if q.chance(0.5) {
		name = "skip"
	}
	v := q.chance(0.5)
	if q.chance(0.2) {
		return fmt.Sprintf(" @%s(if: %t)", name, v)
	}
	vn := q.name("b")
	q.varDefs = append(q.varDefs, "$"+vn+": Boolean!")
	q.vars[vn] = v
	return fmt.Sprintf(" @%s(if: $%s)", name, vn)
}

// field writes one field of def: a leaf, or an object with a selection
// set of its own, with arguments, maybe aliased and maybe under a
// directive; "" when none fits.
func (q *genQuery) field(def *ast.Definition, depth int, keys respKeys) string {
	var candidates ast.FieldList
	for _, f := range def.Fields {
		if strings.HasPrefix(f.Name, "__") {
			continue
		}
		leaf := q.schema.Types[f.Type.Name()].Kind == ast.Scalar || q.schema.Types[f.Type.Name()].Kind == ast.Enum
		if depth >= genMaxDepth && !leaf {
			continue
		}
		candidates = append(candidates, f)
	}
	if len(candidates) == 0 {
		return ""
	}
	f := candidates[q.r.IntN(len(candidates))]
	q.fields++
	args := q.arguments(f)
	sig := f.Name + args + " " + f.Type.String()
	out := f.Name + args
	t := q.schema.Types[f.Type.Name()]
	composite := t.Kind != ast.Scalar && t.Kind != ast.Enum
	alias := q.chance(0.15)
	if old, used := keys[f.Name]; used && (old != sig || composite) {
		alias = true
	}
	if alias {
		if q.aliases >= genMaxAliases {
			q.fields--
			return ""
		}
		q.aliases++
		a := q.name("a")
		keys[a] = sig
		out = a + ": " + out
	} else {
		keys[f.Name] = sig
	}
	out += q.directive()
	if composite {
		out += " " + q.selection(t, depth+1, 1+q.r.IntN(4))
	}
	return out
}

// arguments writes some arguments of f: the required ones always, the
// others at random; each as a literal or a variable.
func (q *genQuery) arguments(f *ast.FieldDefinition) string {
	var args []string
	paging := q.r.IntN(6) // 0 none, 1 first, 2 last, 3 page, 4 first+after, 5 last+before
	for _, a := range f.Arguments {
		var v any
		switch a.Name {
		case "first":
			if paging != 1 && paging != 4 {
				continue
			}
			v = q.count()
		case "last":
			if paging != 2 && paging != 5 {
				continue
			}
			v = q.count()
		case "after", "before":
			if paging < 4 {
				continue
			}
			v = "bm90IGEgY3Vyc29y"
		case "page":
			if paging != 3 {
				continue
			}
			v = map[string]any{"number": 1 + q.r.IntN(3), "size": q.count()}
		default:
			if !a.Type.NonNull && !q.chance(0.4) {
				continue
			}
			v = q.value(a.Name, a.Type, f.Type.Name())
		}
		if q.chance(0.3) {
			vn := q.name("v")
			q.varDefs = append(q.varDefs, "$"+vn+": "+a.Type.String())
			q.vars[vn] = jsonValue(v)
			args = append(args, a.Name+": $"+vn)
			continue
		}
		args = append(args, a.Name+": "+literal(v))
	}
	if len(args) == 0 {
		return ""
	}
	return "(" + strings.Join(args, ", ") + ")"
}

// count is a page size: mostly 1 to 5, sometimes 0 or out of range.
func (q *genQuery) count() int {
	switch x := q.r.Float64(); {
	case x < 0.04:
		return 0
	case x < 0.07:
		return -1
	case x < 0.09:
		return 101
	}
	return 1 + q.r.IntN(5)
}

// enumValue is an enum value, written bare in a literal and as a string
// in variables.
type enumValue string

// value is a random value of type t for argument (or input field) name of
// a field returning the type named owner.
func (q *genQuery) value(name string, t *ast.Type, owner string) any {
	if t.Elem != nil {
		n := 1 + q.r.IntN(2)
		list := make([]any, n)
		for i := range list {
			list[i] = q.value(name, t.Elem, owner)
		}
		return list
	}
	def := q.schema.Types[t.Name()]
	switch def.Kind {
	case ast.Enum:
		return enumValue(def.EnumValues[q.r.IntN(len(def.EnumValues))].Name)
	case ast.InputObject:
		obj := map[string]any{}
		for _, f := range def.Fields {
			if f.Type.NonNull || q.chance(0.35) {
				obj[f.Name] = q.value(f.Name, f.Type, owner)
			}
		}
		return obj
	}
	switch t.Name() {
	case "Int":
		return q.count()
	case "Float":
		return float64(q.r.IntN(1000)) / 4
	case "Boolean":
		return q.chance(0.5)
	case "DateTime":
		return []string{"2026-01-01T00:00:00Z", "2026-03-01T12:00:00+02:00", "2026-06-30T23:59:59Z", "yesterday"}[q.r.IntN(4)]
	case "ID":
		return q.id(name, owner)
	case "JSON":
		return "x"
	}
	if name == "apiSlug" {
		return pick(q.r, q.s.slugs)
	}
	if w := q.s.words[name]; len(w) > 0 && q.chance(0.8) {
		return pick(q.r, w)
	}
	return pick(q.r, q.s.words[""])
}

// id picks an id of the type the argument names (portOfDischargeIds:
// ports), or of the type the field returns (shipment(id:)), or any, and
// now and then one that does not exist or is not a UUID.
func (q *genQuery) id(name, owner string) string {
	switch x := q.r.Float64(); {
	case x < 0.05:
		return "00000000-0000-0000-0000-000000000000"
	case x < 0.08:
		return "not-a-uuid"
	}
	typ := owner
	lower := strings.ToLower(name)
	for _, c := range []struct{ part, typ string }{
		{"port", "Port"}, {"terminal", "Terminal"}, {"definition", "CustomFieldDefinition"},
		{"shipment", "Shipment"}, {"container", "Container"}, {"document", "Document"}, {"entity", "Shipment"},
	} {
		if strings.Contains(lower, c.part) {
			typ = c.typ
			break
		}
	}
	if typ == "Port" && q.chance(0.2) && len(q.s.words["locode"]) > 0 {
		return pick(q.r, q.s.words["locode"])
	}
	ids := q.s.ids[typ]
	if len(ids) == 0 {
		var all []string
		for _, typ := range slices.Sorted(mapKeys(q.s.ids)) {
			all = append(all, q.s.ids[typ]...)
		}
		ids = all
	}
	return pick(q.r, ids)
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func pick[T any](r *rand.Rand, list []T) T { return list[r.IntN(len(list))] }

// literal writes v as a GraphQL literal.
func literal(v any) string {
	switch v := v.(type) {
	case enumValue:
		return string(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = literal(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		parts := make([]string, 0, len(v))
		for _, k := range slices.Sorted(mapKeys(v)) {
			parts = append(parts, k+": "+literal(v[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case string:
		b, _ := json.Marshal(v)
		return string(b)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

// jsonValue is v as a variable's JSON value (enum values as strings).
func jsonValue(v any) any {
	switch v := v.(type) {
	case enumValue:
		return string(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = jsonValue(e)
		}
		return out
	}
	return v
}
