// Package live is the live hub: it reads each account's change log
// (db/changelog.go) while the account has subscribers — woken by the
// process' one listening connection (db.Listener) — and fans the changes
// out to this process' subscriptions, each with a bounded queue, in log
// order; a subscription may resume after a log id it saw (CatchUp). It
// ends subscriptions whose key was revoked, that fell behind, or that
// outlive the server. It knows nothing of GraphQL: graph's subscription
// resolvers turn its events into GraphQL events, and the transports
// (graph/gqlhttp) give it the connections to end (Conn) and number their
// events (EventIDs).
package live
