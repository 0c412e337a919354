package graph_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"shipgraph/testkit"
)

// Mutation tests write, so each gets a small database of its own.

func newWriteEnv(t *testing.T) *testkit.Env {
	t.Helper()
	return testkit.New(t, testkit.Options{Shipments: 12})
}

// newWriteFixture is a write database and its fixture ids.
func newWriteFixture(t *testing.T) (*testkit.Env, fixture) {
	t.Helper()
	e := newWriteEnv(t)
	return e, loadFixture(t, e)
}

// fixture ids of the acme account (and one of globex) in a write database.
type fixture struct {
	acme, globex         string
	ship, otherShip      string
	priority, handling   string // enum and enum_multi definitions
	customerPO           string // short_text definition
	otherPriority        string // globex's enum definition
	optLow, optHigh      string // options of priority
	otherOpt             string // an option of globex's priority
	handlingFragileOptID string
}

func loadFixture(t *testing.T, e *testkit.Env) fixture {
	t.Helper()
	var f fixture
	f.acme, f.globex = e.Account(t, "acme"), e.Account(t, "globex")
	e.SQL(t, &f.ship, `SELECT id FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 1`, f.acme)
	e.SQL(t, &f.otherShip, `SELECT id FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 1`, f.globex)
	def := func(acct, slug string) string {
		id := e.Text(t, `SELECT id FROM custom_field_definitions WHERE account_id = $1 AND api_slug = $2`, acct, slug)
		return id
	}
	opt := func(def, value string) string {
		id := e.Text(t, `SELECT id FROM custom_field_options WHERE definition_id = $1 AND value = $2`, def, value)
		return id
	}
	f.priority, f.handling, f.customerPO = def(f.acme, "priority_level"), def(f.acme, "handling_requirements"), def(f.acme, "customer_po")
	f.otherPriority = def(f.globex, "priority_level")
	f.optLow, f.optHigh = opt(f.priority, "low"), opt(f.priority, "high")
	f.otherOpt = opt(f.otherPriority, "low")
	f.handlingFragileOptID = opt(f.handling, "fragile")
	return f
}

const setField = `mutation($s: ID!, $slug: String!, $v: JSON) {
  updateShipmentCustomField(shipmentId: $s, apiSlug: $slug, value: $v) {
    id apiSlug value displayValue definition { id } entity { ... on Shipment { id customFields { apiSlug value } } }
  }
}`

type setResult struct {
	UpdateShipmentCustomField struct {
		ID, APISlug  string
		Value        json.RawMessage
		DisplayValue *string
		Definition   idObj
		Entity       struct {
			ID           string
			CustomFields []struct {
				APISlug string
				Value   json.RawMessage
			}
		}
	}
}

