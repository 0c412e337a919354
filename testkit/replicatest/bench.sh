#!/usr/bin/env bash
# Load run behind docs/scaling.md's replica numbers and capacity model (not a test), from the
# project's root:   testkit/replicatest/bench.sh [SHIPMENTS]   (default 5000; DUR=10s, CONNS=16, REPEAT=2)
# On one machine: a primary PostgreSQL, a streaming hot standby of it (pg_basebackup -R), a Redis.
#   single  one Shipgraph on the primary alone: the dashboard of ../shared/bench (CONNS connections)
#   two     two Shipgraphs (DATABASE_REPLICA_URLS=standby, REDIS_URL), CONNS/2 connections each, at once
#   v2      one Shipgraph on the primary alone: GET /v2/shipments?include=containers (page of 50)
# Per run: requests/s, p50/p99 (wrk), errors; CPU ms per request of the Shipgraph process(es), of
# the primary's and of the standby's PostgreSQL processes (their postmaster and its children, from
# /proc/<pid>/stat); statements by target (shipgraph_db_queries_total); client backends per server.
# Needs: go, PostgreSQL 15 server, redis-server, wrk, ../shared/bench/load.sh. Loopback only.
set -euo pipefail
N=${1:-5000}; DUR=${DUR:-10s}; CONNS=${CONNS:-16}; REPEAT=${REPEAT:-2}
BENCH=$(cd "$(dirname "$0")/../../../shared/bench" 2>/dev/null && pwd || echo /work/shared/bench)
TMP=$(mktemp -d /tmp/sgrepl.XXXXXX); chmod 755 "$TMP"
PIDS=()
PGBIN=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | tail -1)")
AS=""; [ "$(id -u)" = 0 ] && AS="runuser -u postgres --"
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for d in standby primary; do [ -f "$TMP/$d/postmaster.pid" ] && $AS "$PGBIN/pg_ctl" -D "$TMP/$d" -m fast stop >/dev/null 2>&1 || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
PGOPTS="-c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=512MB -c effective_cache_size=4GB -c work_mem=16MB -c jit=off -c synchronous_commit=off"

mkdir -p "$TMP/primary"; [ -n "$AS" ] && chown postgres "$TMP" "$TMP/primary"
P1=$(port); P2=$(port)
$AS "$PGBIN/initdb" -D "$TMP/primary" -U postgres --auth=trust -E UTF8 >/dev/null
$AS "$PGBIN/pg_ctl" -D "$TMP/primary" -l "$TMP/primary.log" -w -o "-k $TMP/primary -p $P1 $PGOPTS" start >/dev/null
psql "postgres://postgres@127.0.0.1:$P1/postgres" -Xqc "create database shipgraph"
DB="postgres://postgres@127.0.0.1:$P1/shipgraph?sslmode=disable"
go build -o "$TMP/shipgraph" .
DATABASE_URL=$DB "$TMP/shipgraph" migrate >/dev/null
DATABASE_URL=$DB "$TMP/shipgraph" seed --seed-shipments "$N" --seed 42 >"$TMP/keys" 2>"$TMP/seed.err"
KEY=$(awk '$1=="token"{print $4; exit}' "$TMP/keys")
$AS "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$P1" -U postgres -D "$TMP/standby" -R -X stream -c fast
$AS "$PGBIN/pg_ctl" -D "$TMP/standby" -l "$TMP/standby.log" -w -o "-k $TMP/standby -p $P2 $PGOPTS -c hot_standby=on" start >/dev/null
REPLICA="postgres://postgres@127.0.0.1:$P2/shipgraph?sslmode=disable"
RP=$(port); redis-server --port "$RP" --bind 127.0.0.1 --save "" --appendonly no --daemonize no --loglevel warning >/dev/null 2>&1 &
PIDS+=($!)
PM1=$(head -1 "$TMP/primary/postmaster.pid"); PM2=$(head -1 "$TMP/standby/postmaster.pid")

serve() { # serve PORT [replicas]: starts an instance, prints its pid
  local extra=()
  [ -n "${2:-}" ] && extra=(DATABASE_REPLICA_URLS="$2" REDIS_URL="redis://127.0.0.1:$RP/0")
  env DATABASE_URL="$DB" ADDR="127.0.0.1:$1" RATE_LIMIT=0 LOG_LEVEL=warn "${extra[@]}" "$TMP/shipgraph" serve >>"$TMP/serve-$1.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do curl -fs -o /dev/null "http://127.0.0.1:$1/readyz" && break; sleep 0.2; done
  echo "$pid"
}
ticks() { python3 "$BENCH/cpu-ticks.py" "$@" | cut -d' ' -f1; }
stmts() { curl -s "http://127.0.0.1:$1/metrics" | awk -v t="$2" '$1=="shipgraph_db_queries_total{target=\""t"\"}"{print $2}'; }
backends() { psql "postgres://postgres@127.0.0.1:$1/postgres" -XAtc "select count(*) from pg_stat_activity where backend_type='client backend' and datname='shipgraph'"; }
ms() { python3 -c "import os,sys;print('%.2f'%((int(sys.argv[2])-int(sys.argv[1]))*1000/os.sysconf('SC_CLK_TCK')/max(int(sys.argv[3]),1)))" "$@"; }
reqs() { sed -n 's/.* requests=\([0-9]*\).*/\1/p' <<<"$1"; }

