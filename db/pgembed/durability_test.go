//go:build linux

package pgembed_test

import (
	"context"
	"testing"
	"time"

	"shipgraph/db/dbtest"
	"shipgraph/db/pgembed"
)

// TestDurableByDefault: the embedded server runs with fsync,
// synchronous_commit and full_page_writes on, so an acknowledged write
// survives a crash; Options.Fast (tests, demos) turns them off.
func TestDurableByDefault(t *testing.T) {
	for _, c := range []struct {
		fast bool
		want string
	}{{false, "on"}, {true, "off"}} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		s, err := pgembed.Start(ctx, pgembed.Options{DataDir: dataDir(t), Fast: c.fast, Logf: t.Logf})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		db := dbtest.Open(t, s.URL("postgres"))
		for _, name := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
			var got string
			if err := db.QueryRow(`SELECT current_setting($1)`, name).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("Fast=%v: %s = %s, want %s", c.fast, name, got, c.want)
			}
		}
		_ = db.Close()
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}
