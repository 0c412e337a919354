// Package executor is gqlgen's generated executable schema
// (generated.go, from schema.graphqls and gqlgen.yml) and the query fast
// path: fastpath.gen.go, written by the plugin in tools/gqlgen, writes the
// selected fields of a query straight into one buffer, and fastpath.go runs
// it before gqlgen's executor and hands over whatever it does not handle.
// Both generated files come from `make generate` and are never edited.
package executor
