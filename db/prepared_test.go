package db_test

import (
	"context"
	"testing"

	"shipgraph/db/dbtest"
	"shipgraph/testkit/pg"
)

// Reads run as prepared statements; when a migration changes a column a
// prepared read returns (PostgreSQL: "cached plan must not change result
// type"), the read still answers, and so does the next one.
func TestPreparedReadSurvivesColumnChange(t *testing.T) {
	ctx := context.Background()
	store := pg.At(t, dbtest.NewDB(t)).Store
	var id string
	if err := store.SQL().QueryRowContext(ctx,
		`INSERT INTO ports (code, name, country_code, time_zone) VALUES ('ZZTST', 'Test', 'ZZ', 'UTC') RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	// One connection, so the statement prepared is the one read again.
	store.SQL().SetMaxOpenConns(1)
	read := func() {
		t.Helper()
		ports, err := store.PortsByIDs(ctx, []string{id})
		if err != nil || len(ports) != 1 || ports[0].Name != "Test" {
			t.Fatalf("read: %v %v", ports, err)
		}
	}
	read()
	read()
	if _, err := store.SQL().ExecContext(ctx, `ALTER TABLE ports ALTER COLUMN name TYPE varchar(300)`); err != nil {
		t.Fatal(err)
	}
	read()
	read()
}
