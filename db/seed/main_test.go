package seed_test

import (
	"testing"

	"shipgraph/db"
	"shipgraph/db/dbtest"
)

// Each test seeds a database of its own, cloned from a migrated template.
func TestMain(m *testing.M) { dbtest.Main(m, db.Migrate) }
