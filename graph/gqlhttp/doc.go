// Package gqlhttp serves GraphQL over HTTP: the gqlgen server with its
// transports (GraphQL-over-HTTP POST and GET, Server-Sent Events, and both
// WebSocket protocols), the limits (parser tokens, depth, aliases,
// complexity weighed from the catalogue's to-many relationships), the
// caches (queries, APQ), the error presenter that gives every error an
// extensions.code, and the fast path's place among the operation
// middleware.
package gqlhttp
