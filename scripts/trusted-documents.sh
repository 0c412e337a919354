#!/usr/bin/env bash
# Trusted documents with the real tools (scripts/trusted-documents.mjs):
# the manifest written by @apollo/generate-persisted-query-manifest from a
# client's .graphql operations, and Apollo Client 4 running them by id
# (PersistedQueryLink, ids from the manifest by @apollo/persisted-query-lists)
# over POST and GET. TestBrowserTrustedDocuments (make test-browser) runs both.
#
# Usage: scripts/trusted-documents.sh generate DIR OUT
#        scripts/trusted-documents.sh client URL MANIFEST OPERATIONS_JSON
#   DIR              a directory of .graphql operations (testdata/trusted-client)
#   OUT, MANIFEST    the manifest's path
#   URL              Shipgraph's GraphQL endpoint, e.g. http://127.0.0.1:8080/graphql
#   OPERATIONS_JSON  [{"name": "Viewer", "variables": {}}, …]
#   The Authorization value comes from $SHIPGRAPH_AUTHORIZATION ("Token <key>").
#
# The npm packages are installed into a throw-away directory, as
# scripts/graphql-http-audit.sh does; exits 2 when they cannot be.
set -euo pipefail

# Exact pins.
MANIFEST_VERSION=1.4.0
LISTS_VERSION=1.1.0
CLIENT_VERSION=4.3.8
RXJS_VERSION=7.8.2
GRAPHQL_VERSION=16.15.0

if [[ $# -lt 3 ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
fi
. "$(dirname "${BASH_SOURCE[0]}")/npm-run.sh"
npm_run trusted-documents.mjs "@apollo/generate-persisted-query-manifest@${MANIFEST_VERSION}" \
  "@apollo/persisted-query-lists@${LISTS_VERSION}" "@apollo/client@${CLIENT_VERSION}" \
  "rxjs@${RXJS_VERSION}" "graphql@${GRAPHQL_VERSION}" -- "$@"
