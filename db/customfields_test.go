package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"shipgraph/db"
	"shipgraph/model"
	"shipgraph/testkit"
)

func (f *fixture) def(t *testing.T, accountID, id string) *model.CustomFieldDefinition {
	t.Helper()
	defs, err := f.DB.CustomFieldDefinitionsByIDs(context.Background(), accountID, []string{id})
	if err != nil || len(defs) != 1 {
		t.Fatalf("definition %s: %v, %v", id, defs, err)
	}
	return defs[0]
}

// storedValue reads a custom field's value as compact JSON.
func (f *fixture) storedValue(t *testing.T, id string) string {
	t.Helper()
	var v *string
	if err := f.SQL.QueryRow(`SELECT value::text FROM custom_fields WHERE id = $1`, id).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		return "NULL"
	}
	var x any
	_ = json.Unmarshal([]byte(*v), &x)
	b, _ := json.Marshal(x)
	return string(b)
}

func TestCustomFieldsByEntityIDs(t *testing.T) {
	f := newFixture(t)
	ctx, n := counting()
	cfs, err := f.DB.CustomFieldsByEntityIDs(ctx, f.A.Account, []string{f.A.Shipments[0], f.A.Containers[0], f.A.Shipments[1]})
	if err != nil {
		t.Fatal(err)
	}
	if n.Load() != 1 {
		t.Fatalf("%d statements", n.Load())
	}
	// Ordered by entity, then definition display name (Flags < Priority).
	type row struct {
		entity, slug, dataType string
		labels                 []string
	}
	var got []row
	for _, c := range cfs {
		got = append(got, row{c.EntityID, c.APISlug, string(c.DataType), c.OptionLabels})
	}
	want := []row{
		{f.A.Shipments[0], "flags", "enum_multi", []string{"Charlie", "Alpha"}}, // value order, not option order
		{f.A.Shipments[0], "priority", "enum", []string{"High"}},
		{f.A.Containers[0], "note", "short_text", nil},
	}
	slices.SortStableFunc(want, func(a, b row) int { return compareStrings(a.entity, b.entity) })
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].entity != want[i].entity || got[i].slug != want[i].slug || got[i].dataType != want[i].dataType ||
			!slices.Equal(got[i].labels, want[i].labels) {
			t.Fatalf("row %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if dv := cfs[0].DisplayValue(); cfs[0].APISlug == "flags" && (dv == nil || *dv != "Charlie, Alpha") {
		t.Fatalf("display value %v", dv)
	}
}

