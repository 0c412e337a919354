package db_test

import (
	"context"
	"testing"

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/testkit/pg"
)

// Reads run as prepared statements; when a migration changes a column a
// prepared read returns (PostgreSQL: "cached plan must not change result
// type"), the read still answers, and so does the next one.
func TestPreparedReadSurvivesColumnChange(t *testing.T) {
	ctx := context.Background()
	store := pg.At(t, dbtest.NewDB(t)).Store
	id := testPort(t, store)
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

// The row reader's raw path takes a pooled connection as database/sql
// would: connections PostgreSQL ended while they sat idle in the pool
// (a restart, a failover, an administrator) are discarded and the read
// answers from a new one, however many of them the pool held.
func TestRawReadsSurviveEndedConnections(t *testing.T) {
	ctx := context.Background()
	store := pg.At(t, dbtest.NewDB(t)).Store
	id := testPort(t, store)
	read := func() {
		t.Helper()
		ports, err := store.PortsByIDs(ctx, []string{id})
		if err != nil || len(ports) != 1 || ports[0].Name != "Test" {
			t.Fatalf("read: %v %v", ports, err)
		}
	}
	const idle = 4
	store.SQL().SetMaxIdleConns(idle + 1)
	// idle connections, each with the read prepared on it
	for range 3 {
		var held []func()
		for range idle + 1 { // and the one that ends the others
			c, err := store.SQL().Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, func() { _ = c.Close() })
		}
		for _, release := range held {
			release()
		}
		read()
	}
	admin, err := store.SQL().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	var ended int
	if err := admin.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&ended); err != nil {
		t.Fatal(err)
	}
	if ended < idle {
		t.Fatalf("ended %d connections, want the pool's %d idle ones", ended, idle)
	}
	read()
	read()
}

// testPort adds a port to read back and returns its id.
func testPort(t *testing.T, store *db.DB) string {
	t.Helper()
	var id string
	if err := store.SQL().QueryRowContext(context.Background(),
		`INSERT INTO ports (code, name, country_code, time_zone) VALUES ('ZZTST', 'Test', 'ZZ', 'UTC') RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
