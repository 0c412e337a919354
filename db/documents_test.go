package db_test

import (
	"context"
	"slices"
	"testing"

	"shipgraph/db/dbtest"
	"shipgraph/model"
)

// The added_by order reads a name the triggers keep in the document row:
// it follows renames and deletions of users.
func TestAddedByFollowsUsers(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	order := func() []string {
		t.Helper()
		p, err := f.DB.ListDocuments(ctx, f.A.Account, model.DocumentFilter{}, model.PageRequest{Order: model.Order{Field: "added_by"}, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for i := range p.Items {
			names = append(names, *p.Keys[i])
		}
		return names
	}
	want := []string{"", "", "alice Zed", "alice Zed", "alice Zed", "bob Young", "bob Young", "carol"}
	if got := order(); !slices.Equal(got, want) {
		t.Fatalf("keys %q, want %q", got, want)
	}
	f.exec(t, `UPDATE users SET first_name = 'Zoe', last_name = 'Able' WHERE id = $1`, f.A.Admin)
	if dbtest.Citus(t) {
		// There the key's ON DELETE SET NULL (user_id) is NO ACTION
		// (db/citus.go): what it would do, first.
		f.exec(t, `UPDATE documents SET user_id = NULL WHERE account_id = $1 AND user_id = $2`, f.A.Account, f.A.Viewer)
	}
	f.exec(t, `DELETE FROM users WHERE id = $1`, f.A.Viewer)
	want = []string{"", "", "", "Zoe Able", "Zoe Able", "Zoe Able", "bob Young", "bob Young"}
	if got := order(); !slices.Equal(got, want) {
		t.Fatalf("after rename and delete: keys %q, want %q", got, want)
	}
	f.exec(t, `UPDATE documents SET user_id = $1 WHERE id = $2`, f.A.Member, f.A.Documents[6])
	want = []string{"", "", "Zoe Able", "Zoe Able", "Zoe Able", "bob Young", "bob Young", "bob Young"}
	if got := order(); !slices.Equal(got, want) {
		t.Fatalf("after reassigning: keys %q, want %q", got, want)
	}
}
