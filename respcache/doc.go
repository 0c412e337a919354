// Package respcache keeps whole answers (GraphQL queries, /v2 GETs) in
// memory until the data under them changes: an entry
// is kept with its account and the set of record types it read (tags), and
// Invalidate drops the entries of one account whose tags meet a change's.
// Memory is bounded in bytes, least recently used first out.
//
// A read that began before an invalidation of its account must not be
// kept: Gen, taken before the read, and Put, which refuses when the
// account's generation moved since, close that race.
//
// The package knows neither HTTP routing nor the store: httpapi keys the
// requests, decides what may be kept and follows the change log; the
// layers below mark a request's answer as not to be kept (NoStore) or as
// a query (MarkQuery) through the request's context.
package respcache
