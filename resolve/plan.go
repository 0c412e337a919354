package resolve

import "shipgraph/load"

// The load plan both APIs hand the resolver layer (load/plan.go): GraphQL
// builds it from a selection, /v2 from include and fields[type], in the
// catalogue's terms. Reads run it (a list's Query.Plan, a get's plan
// argument): the columns it selects are decided before the read, its
// relationships load after it; Load runs it on records a write returned.
type (
	Plan   = load.Plan
	Fields = load.Fields
)

// IsColumn reports whether col is a column of res the store can narrow
// its reads to (load.IsColumn).
var IsColumn = load.IsColumn