func TestSetCustomField(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	flags := f.def(t, f.A.Account, f.A.DefFlags)
	note := f.def(t, f.A.Account, f.A.DefNote)

	// Create: one statement, returned with slug, type and labels.
	cctx, n := counting()
	cf, err := f.DB.SetCustomField(cctx, f.A.Account, flags, f.A.Shipments[1], model.JSON(`["b","c"]`))
	if err != nil {
		t.Fatal(err)
	}
	if n.Load() != 1 {
		t.Fatalf("SetCustomField cost %d statements", n.Load())
	}
	if cf.EntityID != f.A.Shipments[1] || cf.ShipmentID == nil || cf.ContainerID != nil || cf.APISlug != "flags" ||
		cf.DataType != "enum_multi" || !slices.Equal(cf.OptionLabels, []string{"Bravo", "Charlie"}) || cf.AccountID != f.A.Account {
		t.Fatalf("created %+v", cf)
	}
	// Update: same row, new value.
	cf2, err := f.DB.SetCustomField(ctx, f.A.Account, flags, f.A.Shipments[1], model.JSON(`["a"]`))
	if err != nil {
		t.Fatal(err)
	}
	if cf2.ID != cf.ID || !cf2.CreatedAt.Equal(cf.CreatedAt) || !slices.Equal(cf2.OptionLabels, []string{"Alpha"}) ||
		f.storedValue(t, cf.ID) != `["a"]` {
		t.Fatalf("updated %+v", cf2)
	}
	// A value is never stored as null: clearing is a delete.
	_, err = f.DB.SetCustomField(ctx, f.A.Account, flags, f.A.Shipments[1], nil)
	wantCode(t, err, model.EINVALID)
	cf3, err := f.DB.DeleteCustomField(ctx, f.A.Account, flags.ID, f.A.Shipments[1])
	if err != nil || cf3.ID != cf.ID || !slices.Equal(cf3.OptionLabels, []string{"Alpha"}) {
		t.Fatalf("deleted: %+v, %v", cf3, err)
	}
	var left int
	if err := f.SQL.QueryRow(`SELECT count(*) FROM custom_fields WHERE id = $1`, cf.ID).Scan(&left); err != nil || left != 0 {
		t.Fatalf("after delete: %d rows, %v", left, err)
	}
	_, err = f.DB.DeleteCustomField(ctx, f.A.Account, flags.ID, f.A.Shipments[1])
	wantCode(t, err, model.ENOTFOUND)
	// Containers go into container_id.
	cfc, err := f.DB.SetCustomField(ctx, f.A.Account, note, f.A.Containers[3], model.JSON(`"x"`))
	if err != nil || cfc.ContainerID == nil || *cfc.ContainerID != f.A.Containers[3] || cfc.ShipmentID != nil || cfc.OptionLabels != nil {
		t.Fatalf("container value: %+v, %v", cfc, err)
	}

	// Another account's entity, an entity of the other type, a bad id.
	_, err = f.DB.SetCustomField(ctx, f.A.Account, flags, f.B.Shipments[0], model.JSON(`["a"]`))
	wantCode(t, err, model.ENOTFOUND)
	if model.ErrorMessage(err) != "shipment not found" {
		t.Fatalf("message %q", model.ErrorMessage(err))
	}
	_, err = f.DB.SetCustomField(ctx, f.A.Account, flags, f.A.Containers[0], model.JSON(`["a"]`))
	wantCode(t, err, model.ENOTFOUND)
	_, err = f.DB.SetCustomField(ctx, f.A.Account, note, f.A.Shipments[0], model.JSON(`"x"`))
	wantCode(t, err, model.ENOTFOUND)
	if model.ErrorMessage(err) != "container not found" {
		t.Fatalf("message %q", model.ErrorMessage(err))
	}
	_, err = f.DB.SetCustomField(ctx, f.A.Account, flags, "nope", model.JSON(`["a"]`))
	wantCode(t, err, model.ENOTFOUND)
	// Another account's definition.
	_, err = f.DB.SetCustomField(ctx, f.A.Account, f.def(t, f.B.Account, f.B.DefFlags), f.A.Shipments[0], model.JSON(`["a"]`))
	wantCode(t, err, model.ENOTFOUND)
	forged := *f.def(t, f.B.Account, f.B.DefFlags)
	forged.AccountID = f.A.Account // a caller bug must still not cross accounts
	_, err = f.DB.SetCustomField(ctx, f.A.Account, &forged, f.A.Shipments[0], model.JSON(`["a"]`))
	wantCode(t, err, model.ENOTFOUND)
	var nB int
	if err := f.SQL.QueryRow(`SELECT count(*) FROM custom_fields WHERE definition_id = $1`, f.B.DefFlags).Scan(&nB); err != nil || nB != 1 {
		t.Fatalf("account B's values changed: %d, %v", nB, err)
	}
}

