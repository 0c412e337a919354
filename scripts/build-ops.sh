#!/usr/bin/env bash
# Builds the operations page (/ops, package web/ops) into web/ops/dist/,
# where //go:embed picks it up: scripts/build-ops.mjs validates the page's
# operations (web/ops/operations/*.graphql) against schema.graphqls, writes
# their trusted documents manifest with @apollo/generate-persisted-query-manifest,
# type-checks src/ with tsc and bundles src/main.ts with esbuild.
#
# The npm packages are installed into a throw-away directory
# (scripts/npm-run.sh); nothing downloaded lands in the repository, and
# dist/ is gitignored. Exits 2 when npm cannot install them.
# Idempotent: does nothing when dist/ is newer than every source, unless FORCE=1.
set -euo pipefail

# Exact pins. The bundle carries graphql-ws and the basemap's packages.
ESBUILD_VERSION=0.25.12
TYPESCRIPT_VERSION=5.9.3
GRAPHQL_WS_VERSION=6.4.2
GRAPHQL_VERSION=16.15.0
# The basemap (world-atlas land TopoJSON, 1:110m) and its projection.
D3_GEO_VERSION=3.1.2
TOPOJSON_CLIENT_VERSION=3.1.0
WORLD_ATLAS_VERSION=2.0.2
TYPES_D3_GEO_VERSION=3.1.1
TYPES_TOPOJSON_CLIENT_VERSION=3.1.5
MANIFEST_VERSION=1.4.0

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
web="${root}/web/ops"
out="${web}/dist"
if [[ "${FORCE:-0}" != 1 && -s "${out}/ops.js" && -s "${out}/persisted-query-manifest.json" ]]; then
  newer=$(find "${web}/src" "${web}/operations" "${web}/tsconfig.json" "${root}/schema.graphqls" "$0" "${root}/scripts/build-ops.mjs" \
    -newer "${out}/ops.js" -print -quit)
  if [[ -z "${newer}" ]]; then
    echo "ops page already built in ${out} (FORCE=1 to rebuild)"
    exit 0
  fi
fi
. "${root}/scripts/npm-run.sh"
npm_run build-ops.mjs "esbuild@${ESBUILD_VERSION}" "typescript@${TYPESCRIPT_VERSION}" \
  "graphql-ws@${GRAPHQL_WS_VERSION}" "graphql@${GRAPHQL_VERSION}" \
  "@apollo/generate-persisted-query-manifest@${MANIFEST_VERSION}" \
  "d3-geo@${D3_GEO_VERSION}" "topojson-client@${TOPOJSON_CLIENT_VERSION}" "world-atlas@${WORLD_ATLAS_VERSION}" \
  "@types/d3-geo@${TYPES_D3_GEO_VERSION}" "@types/topojson-client@${TYPES_TOPOJSON_CLIENT_VERSION}" -- "${root}"