func TestUpdateShipmentCustomField(t *testing.T) {
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeMember) // members may write
	ok := []struct {
		slug    string
		value   any
		stored  string
		display string
	}{
		{"customer_po", "PO-123", `"PO-123"`, "PO-123"},
		{"declared_value_usd", 1250.5, `1250.5`, "1250.5"},
		{"declared_value_usd", "42", `42`, "42"},
		{"requested_delivery_date", "2026-04-01", `"2026-04-01"`, "Apr 1, 2026"},
		{"dock_appointment_at", "2026-04-01T10:30:00+02:00", `"2026-04-01T08:30:00Z"`, "Apr 1, 2026 08:30 UTC"},
		{"hazmat", true, `true`, "Yes"},
		{"hazmat", false, `false`, "No"},
		{"priority_level", "high", `"high"`, "High"},
		{"handling_requirements", []string{"liftgate", "fragile", "liftgate"}, `["liftgate","fragile"]`, "Liftgate required, Fragile"},
		{"handling_requirements", []string{}, `[]`, ""},
		{"account_manager", "user-123", `"user-123"`, "user-123"},
	}
	for _, c := range ok {
		var d setResult
		e.Must(t, k, setField, testkit.Vars{"s": f.ship, "slug": c.slug, "v": c.value}, &d)
		r := d.UpdateShipmentCustomField
		if r.APISlug != c.slug || string(r.Value) != c.stored || r.DisplayValue == nil || *r.DisplayValue != c.display || r.Entity.ID != f.ship {
			t.Errorf("%s = %v: got %s %s %v", c.slug, c.value, r.APISlug, r.Value, ptrStr(r.DisplayValue))
		}
		// The shipment read back in the same request sees the new value
		// (the loader was cleared after the write).
		found := false
		for _, cf := range r.Entity.CustomFields {
			if cf.APISlug == c.slug {
				found = string(cf.Value) == c.stored
			}
		}
		if !found {
			t.Errorf("%s = %v: shipment.customFields in the same request: %+v", c.slug, c.value, r.Entity.CustomFields)
		}
		// And a later request too.
		var later struct {
			Shipment struct {
				CustomField *struct{ Value json.RawMessage }
			}
		}
		e.Must(t, k, `query($s: ID!, $slug: String!) { shipment(id: $s) { customField(apiSlug: $slug) { value } } }`,
			testkit.Vars{"s": f.ship, "slug": c.slug}, &later)
		if later.Shipment.CustomField == nil || string(later.Shipment.CustomField.Value) != c.stored {
			t.Errorf("%s = %v: read back %+v", c.slug, c.value, later.Shipment.CustomField)
		}
	}
	// One value per definition and entity: setting twice updates.
	var n int
	e.SQL(t, &n, `SELECT count(*) FROM custom_fields WHERE shipment_id = $1 AND definition_id = $2`, f.ship, f.priority)
	if n != 1 {
		t.Errorf("%d priority values on the shipment, want 1", n)
	}
	// null clears: the value is deleted, so the mutation answers null,
	// customField(apiSlug) is null and customFields no longer lists it;
	// clearing again is the same no-op.
	for range 2 {
		var d struct{ UpdateShipmentCustomField *struct{ ID string } }
		e.Must(t, k, setField, testkit.Vars{"s": f.ship, "slug": "priority_level", "v": nil}, &d)
		if d.UpdateShipmentCustomField != nil {
			t.Errorf("null: got %+v, want null", d.UpdateShipmentCustomField)
		}
		var after struct {
			Shipment struct {
				CustomField  *struct{ Value json.RawMessage }
				CustomFields []struct{ APISlug string }
			}
		}
		e.Must(t, k, `query($s: ID!) { shipment(id: $s) { customField(apiSlug: "priority_level") { value } customFields { apiSlug } } }`,
			testkit.Vars{"s": f.ship}, &after)
		if after.Shipment.CustomField != nil {
			t.Errorf("after a clear customField is %s, want null", after.Shipment.CustomField.Value)
		}
		for _, cf := range after.Shipment.CustomFields {
			if cf.APISlug == "priority_level" {
				t.Errorf("after a clear customFields still lists priority_level")
			}
		}
	}
	e.SQL(t, &n, `SELECT count(*) FROM custom_fields WHERE shipment_id = $1 AND definition_id = $2`, f.ship, f.priority)
	if n != 0 {
		t.Errorf("%d priority values on the shipment after a clear, want 0", n)
	}

	bad := []struct {
		slug  string
		value any
	}{
		{"customer_po", 5},
		{"customer_po", strings.Repeat("x", 1001)},
		{"customer_po", []string{"a"}},
		{"declared_value_usd", "abc"},
		{"declared_value_usd", true},
		{"hazmat", "yes"},
		{"hazmat", 1},
		{"requested_delivery_date", "2026-13-01"},
		{"requested_delivery_date", "April 1"},
		{"dock_appointment_at", "tomorrow"},
		{"dock_appointment_at", "2026-04-01"},
		{"priority_level", "urgent"},
		{"priority_level", "HIGH"},
		{"priority_level", 1},
		{"priority_level", []string{"high"}},
		{"handling_requirements", "fragile"},
		{"handling_requirements", []string{"fragile", "nope"}},
		{"handling_requirements", []any{"fragile", 3}},
		{"account_manager", map[string]any{"id": "x"}},
	}
	for _, c := range bad {
		res := e.Do(t, k, setField, testkit.Vars{"s": f.ship, "slug": c.slug, "v": c.value})
		if !testkit.CodesEqual(res.Codes(), "BAD_USER_INPUT") {
			t.Errorf("%s = %v: %s; want BAD_USER_INPUT", c.slug, c.value, res)
			continue
		}
		if res.Errors[0].Extensions["field"] != "value" {
			t.Errorf("%s = %v: extensions %v; want field: value", c.slug, c.value, res.Errors[0].Extensions)
		}
	}
	e.SQL(t, &n, `SELECT count(*) FROM custom_fields WHERE shipment_id = $1 AND definition_id = $2 AND value IS NOT NULL`, f.ship, f.priority)
	if n != 0 {
		t.Errorf("a refused value was stored")
	}

	notFound := []struct {
		name, ship, slug string
	}{
		{"unknown slug", f.ship, "no_such_field"},
		{"container field on a shipment", f.ship, "yard_slot"},
		{"unknown shipment", "00000000-0000-0000-0000-000000000000", "customer_po"},
		{"malformed shipment id", "nope", "customer_po"},
		{"another account's shipment", f.otherShip, "customer_po"},
	}
	for _, c := range notFound {
		res := e.Do(t, k, setField, testkit.Vars{"s": c.ship, "slug": c.slug, "v": "x"})
		if !testkit.CodesEqual(res.Codes(), "NOT_FOUND") {
			t.Errorf("%s: %s; want NOT_FOUND", c.name, res)
		}
	}
	e.SQL(t, &n, `SELECT count(*) FROM custom_fields WHERE shipment_id = $1 AND value = '"x"'`, f.otherShip)
	if n != 0 {
		t.Error("wrote to another account's shipment")
	}
}

