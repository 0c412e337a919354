#!/usr/bin/env bash
# Fetches the GraphiQL playground's browser assets from the npm registry into
# graph/playground/assets/, where //go:embed picks them up at build time.
#
# Why: the gateway must serve a working playground on machines with no
# internet access, so the assets ship inside the binary. They are third-party
# code and are never committed (see .gitignore); `make assets` runs this.
#
# Versions are pinned exactly. When bumping one, also update the matching
# constants (versions and SRI hashes) in graph/playground/playground.go; the
# package tests fail if the embedded files and those constants disagree.
#
# Idempotent: does nothing when all files are present, unless FORCE=1.
set -euo pipefail

GRAPHIQL_VERSION=3.8.3
REACT_VERSION=18.3.1
REACT_DOM_VERSION=18.3.1

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${repo_root}/graph/playground/assets"

# destination name => path inside the unpacked npm tarball ("package/" prefix
# dropped). graphiql 3.8.3's UMD bundle reads window.React / window.ReactDOM,
# so React must be the UMD builds (React 19 no longer ships them).
declare -A files=(
  [react.production.min.js]="react/umd/react.production.min.js"
  [react-dom.production.min.js]="react-dom/umd/react-dom.production.min.js"
  [graphiql.min.js]="graphiql/graphiql.min.js"
  [graphiql.min.css]="graphiql/graphiql.min.css"
)

if [[ "${FORCE:-0}" != 1 ]]; then
  missing=0
  for name in "${!files[@]}"; do
    [[ -s "${dest}/${name}.gz" ]] || missing=1
  done
  if [[ "${missing}" == 0 ]]; then
    echo "playground assets already present in ${dest} (FORCE=1 to refetch)"
    exit 0
  fi
fi

command -v npm >/dev/null || { echo "npm is required (apt-get install -y npm)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

# npm pack verifies each tarball against the registry's integrity hash.
# --ignore-scripts: packing never runs package code, but be explicit anyway.
(cd "${tmp}" && npm pack --silent --ignore-scripts \
  "graphiql@${GRAPHIQL_VERSION}" \
  "react@${REACT_VERSION}" \
  "react-dom@${REACT_DOM_VERSION}" >/dev/null)

for pkg in graphiql react react-dom; do
  tarball=("${tmp}/${pkg}"-[0-9]*.tgz)
  mkdir -p "${tmp}/${pkg}"
  tar -xzf "${tarball[0]}" -C "${tmp}/${pkg}" --strip-components=1
done

mkdir -p "${dest}"
for name in "${!files[@]}"; do
  src="${tmp}/${files[${name}]}"
  [[ -s "${src}" ]] || { echo "expected ${files[${name}]} in the npm tarball, not found" >&2; exit 1; }
  # Stored gzipped (the binary gunzips them once at start): 4 MB of
  # JavaScript and CSS would otherwise be a tenth of the server image.
  # Written to a temp name + renamed so an interrupted run never leaves a
  # truncated file that the idempotency check above would accept.
  gzip -9 -n -c "${src}" >"${dest}/.${name}.gz.tmp"
  mv -f "${dest}/.${name}.gz.tmp" "${dest}/${name}.gz"
  rm -f "${dest}/${name}" # an uncompressed copy of an earlier version of this script
done

echo "fetched graphiql@${GRAPHIQL_VERSION} react@${REACT_VERSION} react-dom@${REACT_DOM_VERSION} into ${dest}:"
(cd "${dest}" && for name in "${!files[@]}"; do ls -l "${name}.gz"; done)
