#!/usr/bin/env bash
# Runs one query with @defer through Apollo Client 4 (see
# scripts/apollo-defer-client.mjs) against a running server.
#
# Usage: scripts/apollo-defer-client.sh URL QUERY
#   URL    e.g. http://127.0.0.1:8080/graphql
#   QUERY  the query, with @defer
# The key comes from $APOLLO_AUTHORIZATION ("Token <key>").
#
# The npm packages are installed into a throw-away directory (no global
# install, nothing left in the repo); npm's cache makes reruns quick.
set -euo pipefail

# Exact pins: Apollo Client 4 wants graphql 16 and rxjs 7 (peers).
APOLLO_CLIENT_VERSION=4.3.7
GRAPHQL_VERSION=16.15.0
RXJS_VERSION=7.8.2

if [[ $# -ne 2 ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
fi
. "$(dirname "${BASH_SOURCE[0]}")/npm-run.sh"
npm_run apollo-defer-client.mjs "@apollo/client@${APOLLO_CLIENT_VERSION}" "graphql@${GRAPHQL_VERSION}" "rxjs@${RXJS_VERSION}" -- "$@"