func ptrStr(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%q", *s)
}

const createOption = `mutation($d: ID!, $in: CustomFieldOptionInput!) {
  createCustomFieldOption(definitionId: $d, input: $in) { id label value position definition { id options { value } } }
}`

const updateOption = `mutation($d: ID!, $o: ID!, $in: CustomFieldOptionPatch!) {
  updateCustomFieldOption(definitionId: $d, optionId: $o, input: $in) { id label value position }
}`

const deleteOption = `mutation($d: ID!, $o: ID!) { deleteCustomFieldOption(definitionId: $d, optionId: $o) { id value } }`

type optionResult struct {
	ID, Label, Value string
	Position         *int
	Definition       struct {
		ID      string
		Options []struct{ Value string }
	}
}

func TestCreateCustomFieldOption(t *testing.T) {
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeAdmin)

	var d struct{ CreateCustomFieldOption optionResult }
	e.Must(t, k, createOption, testkit.Vars{"d": f.priority, "in": map[string]any{"label": "  Urgent ", "value": " urgent ", "position": 0}}, &d)
	o := d.CreateCustomFieldOption
	if o.Label != "Urgent" || o.Value != "urgent" || o.Position == nil || *o.Position != 0 || o.Definition.ID != f.priority {
		t.Errorf("created %+v", o)
	}
	if len(o.Definition.Options) == 0 || o.Definition.Options[0].Value != "urgent" {
		t.Errorf("definition.options in the same request: %+v; want urgent first (position 0)", o.Definition.Options)
	}
	// The new value is accepted at once.
	e.Must(t, k, setField, testkit.Vars{"s": f.ship, "slug": "priority_level", "v": "urgent"}, nil)
	// enum_multi definitions take options too.
	e.Must(t, k, createOption, testkit.Vars{"d": f.handling, "in": map[string]any{"label": "Stackable", "value": "stackable"}}, nil)

	cases := []struct {
		name, def string
		in        map[string]any
		code      string
	}{
		{"duplicate value", f.priority, map[string]any{"label": "Again", "value": "urgent"}, "CONFLICT"},
		{"duplicate after trimming", f.priority, map[string]any{"label": "Again", "value": "high "}, "CONFLICT"},
		{"not an enum", f.customerPO, map[string]any{"label": "X", "value": "x"}, "BAD_USER_INPUT"},
		{"blank label", f.priority, map[string]any{"label": "  ", "value": "x1"}, "BAD_USER_INPUT"},
		{"blank value", f.priority, map[string]any{"label": "X", "value": ""}, "BAD_USER_INPUT"},
		{"long value", f.priority, map[string]any{"label": "X", "value": strings.Repeat("v", 256)}, "BAD_USER_INPUT"},
		{"unknown definition", "00000000-0000-0000-0000-000000000000", map[string]any{"label": "X", "value": "x2"}, "NOT_FOUND"},
		{"malformed definition", "nope", map[string]any{"label": "X", "value": "x3"}, "NOT_FOUND"},
		{"another account's definition", f.otherPriority, map[string]any{"label": "X", "value": "x4"}, "NOT_FOUND"},
	}
	for _, c := range cases {
		res := e.Do(t, k, createOption, testkit.Vars{"d": c.def, "in": c.in})
		if !testkit.CodesEqual(res.Codes(), c.code) {
			t.Errorf("%s: %s; want %s", c.name, res, c.code)
		}
		if c.code == "CONFLICT" && res.Errors[0].Extensions["field"] != "value" {
			t.Errorf("%s: extensions %v; want field: value", c.name, res.Errors[0].Extensions)
		}
	}
	var n int
	e.SQL(t, &n, `SELECT count(*) FROM custom_field_options WHERE definition_id = $1`, f.otherPriority)
	if n != 4 {
		t.Errorf("globex's priority has %d options, want its 4", n)
	}
}

