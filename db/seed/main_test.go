package seed_test

import (
	"testing"

	"shipgraph/testkit/pg"
)

// Each test seeds a database of its own, cloned from a migrated template.
func TestMain(m *testing.M) { pg.Main(m) }
