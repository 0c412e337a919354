// Package jsonapi is the JSON:API protocol of the /v2 adapter, as gqlgen's
// runtime is GraphQL's to graph/: error documents and the statuses of the
// model's error codes, and write bodies (the JSON:API form and the flat forms
// clients send, read into attributes by name). It knows no resource of
// Shipgraph's: rest/ translates between it and the resolver layer.
package jsonapi
