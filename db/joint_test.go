package db_test

import (
	"reflect"
	"testing"

	"shipgraph/db"
	"shipgraph/model"
)

// TestReadJointMatchesReadsAlone holds a joint read (one statement) to
// the reads it joins, each run alone: the same rows, in the same order,
// every column alike, for the whole select lists and for a dashboard's
// narrowed ones; the other account's ids read nothing.
func TestReadJointMatchesReadsAlone(t *testing.T) {
	f := newFixture(t)
	a, b := f.A, f.B
	shipments := append(append([]string{}, a.Shipments...), b.Shipments...)
	entities := append(append(append([]string{}, a.Shipments...), a.Containers...), b.Shipments...)
	stores := map[string]*db.DB{
		"whole":    f.DB,
		"narrowed": f.DB.Select(model.Selection{"Container": {"number", "current_status", "pod_terminal_id"}, "CustomField": {"value"}}),
	}
	for name, d := range stores {
		t.Run(name, func(t *testing.T) {
			ctx, n := counting()
			wantC, err := d.ContainersByShipmentIDs(ctx, a.Account, shipments)
			if err != nil {
				t.Fatal(err)
			}
			wantF, err := d.CustomFieldsByEntityIDs(ctx, a.Account, entities)
			if err != nil {
				t.Fatal(err)
			}
			if len(wantC) < 5 || len(wantF) < 3 {
				t.Fatalf("fixture: %d containers, %d values", len(wantC), len(wantF))
			}
			n.Store(0)
			pc, pf := db.ContainersByShipment.Part(shipments), db.CustomFieldsByEntity.Part(entities)
			if err := d.ReadJoint(ctx, a.Account, pc, pf); err != nil {
				t.Fatal(err)
			}
			if got := n.Load(); got != 1 {
				t.Errorf("joint read: %d statements, want 1", got)
			}
			if !reflect.DeepEqual(pc.Rows, wantC) {
				t.Errorf("containers: joint read differs from the read alone:\n%+v\n%+v", deref(pc.Rows), deref(wantC))
			}
			if !reflect.DeepEqual(pf.Rows, wantF) {
				t.Errorf("custom fields: joint read differs from the read alone:\n%+v\n%+v", deref(pf.Rows), deref(wantF))
			}

			// A part without ids reads nothing; the other runs alone.
			n.Store(0)
			pc, pf = db.ContainersByShipment.Part(shipments), db.CustomFieldsByEntity.Part([]string{"not-a-uuid"})
			if err := d.ReadJoint(ctx, a.Account, pc, pf); err != nil {
				t.Fatal(err)
			}
			if got := n.Load(); got != 1 || !reflect.DeepEqual(pc.Rows, wantC) || pf.Rows != nil {
				t.Errorf("one part left: %d statements, %d containers, %d values", got, len(pc.Rows), len(pf.Rows))
			}

			// The other account's ids only: nothing of theirs comes back.
			pc, pf = db.ContainersByShipment.Part(b.Shipments), db.CustomFieldsByEntity.Part(b.Shipments)
			if err := d.ReadJoint(ctx, a.Account, pc, pf); err != nil {
				t.Fatal(err)
			}
			if len(pc.Rows)+len(pf.Rows) != 0 {
				t.Errorf("another account's ids read %d containers, %d values", len(pc.Rows), len(pf.Rows))
			}
		})
	}
}

func deref[T any](rows []*T) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = *r
	}
	return out
}
