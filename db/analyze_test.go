package db_test

import (
	"context"
	"slices"
	"testing"

	"shipgraph/db/dbtest"
	"shipgraph/testkit/pg"
)

// TestAnalyzeUnanalyzed: the tables that hold rows and have no statistics
// are analyzed, once; an empty table is not, and neither is one analyzed
// before, so a database whose tables have statistics costs the look-up
// only. Nothing on Citus (the coordinator's tables are shells).
func TestAnalyzeUnanalyzed(t *testing.T) {
	t.Parallel()
	d := pg.New(t, 0)
	ctx := context.Background()
	if _, err := d.Store.SQL().Exec(`INSERT INTO accounts (slug, company_name) VALUES ('an', 'An')`); err != nil {
		t.Fatal(err)
	}
	got, err := d.Store.AnalyzeUnanalyzed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if dbtest.Citus(t) {
		if got != nil {
			t.Fatalf("on Citus analyzed %v, want nothing", got)
		}
		return
	}
	if !slices.Contains(got, "public.accounts") || slices.Contains(got, "public.shipments") {
		t.Fatalf("analyzed %v, want public.accounts (rows) and not public.shipments (empty)", got)
	}
	var stats int
	d.One(t, []any{&stats}, `SELECT count(*) FROM pg_stats WHERE schemaname = 'public' AND tablename = 'accounts'`)
	if stats == 0 {
		t.Fatal("accounts: no statistics after the analyze")
	}
	again, err := d.Store.AnalyzeUnanalyzed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 0 {
		t.Fatalf("analyzed again: %v, want nothing (every table with rows has statistics)", again)
	}
}
