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
exec "$BIN" serve --playground-key "$key" --demo-activity "${DEMO_ACTIVITY:-4s}"
