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
command -v node >/dev/null || { echo "node is required (apt-get install -y nodejs npm)" >&2; exit 2; }
command -v npm >/dev/null || { echo "npm is required (apt-get install -y npm)" >&2; exit 2; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

echo '{"private":true,"type":"module"}' >"${tmp}/package.json"
if ! npm install --prefix "${tmp}" --no-audit --no-fund --ignore-scripts --loglevel=error \
  "graphql-ws@${GRAPHQL_WS_VERSION}" "ws@${WS_VERSION}" "graphql@${GRAPHQL_VERSION}" >"${tmp}/npm.log" 2>&1; then
  cat "${tmp}/npm.log" >&2
  exit 2
fi
cp "${here}/graphql-ws-client.mjs" "${tmp}/client.mjs"

status=0
node "${tmp}/client.mjs" "$@" || status=$?
exit "${status}"
