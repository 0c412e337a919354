#!/usr/bin/env bash
# Runs one subscription with the graphql-ws npm library's client (see
# scripts/graphql-ws-client.mjs) against a running server.
#
# Usage: scripts/graphql-ws-client.sh WS_URL QUERY EVENTS
#   WS_URL  e.g. ws://127.0.0.1:8080/graphql
#   QUERY   the subscription
#   EVENTS  how many results to wait for
# The key comes from $GRAPHQL_WS_AUTHORIZATION ("Token <key>").
#
# The npm packages are installed into a throw-away directory (no global
# install, nothing left in the repo); npm's cache makes reruns quick.
set -euo pipefail

# Exact pins: graphql-ws 6.4.2 wants graphql 15 or 16; ws for Node < 22,
# which has no global WebSocket.
GRAPHQL_WS_VERSION=6.4.2
WS_VERSION=8.23.0
GRAPHQL_VERSION=16.15.0

if [[ $# -ne 3 ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
fi
. "$(dirname "${BASH_SOURCE[0]}")/npm-run.sh"
npm_run graphql-ws-client.mjs "graphql-ws@${GRAPHQL_WS_VERSION}" "ws@${WS_VERSION}" "graphql@${GRAPHQL_VERSION}" -- "$@"