func TestCustomFieldOptions(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.A

	o, err := f.DB.CreateCustomFieldOption(ctx, a.Account, a.DefPriority, db.OptionInput{Label: "Urgent", Value: "urgent", Position: ptr(0)})
	if err != nil {
		t.Fatal(err)
	}
	if o.DefinitionID != a.DefPriority || o.Label != "Urgent" || o.Value != "urgent" || o.Position == nil || *o.Position != 0 {
		t.Fatalf("created %+v", o)
	}
	_, err = f.DB.CreateCustomFieldOption(ctx, a.Account, a.DefPriority, db.OptionInput{Label: "Again", Value: "urgent"})
	wantCode(t, err, model.ECONFLICT)
	// The same value in another definition is fine.
	if _, err := f.DB.CreateCustomFieldOption(ctx, a.Account, a.DefFlags, db.OptionInput{Label: "Urgent", Value: "urgent"}); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		account, def string
		in           db.OptionInput
		code, msg    string
	}{
		"another account's definition": {a.Account, f.B.DefPriority, db.OptionInput{Label: "x", Value: "x"}, model.ENOTFOUND, "custom field definition not found"},
		"malformed definition id":      {a.Account, "nope", db.OptionInput{Label: "x", Value: "x"}, model.ENOTFOUND, "custom field definition not found"},
		"not an enum":                  {a.Account, a.DefNote, db.OptionInput{Label: "x", Value: "x"}, model.EINVALID, ""},
		"empty label":                  {a.Account, a.DefPriority, db.OptionInput{Label: " ", Value: "x"}, model.EINVALID, ""},
		"empty value":                  {a.Account, a.DefPriority, db.OptionInput{Label: "x", Value: ""}, model.EINVALID, ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.DB.CreateCustomFieldOption(ctx, c.account, c.def, c.in)
			wantCode(t, err, c.code)
			if c.msg != "" && model.ErrorMessage(err) != c.msg {
				t.Fatalf("message %q", model.ErrorMessage(err))
			}
		})
	}

	// Label and position only: values untouched.
	u, err := f.DB.UpdateCustomFieldOption(ctx, a.Account, a.DefPriority, a.OptMed, db.OptionPatch{Label: ptr("Normal"), Position: ptr(5)})
	if err != nil || u.Label != "Normal" || u.Value != "med" || u.Position == nil || *u.Position != 5 {
		t.Fatalf("patched %+v, %v", u, err)
	}
	u, err = f.DB.UpdateCustomFieldOption(ctx, a.Account, a.DefPriority, a.OptMed, db.OptionPatch{ClearPosition: true})
	if err != nil || u.Label != "Normal" || u.Position != nil {
		t.Fatalf("cleared position %+v, %v", u, err)
	}
	// Renaming to a taken value: conflict, nothing changed.
	_, err = f.DB.UpdateCustomFieldOption(ctx, a.Account, a.DefPriority, a.OptHigh, db.OptionPatch{Value: ptr("low")})
	wantCode(t, err, model.ECONFLICT)
	if v := f.storedValue(t, a.ValPriority); v != `"high"` {
		t.Fatalf("value after refused rename: %s", v)
	}
	// Not found cases say which.
	_, err = f.DB.UpdateCustomFieldOption(ctx, a.Account, f.B.DefPriority, f.B.OptHigh, db.OptionPatch{Label: ptr("x")})
	wantCode(t, err, model.ENOTFOUND)
	if model.ErrorMessage(err) != "custom field definition not found" {
		t.Fatalf("message %q", model.ErrorMessage(err))
	}
	_, err = f.DB.UpdateCustomFieldOption(ctx, a.Account, a.DefPriority, a.OptA, db.OptionPatch{Label: ptr("x")})
	wantCode(t, err, model.ENOTFOUND)
	if model.ErrorMessage(err) != "custom field option not found" {
		t.Fatalf("message %q", model.ErrorMessage(err))
	}
	_, err = f.DB.UpdateCustomFieldOption(ctx, a.Account, a.DefPriority, a.OptHigh, db.OptionPatch{Label: ptr("")})
	wantCode(t, err, model.EINVALID)

	// Delete: refused while in use, allowed once unused.
	_, err = f.DB.DeleteCustomFieldOption(ctx, a.Account, a.DefFlags, a.OptC)
	wantCode(t, err, model.ECONFLICT)
	if model.ErrorMessage(err) != "option is in use by 1 value" {
		t.Fatalf("message %q", model.ErrorMessage(err))
	}
	_, err = f.DB.DeleteCustomFieldOption(ctx, a.Account, a.DefPriority, a.OptHigh)
	wantCode(t, err, model.ECONFLICT)
	_, err = f.DB.DeleteCustomFieldOption(ctx, a.Account, f.B.DefPriority, f.B.OptLow)
	wantCode(t, err, model.ENOTFOUND)
	del, err := f.DB.DeleteCustomFieldOption(ctx, a.Account, a.DefFlags, a.OptB)
	if err != nil || del.ID != a.OptB || del.Value != "b" {
		t.Fatalf("deleted %+v, %v", del, err)
	}
	if gone, err := f.DB.CustomFieldOptionsByIDs(ctx, a.Account, []string{a.OptB}); err != nil || len(gone) != 0 {
		t.Fatalf("deleted option still read: %v, %v", gone, err)
	}
	if _, err := f.DB.SetCustomField(ctx, a.Account, f.def(t, a.Account, a.DefFlags), a.Shipments[0], model.JSON(`["a"]`)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.DB.DeleteCustomFieldOption(ctx, a.Account, a.DefFlags, a.OptC); err != nil {
		t.Fatal("unused option:", err)
	}
}