// TestConcurrentOptionCreates: the database decides uniqueness, so of
// simultaneous creates of one value exactly one wins and the rest are
// CONFLICT, never an internal error.
func TestConcurrentOptionCreates(t *testing.T) {
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeAdmin)
	for round := range 5 {
		value := fmt.Sprintf("race-%d", round)
		const n = 8
		results := make([]*testkit.Result, n)
		testkit.AtOnce(n, func(i int) {
			results[i] = e.Do(t, k, createOption, testkit.Vars{"d": f.priority, "in": map[string]any{"label": value, "value": value}})
		})
		oneWins(t, "concurrent create", value, results)
	}
}

// oneWins checks the answers to simultaneous writes of one value: exactly
// one succeeded, every other is a CONFLICT that names the value.
func oneWins(t *testing.T, what, value string, results []*testkit.Result) {
	t.Helper()
	won := 0
	for _, res := range results {
		switch {
		case len(res.Errors) == 0:
			won++
		case testkit.CodesEqual(res.Codes(), "CONFLICT"):
			if !strings.Contains(res.Errors[0].Message, value) {
				t.Errorf("%s: conflict message %q does not name the value", what, res.Errors[0].Message)
			}
		default:
			t.Errorf("%s: %s; want success or CONFLICT", what, res)
		}
	}
	if won != 1 {
		t.Errorf("%s of %s: %d succeeded, want exactly 1", what, value, won)
	}
}

