#!/usr/bin/env bash
# Runs the official MCP clients against a running server (see
# scripts/mcp-client.mjs): the TypeScript SDK's client and the MCP
# Inspector's CLI, exact pins from npm.
#
# Usage: scripts/mcp-client.sh BASE BUDGET_BASE SHIPGRAPH_BIN
#   BASE         e.g. http://127.0.0.1:8080 (its /mcp is used)
#   BUDGET_BASE  a server with a small GRAPHQL_COST_BUDGET
#   SHIPGRAPH_BIN  the binary the Inspector starts as `shipgraph mcp` (stdio)
# Keys: MCP_ADMIN_KEY, MCP_VIEWER_KEY (one account), MCP_OTHER_KEY (another).
#
# The npm packages are installed into a throw-away directory (no global
# install, nothing left in the repo); npm's cache makes reruns quick.
set -euo pipefail

MCP_SDK_VERSION=1.32.2
INSPECTOR_CLI_VERSION=1.0.3

if [[ $# -ne 3 ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
fi
. "$(dirname "${BASH_SOURCE[0]}")/npm-run.sh"
npm_run mcp-client.mjs "@modelcontextprotocol/sdk@${MCP_SDK_VERSION}" "@modelcontextprotocol/inspector-cli@${INSPECTOR_CLI_VERSION}" -- "$@"
