// Package graph is the GraphQL side of Shipgraph: gqlgen's resolvers
// (schema.resolvers.go, regenerated-but-kept, and the subscription
// resolvers), each a thin adapter that turns GraphQL arguments into the
// resolver layer's queries and commands (package resolve), builds the load
// plan from the operation's selection (plan.go) and wraps the records in
// connection types. It holds no rules of its own: the same rules, loaders
// and SQL serve /v2. The generated executor is graph/executor; serving it
// over HTTP is graph/gqlhttp.
package graph
