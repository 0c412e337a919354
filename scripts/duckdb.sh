#!/usr/bin/env bash
# DuckDB for the data sync's Parquet checks: the npm package @duckdb/node-api
# (pinned) installed once into a cache directory outside the repository
# (SHIPGRAPH_DUCKDB_DIR, default ~/.cache/shipgraph/duckdb-<version>).
#
#   scripts/duckdb.sh --install   installs it when missing (idempotent)
#   scripts/duckdb.sh SQL...      runs each SQL in one in-memory database and
#                                 prints a JSON array of their rows (arrays)
set -euo pipefail
version=1.5.6-r.1
dir="${SHIPGRAPH_DUCKDB_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/shipgraph/duckdb-${version}}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ ! -f "${dir}/.installed" ]]; then
  command -v npm >/dev/null || { echo "npm is required (apt-get install -y nodejs npm)" >&2; exit 2; }
  mkdir -p "${dir}"
  # One installer at a time (tests of several packages may start together).
  exec 9>"${dir}.lock"
  flock 9
  if [[ ! -f "${dir}/.installed" ]]; then
    echo '{"private":true,"type":"module"}' >"${dir}/package.json"
    if ! npm install --prefix "${dir}" --no-audit --no-fund --ignore-scripts --loglevel=error "@duckdb/node-api@${version}" >"${dir}/npm.log" 2>&1; then
      cat "${dir}/npm.log" >&2
      exit 2
    fi
    touch "${dir}/.installed"
  fi
  exec 9>&-
fi
[[ "${1:-}" == "--install" ]] && exit 0
cp "${here}/duckdb-query.mjs" "${dir}/query-$$.mjs"
status=0
node "${dir}/query-$$.mjs" "$@" || status=$?
rm -f "${dir}/query-$$.mjs"
exit "${status}"
