package catalog

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"shipgraph/db"
)

// TestByParentGroups: a to-many read gives every asked parent its rows in
// the read's order (an empty list when it has none), whether the rows come
// grouped by parent or not, and a parent's list does not share its
// array's room with the next parent's.
func TestByParentGroups(t *testing.T) {
	type row struct{ parent, id string }
	for name, rows := range map[string][]row{
		"grouped":   {{"a", "1"}, {"a", "2"}, {"b", "3"}},
		"ungrouped": {{"a", "1"}, {"b", "3"}, {"a", "2"}},
	} {
		read := &ReadOf[[]row]{}
		*read = *byParent("test", func(*db.DB, context.Context, string, []string) ([]row, error) {
			return rows, nil
		}, func(r row) string { return r.parent })
		reads = reads[:len(reads)-1] // not one of the catalogue's
		got, err := read.Fetch(context.Background(), nil, "acc", []string{"a", "b", "c"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]row{"a": {{"a", "1"}, {"a", "2"}}, "b": {{"b", "3"}}, "c": {}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v; want %v", name, got, want)
		}
		before := slices.Clone(rows)
		_ = append(got["a"], row{"a", "x"})
		if !slices.Equal(rows, before) || got["b"][0] != (row{"b", "3"}) {
			t.Errorf("%s: appending to a's list wrote into the rows: %v", name, rows)
		}
	}
}
