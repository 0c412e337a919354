package graph_test

import (
	"testing"

	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

// Every test package gets its own databases cloned from one migrated
// template (see dbtest). Read-only tests share one seeded database: they
// are the subtests of TestSeeded, which seeds it once. Tests that write
// make a small database of their own.
func TestMain(m *testing.M) { pg.Main(m) }

// Demo keys of the seeded data.
const (
	acmeAdmin    = "acme/admin"
	acmeMember   = "acme/member"
	acmeViewer   = "acme/viewer"
	globexAdmin  = "globex/admin"
	globexViewer = "globex/viewer"
)

// seededTests share the seeded database. serial tests run first, one at a
// time (the statement-count test reads the process-wide counter, so nothing
// else may send SQL meanwhile); the others then run in parallel.
var seededTests = []struct {
	name   string
	serial bool
	fn     func(*testing.T, *testkit.Env)
}{
	{"DashboardStatements", true, testDashboardStatements},
	{"EntitiesStatements", true, testEntitiesStatements},
	{"JourneyStatements", true, testJourneyStatements},
	{"Journey", false, testJourney},
	{"WideQueryStatements", false, testWideQueryStatements},
	{"Viewer", false, testViewer},
	{"EveryAttribute", false, testEveryAttribute},
	{"ShipmentRelationships", false, testShipmentRelationships},
	{"ContainerRelationships", false, testContainerRelationships},
	{"DocumentRelationships", false, testDocumentRelationships},
	{"CustomFieldRelationships", false, testCustomFieldRelationships},
	{"ReferenceData", false, testReferenceData},
	{"Node", false, testNode},
	{"RootByIDMissing", false, testRootByIDMissing},
	{"Pagination", false, testPagination},
	{"PaginationArguments", false, testPaginationArguments},
	{"NumberedPages", false, testNumberedPages},
	{"ShipmentFilters", false, testShipmentFilters},
	{"ContainerFilters", false, testContainerFilters},
	{"DocumentFilters", false, testDocumentFilters},
	{"DefinitionFilters", false, testDefinitionFilters},
	{"TenantIsolation", false, testTenantIsolation},
	{"Authentication", false, testAuthentication},
	{"ViewerCannotWrite", false, testViewerCannotWrite},
	{"Entities", false, testEntities},
	{"Service", false, testService},
}

func TestSeeded(t *testing.T) {
	e := testkit.New(t, testkit.Options{Shipments: 150})
	for _, st := range seededTests {
		t.Run(st.name, func(t *testing.T) {
			if !st.serial {
				t.Parallel()
			}
			st.fn(t, e)
		})
	}
}

func body(t *testing.T, v any) []byte { return testkit.JSON(t, v) }