// Renaming an option's value rewrites the stored values of its definition
// (enum scalar and enum_multi element, order kept), and only those.
func TestOptionRenameRewritesValues(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.A
	flags := f.def(t, a.Account, a.DefFlags)
	other, err := f.DB.SetCustomField(ctx, a.Account, flags, a.Shipments[1], model.JSON(`["b","a","c"]`))
	if err != nil {
		t.Fatal(err)
	}
	// Account B has the same values on its own definitions.
	bFlags := f.B.ValFlags

	if _, err := f.DB.UpdateCustomFieldOption(ctx, a.Account, a.DefFlags, a.OptA, db.OptionPatch{Value: ptr("alpha")}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.DB.UpdateCustomFieldOption(ctx, a.Account, a.DefPriority, a.OptHigh, db.OptionPatch{Value: ptr("p1"), Label: ptr("P1")}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		a.ValFlags:      `["c","alpha"]`,
		other.ID:        `["b","alpha","c"]`,
		a.ValPriority:   `"p1"`,
		bFlags:          `["c","a"]`,
		f.B.ValPriority: `"high"`,
	} {
		if got := f.storedValue(t, id); got != want {
			t.Fatalf("value %s = %s, want %s", id, got, want)
		}
	}
	cfs, err := f.DB.CustomFieldsByEntityIDs(ctx, a.Account, []string{a.Shipments[0]})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfs {
		want := map[string][]string{"flags": {"Charlie", "Alpha"}, "priority": {"P1"}}[c.APISlug]
		if !slices.Equal(c.OptionLabels, want) {
			t.Fatalf("%s labels %v, want %v", c.APISlug, c.OptionLabels, want)
		}
	}
	// The old value is gone: deleting the renamed option is still refused.
	_, err = f.DB.DeleteCustomFieldOption(ctx, a.Account, a.DefFlags, a.OptA)
	wantCode(t, err, model.ECONFLICT)
	if model.ErrorMessage(err) != "option is in use by 2 values" {
		t.Fatalf("message %q", model.ErrorMessage(err))
	}
}

// Concurrent creates of one value: the unique constraint lets exactly one win.
func TestConcurrentOptionCreates(t *testing.T) {
	f := newFixture(t)
	const n = 8
	errs := make([]error, n)
	testkit.AtOnce(n, func(i int) {
		_, errs[i] = f.DB.CreateCustomFieldOption(context.Background(), f.A.Account, f.A.DefPriority,
			db.OptionInput{Label: fmt.Sprintf("Rush %d", i), Value: "rush"})
	})
	won := 0
	for _, err := range errs {
		switch model.ErrorCode(err) {
		case "":
			won++
		case model.ECONFLICT:
		default:
			t.Fatalf("unexpected error %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d creates won", won)
	}
	var count int
	if err := f.SQL.QueryRow(`SELECT count(*) FROM custom_field_options WHERE definition_id = $1 AND value = 'rush'`, f.A.DefPriority).Scan(&count); err != nil || count != 1 {
		t.Fatalf("%d rows, %v", count, err)
	}
}

func TestCreateCustomFieldDefinition(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	d := &model.CustomFieldDefinition{EntityType: "Shipment", APISlug: "priority", DisplayName: "Again", DataType: "enum"}
	err := f.DB.CreateCustomFieldDefinition(ctx, f.A.Account, d)
	wantCode(t, err, model.ECONFLICT)
	d.EntityType = "Container" // the slug is unique per entity type
	if err := f.DB.CreateCustomFieldDefinition(ctx, f.A.Account, d); err != nil || d.ID == "" || d.AccountID != f.A.Account || d.CreatedAt.IsZero() {
		t.Fatalf("%+v, %v", d, err)
	}
	bad := &model.CustomFieldDefinition{EntityType: "Shipment", APISlug: "Bad Slug", DisplayName: "x", DataType: "enum"}
	wantCode(t, f.DB.CreateCustomFieldDefinition(ctx, f.A.Account, bad), model.EINVALID)
}
