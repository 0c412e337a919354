#!/usr/bin/env bash
# make run: seed the demo data when the database is empty (keeping the demo
# keys in $DATA_DIR/demo-keys.txt so later runs can show them), print the
# keys, then serve with the acme admin key prefilled in the playground and
# the demo activity on.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=bin/shipgraph
DATA_DIR=${DATA_DIR:-./.data}
export DATA_DIR
mkdir -p "$DATA_DIR"
keys="$DATA_DIR/demo-keys.txt"

out=$("$BIN" seed --if-empty)
if [ -n "$out" ]; then
  printf '%s\n' "$out" >"$keys"
fi
if [ -s "$keys" ]; then
  echo "Demo API keys (for demos only):"
  cat "$keys"
  key=$(awk '$1=="token" && $2=="acme" && $3=="admin" {print $4}' "$keys")
else
  echo "The database already had data; no demo keys to show (create one: $BIN token create --account SLUG --role admin)."
  key=""
fi
echo
echo "Try:  curl -H \"Authorization: Token ${key:-<key>}\" http://${ADDR:-127.0.0.1:8080}/v2/documents"
echo "Playground: http://${ADDR:-127.0.0.1:8080}/playground"
echo "Operations: http://${ADDR:-127.0.0.1:8080}/ops   (the live operations page: enter one of the keys above)"
[ -z "${DATABASE_URL:-}" ] && echo "psql:  $BIN psql   (the embedded database has no TCP port; only you and root can use its socket)"
echo
# Demo activity: a few demo containers change status every few seconds, so
# a subscription in the playground sees events arrive (DEMO_ACTIVITY=0 stops it).
echo "Live: a few demo containers change status every ${DEMO_ACTIVITY:-4s}; try 'subscription { containerUpdated { operation container { number currentStatus } } }' in the playground"
# Webhooks to a receiver on this machine (docs/webhooks.md): allowed for the
# demo while it listens on loopback only, unless set otherwise.
case "${ADDR:-127.0.0.1:8080}" in
  127.0.0.1:*|localhost:*|\[::1\]:*) export WEBHOOK_ALLOW_PRIVATE_URLS="${WEBHOOK_ALLOW_PRIVATE_URLS:-true}" ;;
esac
# Tracking, offline: unless CARRIERS says otherwise, the demo SCACs are
# tracked against the carrier simulator (DCSA Track & Trace v2.2 on a free
# loopback port, docs/carriers.md), started here and stopped with serve.
sim_pid=""
if [ -z "${CARRIERS:-}" ]; then
  sim_out="$DATA_DIR/carrier-sim.out"
  : >"$sim_out"
  "$BIN" carrier-sim --addr 127.0.0.1:0 --seed "${SIM_SEED:-1}" >"$sim_out" 2>&1 &
  sim_pid=$!
  for _ in $(seq 1 100); do grep -q '^numbers: ' "$sim_out" && break; kill -0 "$sim_pid" 2>/dev/null || break; sleep 0.1; done
  CARRIERS=$(sed -n 's/^CARRIERS=//p' "$sim_out")
  [ -n "$CARRIERS" ] || { echo "the carrier simulator did not start:" >&2; cat "$sim_out" >&2; exit 1; }
  export CARRIERS
  sim_url=$(sed -n 's/^carrier-sim listening on \([^ ]*\).*/\1/p' "$sim_out")
  echo "Tracking: the demo carriers are simulated at $sim_url; numbers it knows (each with its voyage: not_departed, at_sea, finished): curl -s $sim_url/sim/numbers"
  # The simulator names a bill of lading still at sea: a first request
  # that keeps being tracked (a finished voyage stops tracking at once).
  read -r _ _ at_sea_type at_sea_number at_sea_scac <<<"$(grep -m1 '^at sea: ' "$sim_out" || true)"
  echo "  e.g. (a voyage at sea) curl -s -H \"Authorization: Token ${key:-<key>}\" -H 'Content-Type: application/json' http://${ADDR:-127.0.0.1:8080}/v2/tracking_requests \\"
  echo "         -d '{\"data\":{\"type\":\"tracking_request\",\"attributes\":{\"request_type\":\"${at_sea_type:-bill_of_lading}\",\"request_number\":\"${at_sea_number:-<number>}\",\"scac\":\"${at_sea_scac:-<scac>}\"}}}'"
fi
stop_sim() { if [ -n "$sim_pid" ]; then kill "$sim_pid" 2>/dev/null || true; fi; wait 2>/dev/null || true; }
trap stop_sim EXIT
serve=("$BIN" serve --playground-api-key "$key" --demo-activity "${DEMO_ACTIVITY:-4s}")
status=0
if [ -t 0 ]; then
  # Ctrl-C: the terminal signals its foreground process group. With job
  # control, serve runs as the foreground job in a group of its own, so
  # the signal reaches serve alone: it shuts down and this script (and
  # make, which would otherwise die of the signal itself and report it)
  # ends normally. The simulator, a background job, is stopped on exit.
  set -m
  "${serve[@]}" || status=$?
  # serve ends with the signal's status when the signal came before its
  # handler was in place.
  if [ "$status" -eq 130 ]; then status=0; fi
  exit "$status"
fi
# Without a terminal (a supervisor, a pipe): a SIGINT or SIGTERM sent to
# the script is passed on to serve, whose clean end is a success.
stopped=""
trap 'stopped=1; kill -INT "$serve_pid" 2>/dev/null || true' INT
trap 'stopped=1; kill -TERM "$serve_pid" 2>/dev/null || true' TERM
"${serve[@]}" &
serve_pid=$!
# wait returns early when a trapped signal arrives: wait until serve ended,
# then take its own status (bash keeps it for a second wait).
while kill -0 "$serve_pid" 2>/dev/null; do wait "$serve_pid" || true; done
wait "$serve_pid" || status=$?
if [ -n "$stopped" ] && { [ "$status" -eq 0 ] || [ "$status" -eq 130 ] || [ "$status" -eq 143 ]; }; then
  status=0
fi
exit "$status"
