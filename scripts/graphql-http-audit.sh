#!/usr/bin/env bash
# GraphQL-over-HTTP spec audit of a running server with graphql-http's
# auditServer.
#
# Usage: scripts/graphql-http-audit.sh URL [AUTH_HEADER_VALUE]
#        scripts/graphql-http-audit.sh --self-test
#   URL                e.g. http://127.0.0.1:8080/graphql
#   AUTH_HEADER_VALUE  full Authorization value, e.g. "Token <key>"; may also
#                      come from $GRAPHQL_AUDIT_AUTHORIZATION (keeps the key
#                      out of the process list)
#   --self-test        audit graphql-http's reference server instead; all OK
#                      proves this script and its pins work
#   AUDIT_ALLOW_WARN=1 do not fail on SHOULD-level warnings
#
# Prints "OK|WARN|FAIL|NOTE <id> <name>" per audit and the summary line
# "graphql-http audit: N ok, N warn, N fail". Exits 1 if a MUST failed or a
# SHOULD warned (see AUDIT_ALLOW_WARN), 2 if the audit could not run.
#
# The npm packages are installed into a throw-away directory (no global
# install, nothing left in the repo); npm's cache makes reruns quick.
set -euo pipefail

# Exact pins: audit results must not change under us between runs.
# graphql-http 1.23.1 accepts graphql >=0.11 <=17, hence the 16.x line.
GRAPHQL_HTTP_VERSION=1.23.1
GRAPHQL_VERSION=16.15.0

usage() {
  # The header comment above is the help text.
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}
if [[ $# -ge 1 && ( "$1" == -h || "$1" == --help ) ]]; then
  usage
  exit 0
fi
if [[ $# -lt 1 || $# -gt 2 ]]; then
  usage >&2
  exit 2
fi

command -v node >/dev/null || { echo "node is required (apt-get install -y nodejs npm)" >&2; exit 2; }
command -v npm >/dev/null || { echo "npm is required (apt-get install -y npm)" >&2; exit 2; }
# auditServer uses the global fetch/Headers/Request (Node >= 18).
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' ||
  { echo "Node.js >= 18 is required, found $(node --version)" >&2; exit 2; }

. "$(dirname "${BASH_SOURCE[0]}")/npm-run.sh"
npm_run graphql-http-audit.mjs "graphql-http@${GRAPHQL_HTTP_VERSION}" "graphql@${GRAPHQL_VERSION}" -- "$@"
