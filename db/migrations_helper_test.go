package db_test

import (
	"context"
	"io/fs"
	"testing"

	"github.com/pressly/goose/v3"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/db/seed"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

// seededMigrations is a database of the test's own seeded with shipments
// shipments from seedN, a store on it, and a goose provider over the
// embedded migrations, for tests that take the schema down and up again.
func seededMigrations(t *testing.T, shipments int, seedN int64) (*db.DB, *goose.Provider) {
	t.Helper()
	ctx := context.Background()
	store := pg.At(t, dbtest.NewDB(t)).Store
	if _, _, err := seed.Run(ctx, store, seed.Options{Shipments: shipments, Seed: seedN, Now: testkit.SeedNow}); err != nil {
		t.Fatal(err)
	}
	fsys, err := fs.Sub(db.Migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, store.SQL(), fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	return store, p
}
