# Sourced by the scripts that run a Node program of scripts/ against npm
# packages. npm_run FILE.mjs PKG@VERSION... -- ARG... installs the exact
# packages into a temporary directory (removed on exit: nothing is left in
# the repository; npm's cache makes reruns quick), copies FILE.mjs beside
# them, runs it with the ARGs and exits with its status (2 when npm fails).
npm_run() {
  local mjs="$1"
  shift
  local pkgs=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do
    pkgs+=("$1")
    shift
  done
  [[ $# -gt 0 ]] && shift
  command -v node >/dev/null || { echo "node is required (apt-get install -y nodejs npm)" >&2; exit 2; }
  command -v npm >/dev/null || { echo "npm is required (apt-get install -y npm)" >&2; exit 2; }
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  tmp="$(mktemp -d)" # global: the EXIT trap outlives this function
  trap 'rm -rf "${tmp}"' EXIT
  echo '{"private":true,"type":"module"}' >"${tmp}/package.json"
  if ! npm install --prefix "${tmp}" --no-audit --no-fund --ignore-scripts --loglevel=error \
    "${pkgs[@]}" >"${tmp}/npm.log" 2>&1; then
    cat "${tmp}/npm.log" >&2
    exit 2
  fi
  cp "${here}/${mjs}" "${tmp}/${mjs}"
  # Not exec: the EXIT trap must still remove the temp dir.
  local status=0
  node "${tmp}/${mjs}" "$@" || status=$?
  exit "${status}"
}
