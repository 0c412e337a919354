#!/usr/bin/env bash
# The /v2 include list against its least SQL, in ONE run (issue 43's yardstick; a benchmark, not a test):
#   scripts/bench-include.sh [SHIPMENTS]        (default 20000; REPEAT=3 rounds, DUR=10s, CONNS=16)
# One private PostgreSQL with Shipgraph's schema and seed data (seed 42, as compare.sh). Each round runs
# wrk on GET /v2/documents?include=shipments,cargos&page[size]=100 (response cache off) and then pgbench on
# ../shared/bench/minimal-documents.pgbench.sql with what the container journey's linkage needs (each
# container's transport and raw event ids, in the API's order) added to its containers' statement.
# Prints a line per target per round (requests/s, server and PostgreSQL CPU per request from /proc), then
# the medians and the ratio ours / least SQL. Needs go, PostgreSQL 15 server + pgbench, wrk, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20000}; REPEAT=${REPEAT:-3}; DUR=${DUR:-10s}; CONNS=${CONNS:-16}
MIN=../shared/bench/minimal-documents.pgbench.sql
[ -r "$MIN" ] || { echo "bench-include: $MIN not found (../shared beside the project)" >&2; exit 1; }
TMP=$(mktemp -d /tmp/sginclude.XXXXXX); chmod 755 "$TMP"
PGBIN=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | tail -1)")
AS=""; [ "$(id -u)" = 0 ] && AS="runuser -u postgres --"
SP=""
cleanup() {
  [ -n "$SP" ] && kill "$SP" 2>/dev/null || true
  [ -f "$TMP/pg/postmaster.pid" ] && $AS "$PGBIN/pg_ctl" -D "$TMP/pg" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

[ -n "$AS" ] && { mkdir -p "$TMP/pg"; chown postgres "$TMP/pg"; }
PORT=$(free_port)
$AS "$PGBIN/initdb" -D "$TMP/pg" -U postgres --auth=trust -E UTF8 >/dev/null
$AS "$PGBIN/pg_ctl" -D "$TMP/pg" -l "$TMP/pg/server.log" -w -o "-k $TMP/pg -p $PORT -c listen_addresses=127.0.0.1 \
  -c max_connections=200 -c shared_buffers=512MB -c effective_cache_size=4GB -c work_mem=16MB -c jit=off \
  -c synchronous_commit=off" start >/dev/null
psql "postgres://postgres@127.0.0.1:$PORT/postgres" -Xqc "create database shipgraph"
DB="postgres://postgres@127.0.0.1:$PORT/shipgraph?sslmode=disable"
PM=$(head -1 "$TMP/pg/postmaster.pid")

go build -o "$TMP/shipgraph" .
DATABASE_URL=$DB "$TMP/shipgraph" migrate >/dev/null
DATABASE_URL=$DB "$TMP/shipgraph" seed --shipments "$N" --seed 42 >"$TMP/keys" 2>"$TMP/seed.err"
KEY=$(awk '$1=="token"{print $4; exit}' "$TMP/keys"); SLUG=$(awk '$1=="token"{print $2; exit}' "$TMP/keys")
ACC=$(psql "$DB" -XAtc "select id from accounts where slug='$SLUG'")
# The page (the 100 newest documents) and the shipments it includes, as the API answers them.
DOCS=$(psql "$DB" -XAtc "select '{'||string_agg(id::text, ',')||'}' from (select id from documents where account_id='$ACC'
  order by created_at desc, id desc limit 100) d")
SHIPS=$(psql "$DB" -XAtc "select '{'||coalesce(string_agg(distinct shipment_id::text, ','),'')||'}' from document_shipments
  where account_id='$ACC' and document_id = any('$DOCS'::uuid[])")
# The least SQL, with the journey linkage on its containers' statement.
sed 's/, c\.current_status FROM document_containers dc/, c.current_status, ARRAY(SELECT te.id FROM transport_events te WHERE te.account_id = c.account_id AND te.container_id = c.id ORDER BY te.event_at NULLS LAST, te.created_at, te.id) AS transport_event_ids, ARRAY(SELECT re.id FROM raw_events re WHERE re.account_id = c.account_id AND re.container_id = c.id ORDER BY re.event_at NULLS LAST, re.position, re.id) AS raw_event_ids FROM document_containers dc/' \
  "$MIN" | grep -v '^--' >"$TMP/least.sql"
grep -q transport_event_ids "$TMP/least.sql" || { echo "bench-include: the containers' statement of $MIN was not found" >&2; exit 1; }

SGPORT=$(free_port)
DATABASE_URL=$DB ADDR=127.0.0.1:$SGPORT RATE_LIMIT=0 RESPONSE_CACHE_BYTES=0 LOG_LEVEL=warn "$TMP/shipgraph" serve >"$TMP/serve.log" 2>&1 &
SP=$!
for _ in $(seq 1 100); do curl -fs -o /dev/null "http://127.0.0.1:$SGPORT/readyz" && break; sleep 0.2; done
URL="http://127.0.0.1:$SGPORT/v2/documents?include=shipments,cargos&page%5Bsize%5D=100"
curl -fs -H "Authorization: Token $KEY" "$URL" -o "$TMP/answer.json" || { echo "bench-include: the include list failed" >&2; tail "$TMP/serve.log" >&2; exit 1; }
# The two answer for the same page: its documents and its included shipments.
python3 - "$TMP/answer.json" "$DOCS" "$SHIPS" <<'EOF'
import json, os, sys
doc = json.load(open(sys.argv[1]))
kinds = {}
for r in doc.get("included", []):
    kinds[r["type"]] = kinds.get(r["type"], 0) + 1
if [r["id"] for r in doc["data"]] != sys.argv[2].strip("{}").split(","):
    sys.exit("bench-include: the API's page is not the least SQL's documents")
if set(filter(None, sys.argv[3].strip("{}").split(","))) != {r["id"] for r in doc.get("included", []) if r["type"] == "shipment"}:
    sys.exit("bench-include: the API's included shipments are not the least SQL's")
print(f"the answer: {os.path.getsize(sys.argv[1])} bytes, {len(doc['data'])} documents, included {kinds}")
EOF

ticks() { local t=0 p; for p in "$@"; do [ -r "/proc/$p/stat" ] && t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat"))); done; echo "$t"; }
# PostgreSQL's CPU: its live backends and what the postmaster reaped.
pgticks() { echo $(( $(ticks $(pgrep -P "$PM")) + $(awk '{print $16+$17}' "/proc/$PM/stat") )); }
hz=$(getconf CLK_TCK)
ms() { python3 -c "print(round(($2-$1)*1000/$hz/$3, 3))"; }
wrk -t1 -c"$CONNS" -d3s -H "Authorization: Token $KEY" "$URL" >/dev/null
: >"$TMP/lines"
for r in $(seq 1 "$REPEAT"); do
  s0=$(ticks "$SP"); p0=$(pgticks)
  out=$(wrk -t1 -c"$CONNS" -d"$DUR" -H "Authorization: Token $KEY" "$URL")
  s1=$(ticks "$SP"); p1=$(pgticks)
  n=$(echo "$out" | awk '/requests in/{print $1}'); rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
  non2xx=$(echo "$out" | awk '/Non-2xx/{print $NF}'); non2xx=${non2xx:-0}
  echo "include-list rps=$rps srv_cpu_ms_per_req=$(ms "$s0" "$s1" "$n") pg_cpu_ms_per_req=$(ms "$p0" "$p1" "$n") non2xx=$non2xx load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$TMP/lines"
  p0=$(pgticks)
  out=$(pgbench -n -M prepared -c "$CONNS" -j 1 -T "${DUR%s}" -f "$TMP/least.sql" -D acc="$ACC" -D doc_ids="$DOCS" -D ship_ids="$SHIPS" "$DB" 2>&1)
  p1=$(pgticks)
  n=$(echo "$out" | awk '/number of transactions actually processed/{print $NF}' | cut -d/ -f1)
  tps=$(echo "$out" | awk '/^tps/{print $3}'); failed=$(echo "$out" | awk '/number of failed transactions/{print $5}')
  echo "least-sql rps=$tps pg_cpu_ms_per_req=$(ms "$p0" "$p1" "$n") failed=${failed:-0} load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$TMP/lines"
done
python3 - "$TMP/lines" <<'EOF'
import statistics, sys
rps = {}
for line in open(sys.argv[1]):
    name, *kv = line.split()
    rps.setdefault(name, []).append(float(dict(x.split('=', 1) for x in kv)['rps']))
for name, v in rps.items():
    print(f"median {name} rps={statistics.median(v):.1f} (min {min(v):.1f}, max {max(v):.1f})")
print(f"ratio include-list/least-sql: {statistics.median(rps['include-list']) / statistics.median(rps['least-sql']):.2f}")
EOF
