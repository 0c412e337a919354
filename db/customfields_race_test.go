package db_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"shipgraph/db"
	"shipgraph/model"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

// raceIterations is how many times each race below is run. Which of the
// two requests wins is up to the scheduler, so one run proves little; the
// invariant must hold after every one of them.
const raceIterations = 50

// danglingValues lists the stored values of the definitions that name no
// option of their definition, as "value id: option" lines.
func (f *fixture) danglingValues(t *testing.T, definitionIDs ...string) []string {
	t.Helper()
	return pg.Column[string](t, f.SQL, `SELECT cf.id || ': ' || v.value FROM custom_fields cf,
			jsonb_array_elements_text(CASE jsonb_typeof(cf.value)
				WHEN 'array' THEN cf.value
				WHEN 'string' THEN jsonb_build_array(cf.value)
				ELSE '[]'::jsonb END) AS v(value)
		WHERE cf.definition_id = ANY($1::uuid[]) AND NOT EXISTS (
			SELECT 1 FROM custom_field_options o WHERE o.account_id = cf.account_id AND o.definition_id = cf.definition_id AND o.value = v.value)
		ORDER BY cf.id`, "{"+strings.Join(definitionIDs, ",")+"}")
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

// optionRace is one iteration of a race between sets naming a fresh
// option and a change of that option.
type optionRace struct {
	i       int
	def     *model.CustomFieldDefinition
	value   string // the option's value the sets name
	cfs     []*model.CustomField
	setErrs []error
	err     error // the change's
}

// raceOptionChange runs raceIterations races, on the enum and the
// enum_multi definition in turn, on a fresh option each time: sets naming
// the option against change (what names it). After each, no stored value
// may name a missing option; judge checks the rest and names the outcome
// of each contender, counted in the log.
func raceOptionChange(t *testing.T, what string, change func(f *fixture, r *optionRace, optionID string) error, judge func(t *testing.T, f *fixture, r *optionRace) []string) {
	f := newFixture(t)
	ctx := context.Background()
	a := f.A
	defs := []*model.CustomFieldDefinition{f.def(t, a.Account, a.DefPriority), f.def(t, a.Account, a.DefFlags)}
	shipments := a.Shipments[1 : 1+raceSetters]
	outcomes := map[string]int{}
	for i := range raceIterations {
		r := &optionRace{i: i, def: defs[i%2], value: fmt.Sprintf("opt%d", i)}
		f.clearValues(t, shipments)
		o, err := f.DB.CreateCustomFieldOption(ctx, a.Account, r.def.ID, db.OptionInput{Label: r.value, Value: r.value})
		if err != nil {
			t.Fatal(err)
		}
		var sets []func()
		sets, r.cfs, r.setErrs = raceSets(f, r.def, shipments, raceValue(r.def, r.value))
		fns := append(sets, func() { r.err = change(f, r, o.ID) })
		testkit.AtOnce(len(fns), func(i int) { fns[i]() })
		if d := f.danglingValues(t, a.DefPriority, a.DefFlags); len(d) > 0 {
			t.Errorf("iteration %d (sets: %v, %s: %v): values name no option: %v", i, r.setErrs, what, r.err, d)
			outcomes["dangling"]++
			continue
		}
		for _, o := range judge(t, f, r) {
			outcomes[o]++
		}
	}
	t.Logf("outcomes of %d iterations × %d sets: %v", raceIterations, raceSetters, outcomes)
}

// Sets naming an option race the option's delete: either the sets fail
// (the option is gone) or the delete is refused (the option is in use);
// never does a stored value name a deleted option.
func TestSetCustomFieldRacesOptionDelete(t *testing.T) {
	raceOptionChange(t, "delete", func(f *fixture, r *optionRace, optionID string) error {
		_, err := f.DB.DeleteCustomFieldOption(context.Background(), r.def.AccountID, r.def.ID, optionID)
		return err
	}, func(t *testing.T, f *fixture, r *optionRace) []string {
		// A set that commits first keeps the option (the delete is
		// refused); a delete that commits first fails every set.
		switch model.ErrorCode(r.err) {
		case model.ECONFLICT:
			for _, err := range r.setErrs {
				if err != nil {
					t.Fatalf("iteration %d: delete refused, yet a set failed: %v", r.i, err)
				}
			}
			return []string{"sets won"}
		case "":
			for _, err := range r.setErrs {
				wantMissingOption(t, err, r.value)
			}
			return []string{"delete won"}
		default:
			t.Fatalf("iteration %d: delete: %v", r.i, r.err)
			return nil
		}
	})
}

// Sets naming an option race the rename of the option's value: a set
// either fails (the old value is gone) or its value is rewritten by the
// rename; never is the old value left behind.
func TestSetCustomFieldRacesOptionRename(t *testing.T) {
	renamed := func(r *optionRace) string { return fmt.Sprintf("new%d", r.i) }
	raceOptionChange(t, "rename", func(f *fixture, r *optionRace, optionID string) error {
		v := renamed(r)
		_, err := f.DB.UpdateCustomFieldOption(context.Background(), r.def.AccountID, r.def.ID, optionID, db.OptionPatch{Value: &v})
		return err
	}, func(t *testing.T, f *fixture, r *optionRace) []string {
		if r.err != nil {
			t.Fatalf("iteration %d: rename: %v", r.i, r.err)
		}
		var outcomes []string
		for j, err := range r.setErrs {
			if err != nil {
				wantMissingOption(t, err, r.value)
				outcomes = append(outcomes, "rename first")
				continue
			}
			if got, want := f.storedValue(t, r.cfs[j].ID), string(raceValue(r.def, renamed(r))); got != want {
				t.Fatalf("iteration %d: stored %s, want %s", r.i, got, want)
			}
			outcomes = append(outcomes, "set first")
		}
		return outcomes
	})
}
