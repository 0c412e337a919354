package db

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
)

// River (the job engine of the tracking polls, carrier/tracking) keeps its
// jobs in tables of its own (river_job, river_leader, river_queue,
// river_client, river_client_queue, river_migration), created by River's
// own migrations: they run here, after ours, wherever ours run (the serve
// and migrate verbs, and every test template database), under an advisory lock so concurrent starts do not race.
// db/distribution_test.go lists River's tables among those left out of the
// distribution rules, with the reason.

// riverMigrationLock is the advisory lock key of River's migrations
// ("river" in ASCII).
const riverMigrationLock = 0x7269766572

func migrateRiver(ctx context.Context, sdb *sql.DB) error {
	m, err := rivermigrate.New(riverdatabasesql.New(sdb), &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	// River's migrations add enum values and cannot share one transaction:
	// a session lock on a connection of its own serialises starts instead.
	conn, err := sdb.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	queriesPrimary.Inc()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, riverMigrationLock); err != nil {
		return err
	}
	defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, riverMigrationLock) //nolint:errcheck
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	return nil
}
