// Package live is the live hub: it fans the database's change feed (one
// listening connection per process, db.Listener) out to this process'
// subscriptions, each with a bounded queue, and ends subscriptions whose
// key was revoked, that fell behind, or that outlive the server. It knows
// nothing of GraphQL: graph's subscription resolvers turn its events into
// GraphQL events, and the transports (graph/gqlhttp) give it the
// connections to end (Conn).
package live
