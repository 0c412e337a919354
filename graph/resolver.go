package graph

import (
	"shipgraph/db"
	"shipgraph/live"
	"shipgraph/load"
)

// Resolver holds the dependencies of every resolver. Both transports use it:
// gqlgen through the generated executor, the /v2 adapter by calling the
// query, mutation and field resolvers directly.
//
//go:generate ../scripts/generate.sh
type Resolver struct {
	DB *db.DB
	// Live fans database changes out to subscriptions (live.go); nil
	// refuses subscriptions.
	Live *live.Hub
	// LoaderConfig configures the loaders each subscription event builds.
	LoaderConfig load.LoaderConfig
}
