//go:build !packedmigrations

package db

import (
	"embed"
	"io/fs"
)

// migrations are the schema's migrations as written (db/migrations): every
// build but the server image's (migrations_packed.go).
//
//go:embed migrations/*.sql
var migrations embed.FS

// migrationFS is the migrations at the root of an FS, as goose reads them.
func migrationFS() (fs.FS, error) { return fs.Sub(migrations, "migrations") }
