package tracking_test

import (
	"testing"

	"shipgraph/db"
	"shipgraph/db/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m, db.Migrate) }
