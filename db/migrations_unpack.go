package db

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing/fstest"
)

// unpackMigrations reads every NAME.sql.gz at the root of packed into
// NAME.sql of an in-memory FS (testing/fstest's MapFS: a plain map of file
// contents, nothing of package testing), once at start-up: the server
// image's migrations (migrations_packed.go). Anything else there is an
// error, so a stray file fails the start rather than a migration.
func unpackMigrations(packed fs.FS) (fs.FS, error) {
	entries, err := fs.ReadDir(packed, ".")
	if err != nil {
		return nil, err
	}
	out := fstest.MapFS{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".sql.gz")
		if !ok || e.IsDir() {
			return nil, fmt.Errorf("packed migrations: unexpected %s", e.Name())
		}
		b, err := fs.ReadFile(packed, e.Name())
		if err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("packed migrations: %s: %w", e.Name(), err)
		}
		sql, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("packed migrations: %s: %w", e.Name(), err)
		}
		out[name+".sql"] = &fstest.MapFile{Data: sql, Mode: 0o444}
	}
	return out, nil
}
