#!/usr/bin/env bash
# Drives the official TypeScript SDK of the public service, @terminal49/sdk
# 0.4.0, unmodified, against a private Shipgraph server seeded with make
# run's demo data (scripts/sdk-check.mjs): every custom field, custom field
# definition and option, shipment, shipping line and metro area method, and
# the document and email submission endpoints through the SDK's request
# pipeline (0.4.0 has no methods for them). Then the tracking half, against
# the carrier simulator (`shipgraph carrier-sim` on a free 127.0.0.1 port,
# its CARRIERS passed to serve): tracking requests created for numbers the
# simulator knows and polled until the poller settles them (the time each
# took is printed), the shipment, containers, transport and raw events,
# route, map, vessels, refresh, infer_number, update, a duplicate, an
# unknown number, and the tracking_request.* webhooks delivered to a
# receiver on 127.0.0.1. Prints one line per call, OK or FAIL with the
# status, error and last HTTP answer, and exits non-zero on any failure.
#
# Usage: scripts/sdk-check.sh SDK_DIR
#   SDK_DIR  the SDK's package directory, built (dist/ and node_modules/)
#
# Not part of make test or CI: they have no copy of the SDK, and npm does
# not always serve it. Build it from the public repository (nothing of it
# goes into this one):
#
#   git clone https://github.com/Terminal49/API /tmp/t49-api
#   git -C /tmp/t49-api checkout sdk-v-v0.4.0    # 998228d0baf27bd0f394c24ccc426b604a2eb3c0
#   cd /tmp/t49-api/sdks/typescript-sdk && npm ci && npm run build
#   scripts/sdk-check.sh /tmp/t49-api/sdks/typescript-sdk
#
# (From a bare mirror instead of a clone:
#   mkdir /tmp/sdk-src && git -C MIRROR archive sdk-v-v0.4.0 sdks/typescript-sdk | tar -x -C /tmp/sdk-src
#  then npm ci && npm run build in /tmp/sdk-src/sdks/typescript-sdk.)
# If a devDependency cannot be installed, `npm install --no-save typescript
# @types/node openapi-fetch jsona` is all `tsc` needs.
#
# The server runs as make run's does (demo activity on) on a free
# 127.0.0.1 port with its own DATA_DIR under $TMPDIR, removed at exit; the
# simulator and the server are stopped at exit (SIGTERM, SIGKILL after 15 s).
# Environment: SHIPGRAPH_BIN, SHIPGRAPH_SIM_BIN (the binaries, default
# bin/shipgraph for both), SDK_CHECK_SIM_SEED (default 1),
# SDK_CHECK_TRACK_TIMEOUT (seconds a request may stay pending, default 60).
set -euo pipefail

if [[ $# -ne 1 ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
fi
command -v node >/dev/null || { echo "node is required (apt-get install -y nodejs)" >&2; exit 2; }
sdk="$(cd "$1" && pwd)"
[[ -f "${sdk}/dist/index.js" ]] || { echo "${sdk}/dist/index.js missing: build the SDK first (npm ci && npm run build)" >&2; exit 2; }

cd "$(dirname "${BASH_SOURCE[0]}")/.."
make --no-print-directory build >&2
exec node scripts/sdk-check.mjs "${sdk}"
