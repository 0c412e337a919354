// Package rest is the /v2 JSON:API adapter: it translates a request into
// calls of the resolver layer shared with GraphQL (the same rules, loaders
// and SQL) and their records into JSON:API documents. It never imports db/.
//
// The protocol itself (documents and their writer, query parameters, write
// bodies, error documents, page links) is rest/jsonapi; here are the routes
// (NewHandler, handler.go), each resource's handlers and renderer (one file
// per resource, as graph/'s resolvers), the load plan of a response from its
// include and fields[…] (plan.go, fields.go) and the compound document's
// included resources (render.go). docs/v2.md lists every endpoint and rule.
package rest
