package gqlhttp_test

import (
	"testing"

	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

// The transport's tests run against the real chain on databases cloned
// from one migrated template (see dbtest); the limit tests share one
// seeded database.
func TestMain(m *testing.M) { pg.Main(m) }

const acmeAdmin = "acme/admin"

func TestSeeded(t *testing.T) {
	e := testkit.New(t, testkit.Options{Shipments: 150})
	t.Run("Limits", func(t *testing.T) { t.Parallel(); testLimits(t, e) })
	t.Run("NoSuggestions", func(t *testing.T) { t.Parallel(); testNoSuggestions(t, e) })
}

type idObj struct{ ID string }
