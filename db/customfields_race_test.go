package db_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"shipgraph/db"
	"shipgraph/model"
)

// raceIterations is how many times each race below is run. Which of the
// two requests wins is up to the scheduler, so one run proves little; the
// invariant must hold after every one of them.
const raceIterations = 50

// danglingValues lists the stored values of the definitions that name no
// option of their definition, as "value id: option" lines.
func (f *fixture) danglingValues(t *testing.T, definitionIDs ...string) []string {
	t.Helper()
	rows, err := f.SQL.Query(`SELECT cf.id, v.value FROM custom_fields cf,
			jsonb_array_elements_text(CASE jsonb_typeof(cf.value)
				WHEN 'array' THEN cf.value
				WHEN 'string' THEN jsonb_build_array(cf.value)
				ELSE '[]'::jsonb END) AS v(value)
		WHERE cf.definition_id = ANY($1::uuid[]) AND NOT EXISTS (
			SELECT 1 FROM custom_field_options o WHERE o.account_id = cf.account_id AND o.definition_id = cf.definition_id AND o.value = v.value)
		ORDER BY cf.id`, "{"+strings.Join(definitionIDs, ",")+"}")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, v string
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, id+": "+v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// raceSetters is how many sets race each delete or rename, on as many
// shipments: more overlap, more chances to hit the bad interleavings.
const raceSetters = 4

// clearValues removes the custom field values of entities, so that each
// iteration starts from the same state whatever the last one left.
func (f *fixture) clearValues(t *testing.T, entityIDs []string) {
	t.Helper()
	f.exec(t, `DELETE FROM custom_fields WHERE entity_id = ANY($1::uuid[])`, "{"+strings.Join(entityIDs, ",")+"}")
}

// concurrently runs the functions at (as nearly as possible) one moment.
func concurrently(fns ...func()) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn()
		}()
	}
	close(start)
	wg.Wait()
}

// raceValue is what an iteration sets: the fresh option alone on the enum,
// or after an older option on the enum_multi.
func raceValue(def *model.CustomFieldDefinition, value string) model.JSON {
	if def.DataType == "enum_multi" {
		return model.JSON(fmt.Sprintf(`["a",%q]`, value))
	}
	return model.JSON(fmt.Sprintf(`%q`, value))
}

// wantMissingOption checks the error of a set whose option went away.
func wantMissingOption(t *testing.T, err error, value string) {
	t.Helper()
	wantCode(t, err, model.EINVALID)
	var e *model.Error
	if !errors.As(err, &e) || e.Field != "value" || !strings.Contains(e.Message, fmt.Sprintf("%q", value)) {
		t.Fatalf("error %#v: want a pointer at the value and a message naming %q", err, value)
	}
}

// raceSets returns the setters of one iteration: set i writes value on
// shipments[i] and leaves its result in cfs[i], errs[i].
func raceSets(f *fixture, def *model.CustomFieldDefinition, shipments []string, value model.JSON) (fns []func(), cfs []*model.CustomField, errs []error) {
	cfs, errs = make([]*model.CustomField, len(shipments)), make([]error, len(shipments))
	for i, s := range shipments {
		fns = append(fns, func() {
			cfs[i], errs[i] = f.DB.SetCustomField(context.Background(), def.AccountID, def, s, value)
		})
	}
	return fns, cfs, errs
}

// Sets naming an option race the option's delete: either the sets fail
// (the option is gone) or the delete is refused (the option is in use);
// never does a stored value name a deleted option. Run it on the enum and
// the enum_multi definition in turn, on a fresh option each time.
func TestSetCustomFieldRacesOptionDelete(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.A
	defs := []*model.CustomFieldDefinition{f.def(t, a.Account, a.DefPriority), f.def(t, a.Account, a.DefFlags)}
	shipments := a.Shipments[1 : 1+raceSetters]
	outcomes := map[string]int{}
	for i := range raceIterations {
		def := defs[i%2]
		f.clearValues(t, shipments)
		value := fmt.Sprintf("del%d", i)
		o, err := f.DB.CreateCustomFieldOption(ctx, a.Account, def.ID, db.OptionInput{Label: value, Value: value})
		if err != nil {
			t.Fatal(err)
		}
		sets, _, setErrs := raceSets(f, def, shipments, raceValue(def, value))
		var delErr error
		concurrently(append(sets, func() { _, delErr = f.DB.DeleteCustomFieldOption(ctx, a.Account, def.ID, o.ID) })...)
		if d := f.danglingValues(t, a.DefPriority, a.DefFlags); len(d) > 0 {
			t.Errorf("iteration %d (sets: %v, delete: %v): values name deleted options: %v", i, setErrs, delErr, d)
			outcomes["dangling"]++
			continue
		}
		// A set that commits first keeps the option (the delete is
		// refused); a delete that commits first fails every set.
		switch model.ErrorCode(delErr) {
		case model.ECONFLICT:
			for _, err := range setErrs {
				if err != nil {
					t.Fatalf("iteration %d: delete refused, yet a set failed: %v", i, err)
				}
			}
			outcomes["sets won"]++
		case "":
			for _, err := range setErrs {
				wantMissingOption(t, err, value)
			}
			outcomes["delete won"]++
		default:
			t.Fatalf("iteration %d: delete: %v", i, delErr)
		}
	}
	t.Logf("outcomes of %d iterations: %v", raceIterations, outcomes)
}

// Sets naming an option race the rename of the option's value: a set
// either fails (the old value is gone) or its value is rewritten by the
// rename; never is the old value left behind.
func TestSetCustomFieldRacesOptionRename(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.A
	defs := []*model.CustomFieldDefinition{f.def(t, a.Account, a.DefPriority), f.def(t, a.Account, a.DefFlags)}
	shipments := a.Shipments[1 : 1+raceSetters]
	outcomes := map[string]int{}
	for i := range raceIterations {
		def := defs[i%2]
		f.clearValues(t, shipments)
		value, renamed := fmt.Sprintf("old%d", i), fmt.Sprintf("new%d", i)
		o, err := f.DB.CreateCustomFieldOption(ctx, a.Account, def.ID, db.OptionInput{Label: value, Value: value})
		if err != nil {
			t.Fatal(err)
		}
		sets, cfs, setErrs := raceSets(f, def, shipments, raceValue(def, value))
		var updErr error
		concurrently(append(sets, func() {
			_, updErr = f.DB.UpdateCustomFieldOption(ctx, a.Account, def.ID, o.ID, db.OptionPatch{Value: &renamed})
		})...)
		if d := f.danglingValues(t, a.DefPriority, a.DefFlags); len(d) > 0 {
			t.Errorf("iteration %d (sets: %v, rename: %v): values name no option: %v", i, setErrs, updErr, d)
			outcomes["dangling"]++
			continue
		}
		if updErr != nil {
			t.Fatalf("iteration %d: rename: %v", i, updErr)
		}
		for j, err := range setErrs {
			if err != nil {
				wantMissingOption(t, err, value)
				outcomes["rename first"]++
				continue
			}
			if got, want := f.storedValue(t, cfs[j].ID), string(raceValue(def, renamed)); got != want {
				t.Fatalf("iteration %d: stored %s, want %s", i, got, want)
			}
			outcomes["set first"]++
		}
	}
	t.Logf("outcomes of %d iterations × %d sets: %v", raceIterations, raceSetters, outcomes)
}
