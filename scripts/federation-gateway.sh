#!/usr/bin/env bash
# Apollo Federation composition check of a running Shipgraph: a second
# subgraph (customers, Node, @apollo/subgraph) extends Shipment, an Apollo
# Gateway composes both with IntrospectAndCompose inside Apollo Server, and
# queries crossing both subgraphs run through the gateway
# (scripts/federation-gateway.mjs; docs/federation.md).
#
# Usage: scripts/federation-gateway.sh URL SHIPMENT_ID...
#   URL          Shipgraph's GraphQL endpoint, e.g. http://127.0.0.1:8080/graphql
#   SHIPMENT_ID  shipments of the key's account the customers subgraph points at
#   The Authorization value comes from $SHIPGRAPH_AUTHORIZATION ("Token <key>").
#
# Prints the gateway's answers as JSON lines; exits 1 when composition or a
# query fails, 2 when it could not run. The npm packages are installed into a
# throw-away directory, as scripts/graphql-http-audit.sh does.
set -euo pipefail

# Exact pins: the versions of the issue; graphql 16 for both.
GATEWAY_VERSION=2.14.4
SERVER_VERSION=5.5.1
SUBGRAPH_VERSION=2.14.4
GRAPHQL_VERSION=16.15.0

if [[ $# -lt 2 ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
fi
. "$(dirname "${BASH_SOURCE[0]}")/npm-run.sh"
npm_run federation-gateway.mjs "@apollo/gateway@${GATEWAY_VERSION}" "@apollo/server@${SERVER_VERSION}" \
  "@apollo/subgraph@${SUBGRAPH_VERSION}" "graphql@${GRAPHQL_VERSION}" -- "$@"