func TestUpdateCustomFieldOption(t *testing.T) {
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeAdmin)
	// A stored enum and enum_multi value that use the options renamed below.
	e.Must(t, k, setField, testkit.Vars{"s": f.ship, "slug": "priority_level", "v": "high"}, nil)
	e.Must(t, k, setField, testkit.Vars{"s": f.ship, "slug": "handling_requirements", "v": []string{"liftgate", "fragile"}}, nil)

	var d struct{ UpdateCustomFieldOption optionResult }
	e.Must(t, k, updateOption, testkit.Vars{"d": f.priority, "o": f.optHigh, "in": map[string]any{"label": "Very high"}}, &d)
	if o := d.UpdateCustomFieldOption; o.Label != "Very high" || o.Value != "high" || o.Position == nil {
		t.Errorf("label change: %+v", o)
	}
	e.Must(t, k, updateOption, testkit.Vars{"d": f.priority, "o": f.optHigh, "in": map[string]any{"value": "urgent", "position": 9}}, &d)
	if o := d.UpdateCustomFieldOption; o.Label != "Very high" || o.Value != "urgent" || o.Position == nil || *o.Position != 9 {
		t.Errorf("value change: %+v", o)
	}
	// position: null clears the position; an omitted position is kept.
	e.Must(t, k, updateOption, testkit.Vars{"d": f.priority, "o": f.optHigh, "in": map[string]any{"position": nil}}, &d)
	if o := d.UpdateCustomFieldOption; o.Position != nil || o.Value != "urgent" {
		t.Errorf("position cleared: %+v", o)
	}
	e.Must(t, k, updateOption, testkit.Vars{"d": f.priority, "o": f.optHigh, "in": map[string]any{"position": 9}}, &d)
	e.Must(t, k, updateOption, testkit.Vars{"d": f.priority, "o": f.optHigh, "in": map[string]any{"label": "Very high"}}, &d)
	if o := d.UpdateCustomFieldOption; o.Position == nil || *o.Position != 9 {
		t.Errorf("omitted position must be kept: %+v", o)
	}
	e.Must(t, k, updateOption, testkit.Vars{"d": f.handling, "o": f.handlingFragileOptID, "in": map[string]any{"value": "delicate"}}, nil)
	// Stored values follow the renamed option.
	var s struct {
		Shipment struct {
			P, H *struct {
				Value        json.RawMessage
				DisplayValue string
			}
		}
	}
	e.Must(t, k, `query($s: ID!) { shipment(id: $s) { p: customField(apiSlug: "priority_level") { value displayValue }
		h: customField(apiSlug: "handling_requirements") { value displayValue } } }`, testkit.Vars{"s": f.ship}, &s)
	if p := s.Shipment.P; p == nil || string(p.Value) != `"urgent"` || p.DisplayValue != "Very high" {
		t.Errorf("enum value after rename: %+v", p)
	}
	if h := s.Shipment.H; h == nil || string(h.Value) != `["liftgate", "delicate"]` && string(h.Value) != `["liftgate","delicate"]` || h.DisplayValue != "Liftgate required, Fragile" {
		t.Errorf("enum_multi value after rename: %+v", h)
	}

	cases := []struct {
		name, def, opt string
		in             map[string]any
		code           string
	}{
		{"rename onto an existing value", f.priority, f.optHigh, map[string]any{"value": "low"}, "CONFLICT"},
		{"blank label", f.priority, f.optHigh, map[string]any{"label": " "}, "BAD_USER_INPUT"},
		{"blank value", f.priority, f.optHigh, map[string]any{"value": ""}, "BAD_USER_INPUT"},
		{"not an enum", f.customerPO, f.optHigh, map[string]any{"label": "X"}, "BAD_USER_INPUT"},
		{"unknown option", f.priority, "00000000-0000-0000-0000-000000000000", map[string]any{"label": "X"}, "NOT_FOUND"},
		{"malformed option", f.priority, "nope", map[string]any{"label": "X"}, "NOT_FOUND"},
		{"option of another definition", f.priority, f.handlingFragileOptID, map[string]any{"label": "X"}, "NOT_FOUND"},
		{"another account's definition", f.otherPriority, f.otherOpt, map[string]any{"label": "X"}, "NOT_FOUND"},
		{"another account's option", f.priority, f.otherOpt, map[string]any{"label": "X"}, "NOT_FOUND"},
	}
	for _, c := range cases {
		res := e.Do(t, k, updateOption, testkit.Vars{"d": c.def, "o": c.opt, "in": c.in})
		if !testkit.CodesEqual(res.Codes(), c.code) {
			t.Errorf("%s: %s; want %s", c.name, res, c.code)
		}
	}
	label := e.Text(t, `SELECT label FROM custom_field_options WHERE id = $1`, f.otherOpt)
	if label != "Low" {
		t.Errorf("another account's option was changed to %q", label)
	}

	// Two options renamed to one new value at the same time: one wins.
	for round := range 3 {
		value := fmt.Sprintf("same-%d", round)
		var ids []string
		e.SQL(t, &ids, `SELECT id FROM custom_field_options WHERE definition_id = $1 ORDER BY id LIMIT 2`, f.priority)
		results := make([]*testkit.Result, len(ids))
		testkit.AtOnce(len(ids), func(i int) {
			results[i] = e.Do(t, k, updateOption, testkit.Vars{"d": f.priority, "o": ids[i], "in": map[string]any{"value": value}})
		})
		oneWins(t, "concurrent rename", value, results)
	}
}

