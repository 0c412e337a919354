// Package jsonapi is the JSON:API protocol of the /v2 adapter, as gqlgen's
// runtime is GraphQL's to graph/: the document types and their writer (what
// encoding/json would write, without reflection; the attribute writers are
// generated in rest/), sparse fieldsets, error documents and the statuses
// of the model's error codes, write bodies (the JSON:API form and the flat
// forms clients send), query parameters against an endpoint's allow-lists,
// and page links. It knows no resource of Shipgraph's: rest/ translates
// between it and the resolver layer.
package jsonapi
