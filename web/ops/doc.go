// Package ops serves the live operations page at /ops: tiles of grouped
// counts, the shipments table with its containers, a container panel and
// live updates, built only on the public GraphQL API with the key the
// person types. It doubles as the reference client for dashboard teams.
//
// The page's source is ours and committed: TypeScript in src/, its
// operations in operations/*.graphql, the markup and styles in page.html
// and ops.css. scripts/build-ops.sh (`make ops`, part of `make build`)
// installs the pinned npm tools into a throw-away directory, writes the
// operations' trusted documents manifest with
// @apollo/generate-persisted-query-manifest and bundles src/main.ts (and
// graphql-ws) with esbuild into dist/, which //go:embed picks up. dist/ is
// gitignored except its README, so the binary builds without npm; /ops
// then answers 503 with a page saying the assets were not built and how to
// build them.
//
// # Routing
//
//	h := ops.Handler()
//	mux.Handle("/ops", h)
//	mux.Handle("/ops/", h) // /ops/assets/<file>
//
// The handler needs no key: the page asks the person for one and sends it
// with each API request (Authorization: Token …).
//
// # Browser hooks
//
// For automated checks (ops_browser_test.go): <body> carries
// data-ops-state ("key", "loading", "ready"), data-live ("off",
// "connecting", "live", "reconnecting"), data-last-log-id (the last change
// log id the subscription delivered) and data-live-connects (subscriptions
// started). Tiles are [data-tile="<group>:<value>"] with the count as text;
// rows are tr[data-container-id]; a cell that a live update changed gets
// data-changed="<time>".
package ops
