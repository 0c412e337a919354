package graph

import (
	"shipgraph/live"
	"shipgraph/resolve"
)

// Resolver holds the dependencies of gqlgen's resolvers, which are thin
// adapters over the resolver layer (resolve): they turn GraphQL arguments
// into its queries and commands, build the load plan from the selection
// (plan.go), and build the connection types.
//
//go:generate ../scripts/generate.sh
type Resolver struct {
	// Res is the resolver layer: every read and write.
	Res *resolve.Resolver
	// Live fans database changes out to subscriptions (package live); nil
	// refuses subscriptions.
	Live *live.Hub
}