cat >"$TMP/v2.lua" <<EOF
wrk.headers["Authorization"] = "Token $KEY"
wrk.headers["Accept"] = "application/vnd.api+json"
EOF

S0=$(port); SP0=$(serve "$S0")
S1=$(port); SP1=$(serve "$S1" "$REPLICA")
S2=$(port); SP2=$(serve "$S2" "$REPLICA")
PIDS+=("$SP0" "$SP1" "$SP2")
for s in $S1 $S2; do for _ in $(seq 1 50); do curl -s "http://127.0.0.1:$s/readyz" | grep -q ': up,' && break; sleep 0.2; done; done
echo "primary :$P1  standby :$P2  redis :$RP  single :$S0  two :$S1 :$S2  shipments $N"
curl -s "http://127.0.0.1:$S1/readyz"

for r in $(seq 1 "$REPEAT"); do
  WU=3s; [ "$r" = 1 ] && WU=5s
  # single instance, primary only
  a=$(ticks "$SP0"); p=$(ticks "$PM1")
  line=$(WARMUP=$WU "$BENCH/load.sh" "http://127.0.0.1:$S0/graphql" "$BENCH/dashboard-shipgraph.graphql" "Authorization: Token $KEY" "$DUR" "$CONNS")
  b=$(ticks "$SP0"); q=$(ticks "$PM1"); n=$(reqs "$line")
  echo "round $r single  $(cut -d' ' -f1-8 <<<"$line") srv_ms=$(ms "$a" "$b" "$n") primary_pg_ms=$(ms "$p" "$q" "$n") backends_primary=$(backends "$P1")"

  # two instances, primary + replica, at once
  a=$(ticks "$SP1" "$SP2"); p=$(ticks "$PM1"); s=$(ticks "$PM2")
  r1=$(stmts "$S1" replica); r2=$(stmts "$S2" replica); q1=$(stmts "$S1" primary); q2=$(stmts "$S2" primary)
  WARMUP=$WU "$BENCH/load.sh" "http://127.0.0.1:$S1/graphql" "$BENCH/dashboard-shipgraph.graphql" "Authorization: Token $KEY" "$DUR" "$((CONNS/2))" >"$TMP/l1" &
  L1=$!
  WARMUP=$WU "$BENCH/load.sh" "http://127.0.0.1:$S2/graphql" "$BENCH/dashboard-shipgraph.graphql" "Authorization: Token $KEY" "$DUR" "$((CONNS/2))" >"$TMP/l2" &
  L2=$!
  sleep 8; bp=$(backends "$P1"); bs=$(backends "$P2")
  wait $L1 $L2
  b=$(ticks "$SP1" "$SP2"); pe=$(ticks "$PM1"); se=$(ticks "$PM2")
  n=$(( $(reqs "$(cat "$TMP/l1")") + $(reqs "$(cat "$TMP/l2")") ))
  rr=$(python3 -c "print(($(stmts "$S1" replica)-$r1)+($(stmts "$S2" replica)-$r2))")
  pp=$(python3 -c "print(($(stmts "$S1" primary)-$q1)+($(stmts "$S2" primary)-$q2))")
  fb=$(for x in $S1 $S2; do curl -s "http://127.0.0.1:$x/metrics" | awk '$1=="shipgraph_redis_fallback_total{op=\"lsn\"}"{print $2}'; done | paste -sd+ | bc)
  echo "round $r two: redis lsn fallbacks so far: ${fb:-0}"
  echo "round $r two/A   $(cut -d' ' -f1-8 "$TMP/l1")"
  echo "round $r two/B   $(cut -d' ' -f1-8 "$TMP/l2")"
  echo "round $r two     requests=$n srv_ms=$(ms "$a" "$b" "$n") primary_pg_ms=$(ms "$p" "$pe" "$n") standby_pg_ms=$(ms "$s" "$se" "$n") stmts_replica=$rr stmts_primary=$pp replica_share=$(python3 -c "print('%.3f'%($rr/max($rr+$pp,1)))") backends_primary=$bp backends_standby=$bs"

  # /v2 page, single instance
  a=$(ticks "$SP0"); p=$(ticks "$PM1")
  wrk -t1 -c"$CONNS" -d3s -s "$TMP/v2.lua" "http://127.0.0.1:$S0/v2/shipments?include=containers&page%5Bsize%5D=50" >/dev/null 2>&1
  a=$(ticks "$SP0"); p=$(ticks "$PM1")
  out=$(wrk -t1 -c"$CONNS" -d"$DUR" --latency -s "$TMP/v2.lua" "http://127.0.0.1:$S0/v2/shipments?include=containers&page%5Bsize%5D=50")
  b=$(ticks "$SP0"); q=$(ticks "$PM1")
  n=$(awk '/requests in/{print $1}' <<<"$out"); non2xx=$(awk '/Non-2xx/{print $NF}' <<<"$out")
  echo "round $r v2      requests=$n rps=$(awk '/Requests\/sec/{print $2}' <<<"$out") p50=$(awk '$1=="50%"{print $2}' <<<"$out") p99=$(awk '$1=="99%"{print $2}' <<<"$out") non2xx=${non2xx:-0} srv_ms=$(ms "$a" "$b" "$n") primary_pg_ms=$(ms "$p" "$q" "$n")"
done
