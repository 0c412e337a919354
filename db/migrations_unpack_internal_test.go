package db

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestPackedMigrationsUnpack packs the migrations as the server image's
// build does (scripts/pack-migrations.sh) and reads them back as the
// image's binary does (unpackMigrations): the same files, byte for byte,
// and a stray file in the pack refused.
func TestPackedMigrationsUnpack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "packed")
	if out, err := exec.Command("../scripts/pack-migrations.sh", dir).CombinedOutput(); err != nil {
		t.Fatalf("pack-migrations.sh: %v\n%s", err, out)
	}
	got, err := unpackMigrations(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	want, err := migrationFS()
	if err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(want, "*.sql")
	if err != nil || len(names) < 40 {
		t.Fatalf("source migrations: %d (%v)", len(names), err)
	}
	gotNames, err := fs.Glob(got, "*")
	if err != nil {
		t.Fatal(err)
	}
	if len(gotNames) != len(names) {
		t.Fatalf("unpacked %d files, the source has %d: %v", len(gotNames), len(names), gotNames)
	}
	for _, n := range names {
		a, err := fs.ReadFile(want, n)
		if err != nil {
			t.Fatal(err)
		}
		b, err := fs.ReadFile(got, n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: unpacked %d bytes differ from the source's %d", n, len(b), len(a))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := unpackMigrations(os.DirFS(dir)); err == nil {
		t.Error("a stray file in the pack was accepted")
	}
}
