#!/usr/bin/env bash
# The memory a `serve` container needs under the compare load (docs/deploy.md):
# the image localhost/shipgraph under podman with a memory limit (LIMIT,
# default 640m) and GOMEMLIMIT at 80 % of it, as the Helm chart sets it,
# against a private PostgreSQL seeded as ../shared/bench/compare.sh seeds it
# (SHIPMENTS, default 20000, seed 42). Load for DUR (default 60s): the
# compare's dashboard query over CONNS (16) connections with the response
# cache on (the defaults), and /v2/documents pages 1..2000 from 8 workers,
# which fill the response cache. Prints the container's peak memory (cgroup
# max usage), the process' peak RSS, and whether the kernel killed it.
# Not in CI (minutes); needs wrk and ../shared/bench.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/podman-env.sh
LIMIT=${LIMIT:-640m} SHIPMENTS=${SHIPMENTS:-20000} DUR=${DUR:-60s} CONNS=${CONNS:-16}
mib=${LIMIT%m}; GOMEMLIMIT=${GOMEMLIMIT:-$((mib * 80 / 100))MiB}
B=../shared/bench
TMP=$(mktemp -d /tmp/sgmem.XXXXXX); chmod 755 "$TMP"
PGBIN=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | tail -1)")
PORT=${PORT:-18181} SGPORT=${SGPORT:-18182}
cleanup() {
  P rm -f sg-mem >/dev/null 2>&1 || true
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$TMP/pg" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$TMP/pg"; chown postgres "$TMP/pg"
runuser -u postgres -- "$PGBIN/initdb" -D "$TMP/pg" -U postgres --auth=trust -E UTF8 >/dev/null
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$TMP/pg" -l "$TMP/pg/server.log" -w \
  -o "-k $TMP/pg -p $PORT -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=512MB -c synchronous_commit=off" start >/dev/null
DB="postgres://postgres@127.0.0.1:$PORT/postgres?sslmode=disable"
P run --rm --network host -e DATABASE_URL="$DB" localhost/shipgraph:latest migrate >/dev/null
KEY=$(P run --rm --network host -e DATABASE_URL="$DB" localhost/shipgraph:latest seed --shipments "$SHIPMENTS" --seed 42 | awk '$1=="token"{print $4; exit}')
P run -d --name sg-mem --network host --memory "$LIMIT" --memory-swap "$LIMIT" -e GOMEMLIMIT="$GOMEMLIMIT" \
  -e DATABASE_URL="$DB" -e ADDR="127.0.0.1:$SGPORT" -e RATE_LIMIT=0 -e LOG_LEVEL=warn localhost/shipgraph:latest >/dev/null
until curl -fs -o /dev/null "http://127.0.0.1:$SGPORT/readyz"; do sleep 0.2; done
go build -o "$TMP/deploytest" ./deploy/deploytest
"$TMP/deploytest" load -backends "http://127.0.0.1:$SGPORT" -key "$KEY" -workers 8 -pages 2000 \
  -path '/v2/documents?include=shipments&page[size]=25&page[number]=%d' >"$TMP/pages.log" 2>&1 &
pages=$!
dash=$(WARMUP=3s "$B/load.sh" "http://127.0.0.1:$SGPORT/graphql" "$B/dashboard-shipgraph.graphql" "Authorization: Token $KEY" "$DUR" "$CONNS")
kill -TERM "$pages"; wait "$pages" || true
pid=$(P inspect sg-mem --format '{{.State.Pid}}')
cg=$(awk -F: '$2=="memory" {print $3}' "/proc/$pid/cgroup")
peak=$(cat "/sys/fs/cgroup/memory$cg/memory.max_usage_in_bytes")
echo "limit $LIMIT GOMEMLIMIT $GOMEMLIMIT shipments $SHIPMENTS"
echo "dashboard: $dash"
echo "pages: $(tail -1 "$TMP/pages.log")"
echo "peak cgroup memory $((peak >> 20)) MiB, peak RSS $(awk '/^VmHWM/ {print int($2/1024)}' "/proc/$pid/status") MiB, OOM killed: $(P inspect sg-mem --format '{{.State.OOMKilled}}'), failcnt $(cat "/sys/fs/cgroup/memory$cg/memory.failcnt")"