func TestDeleteCustomFieldOption(t *testing.T) {
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeAdmin)
	// Make sure "high" is in use and "low" is not.
	e.SQL(t, new(int), `WITH d AS (DELETE FROM custom_fields WHERE definition_id = $1 AND value = '"low"' RETURNING 1) SELECT count(*) FROM d`, f.priority)
	e.Must(t, k, setField, testkit.Vars{"s": f.ship, "slug": "priority_level", "v": "high"}, nil)

	var d struct{ DeleteCustomFieldOption struct{ ID, Value string } }
	e.Must(t, k, deleteOption, testkit.Vars{"d": f.priority, "o": f.optLow}, &d)
	if d.DeleteCustomFieldOption.ID != f.optLow || d.DeleteCustomFieldOption.Value != "low" {
		t.Errorf("deleted %+v", d.DeleteCustomFieldOption)
	}
	var opts struct {
		CustomFieldDefinition struct{ Options []struct{ Value string } }
	}
	e.Must(t, k, `query($d: ID!) { customFieldDefinition(id: $d) { options { value } } }`, testkit.Vars{"d": f.priority}, &opts)
	for _, o := range opts.CustomFieldDefinition.Options {
		if o.Value == "low" {
			t.Error("deleted option still listed")
		}
	}
	// A deleted value is no longer accepted.
	res := e.Do(t, k, setField, testkit.Vars{"s": f.ship, "slug": "priority_level", "v": "low"})
	if !testkit.CodesEqual(res.Codes(), "BAD_USER_INPUT") {
		t.Errorf("setting a deleted option: %s", res)
	}

	cases := []struct {
		name, def, opt, code string
	}{
		{"in use", f.priority, f.optHigh, "CONFLICT"},
		{"already deleted", f.priority, f.optLow, "NOT_FOUND"},
		{"option of another definition", f.priority, f.handlingFragileOptID, "NOT_FOUND"},
		{"another account's option", f.otherPriority, f.otherOpt, "NOT_FOUND"},
		{"not an enum", f.customerPO, f.optHigh, "BAD_USER_INPUT"},
	}
	for _, c := range cases {
		res := e.Do(t, k, deleteOption, testkit.Vars{"d": c.def, "o": c.opt})
		if !testkit.CodesEqual(res.Codes(), c.code) {
			t.Errorf("%s: %s; want %s", c.name, res, c.code)
		}
	}
	var n int
	e.SQL(t, &n, `SELECT count(*) FROM custom_field_options WHERE id = ANY($1::uuid[])`, pqArray([]string{f.optHigh, f.otherOpt}))
	if n != 2 {
		t.Errorf("a refused delete deleted")
	}
}

// Two writes in one document: the second mutation's answer reads the
// shipment's custom fields as they are after both, not as the first
// mutation's answer had loaded them (a write starts a new generation of
// the request's relationships).
func TestMutationsInOneDocumentSeeEachOther(t *testing.T) {
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeMember)
	var got struct {
		A, B struct {
			Entity struct {
				CustomFields []struct {
					APISlug string
					Value   json.RawMessage
				}
			}
		}
	}
	e.Must(t, k, `mutation($s: ID!) {
  a: updateShipmentCustomField(shipmentId: $s, apiSlug: "customer_po", value: "PO-FIRST") { entity { ... on Shipment { customFields { apiSlug value } } } }
  b: updateShipmentCustomField(shipmentId: $s, apiSlug: "customer_po", value: "PO-SECOND") { entity { ... on Shipment { customFields { apiSlug value } } } }
}`, testkit.Vars{"s": f.ship}, &got)
	value := func(fields []struct {
		APISlug string
		Value   json.RawMessage
	}) string {
		for _, cf := range fields {
			if cf.APISlug == "customer_po" {
				return string(cf.Value)
			}
		}
		return ""
	}
	if v := value(got.A.Entity.CustomFields); v != `"PO-FIRST"` {
		t.Errorf("first answer: customer_po = %s, want \"PO-FIRST\"", v)
	}
	if v := value(got.B.Entity.CustomFields); v != `"PO-SECOND"` {
		t.Errorf("second answer: customer_po = %s, want \"PO-SECOND\" (stale relationship)", v)
	}
}
