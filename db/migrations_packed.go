//go:build packedmigrations

package db

import (
	"embed"
	"io/fs"
)

// packedMigrations are the migrations gzipped, one file each, by the server
// image's build (scripts/image.sh packs db/migrations into
// db/migrations/packed, builds with this tag and removes them; they are
// never committed): 64 KB instead of 350 KB of SQL in the image's binary.
// A build with the tag and no packed files fails here.
//
//go:embed migrations/packed/*.sql.gz
var packedMigrations embed.FS

// migrationFS is the packed migrations unpacked (unpackMigrations).
func migrationFS() (fs.FS, error) {
	sub, err := fs.Sub(packedMigrations, "migrations/packed")
	if err != nil {
		return nil, err
	}
	return unpackMigrations(sub)
}
