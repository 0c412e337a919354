package gqlhttp

import (
	"shipgraph/graph/executor"
	"shipgraph/model"
)

// The complexity of a grouped count (containerStats, shipmentStats): the
// statement reads every row the filter keeps, which costs about what a page
// of statsWeight simple records does, and each group costs what it selects
// (child) times the groups expected: the product of each key's expected
// distinct values, at most model.MaxGroups. Two-key counts of a dashboard
// (terminal × last free day: 1,000 + 250 groups × 3 fields) stay far below
// the limit; three keys of records (terminal × line × port) do not pass.
const statsWeight = 1000

// groupsExpected is how many values each key is expected to take.
var groupsExpected = map[string]int{
	"STATUS":            len(model.ContainerStatuses.Values()),
	"POD_TERMINAL":      50,
	"SHIPPING_LINE":     50,
	"PORT_OF_DISCHARGE": 50,
	"LAST_FREE_DAY":     len(model.LastFreeDayBuckets.Values()),
	"ETA_WEEK":          10,
}

func statsComplexity[K ~string](child int, keys []K) int {
	groups := 1
	for _, k := range keys {
		groups = min(groups*max(groupsExpected[string(k)], 1), model.MaxGroups)
	}
	return statsWeight + child*groups
}

// weighStats sets the complexity of the grouped counts.
func weighStats(root *executor.ComplexityRoot) {
	root.Query.ContainerStats = func(child int, _ *model.ContainerFilter, keys []model.ContainerGroupBy) int {
		return statsComplexity(child, keys)
	}
	root.Query.ShipmentStats = func(child int, _ *model.ShipmentFilter, keys []model.ShipmentGroupBy) int {
		return statsComplexity(child, keys)
	}
}
