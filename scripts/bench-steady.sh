#!/usr/bin/env bash
# Tracking at scale, steady state (a benchmark, not a test): N tracking
# requests seeded with plain SQL (as any path may write them; the schedule
# picks them up) over the seed's accounts, against the carrier simulator,
# their first polls due spread evenly over one poll interval (the default,
# TRACKING_POLL_INTERVAL = 1h), then serve with its defaults for MIN minutes.
# Every minute it prints: polls due (by the seeded schedule) and done
# (last_polled_at in that minute), the lag (due so far − done so far),
# serve's RSS, the database's size and its growth per shipment created,
# and the dashboard's latency (the GraphQL dashboard query of
# ../shared/bench, newest 50 shipments with containers and custom fields,
# one request a second for the account with most requests, response cache
# off) p50 and p99 in that minute. At the end: requests by status, doubled
# shipments (must be 0).
#
#   scripts/bench-steady.sh [N] [MIN]     (defaults 100000 requests, 10 minutes)
#
# Every poll in the run is a request's first (created, its shipment,
# containers and events written): dearer than the repeated polls of a
# steady state that has run for more than an interval, so the numbers are
# an upper bound of the load. Everything runs on 127.0.0.1 with a private
# embedded PostgreSQL (EMBEDDED_FAST) under a temporary DATA_DIR, removed
# at exit. Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}; MIN=${2:-10}; INTERVAL=${INTERVAL:-3600}
BIN=${BIN:-bin/shipgraph}
[ -x "$BIN" ] || make --no-print-directory build >&2
TMP=$(mktemp -d /tmp/sgsteady.XXXXXX); chmod 755 "$TMP"
export DATA_DIR=$TMP/data EMBEDDED_FAST=true LOG_LEVEL=warn
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
fail() { echo "bench-steady: $*" >&2; for f in "$TMP"/*.out "$TMP"/*.err "$TMP"/*.log; do [ -s "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }; done; exit 1; }
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

"$BIN" seed --seed-shipments 1 >"$TMP/keys" 2>"$TMP/seed.err" || fail "seed failed"
sql() { "$BIN" psql -- -XAtqc "$1"; }
ACCOUNTS=$(sql "SELECT count(*) FROM accounts")
# Each account tracks N/ACCOUNTS distinct numbers; each simulated shipment
# gives a bill of lading, a booking and its containers' numbers.
per=$(( N / ACCOUNTS / 8 / 3 + 20 ))
"$BIN" carrier-sim --addr 127.0.0.1:0 --seed 7 --shipments "$per" >"$TMP/sim.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 1800); do grep -q "^CARRIERS=" "$TMP/sim.out" && break; sleep 0.1; done
CARRIERS=$(sed -n 's/^CARRIERS=//p' "$TMP/sim.out"); export CARRIERS
SIM=$(sed -n 's/^carrier-sim listening on \([^ ]*\).*/\1/p' "$TMP/sim.out")
[ -n "$SIM" ] || fail "the simulator did not start"

# The requests, their first polls due from START on, evenly over INTERVAL.
START=$(( $(date +%s) + 120 ))
python3 - "$SIM" "$N" "$START" "$INTERVAL" "$TMP" "$(sql "SELECT string_agg(id::text, ',' ORDER BY slug) FROM accounts")" <<'PY'
import csv, json, random, sys, urllib.request, datetime
sim, n, start, interval, tmp, accounts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6].split(",")
nums = json.load(urllib.request.urlopen(sim + "/sim/numbers"))
per = -(-n // len(accounts))
if len(nums) < per:
    sys.exit(f"the simulator knows {len(nums)} numbers, fewer than {per}")
rnd = random.Random(7)
due = {}
with open(f"{tmp}/requests.csv", "w", newline="") as f:
    w = csv.writer(f)
    for i in range(n):
        a, x = accounts[i % len(accounts)], nums[i // len(accounts)]
        at = start + rnd.random() * interval
        due[int((at - start) // 60)] = due.get(int((at - start) // 60), 0) + 1
        w.writerow([a, x["request_type"], x["request_number"], x["scac"],
                    datetime.datetime.fromtimestamp(at, datetime.timezone.utc).isoformat()])
json.dump(due, open(f"{tmp}/due.json", "w"))
PY
chmod 644 "$TMP/requests.csv"
t0=$(date +%s.%N)
"$BIN" psql -- -Xqc "\\copy tracking_requests (account_id, request_type, request_number, scac, next_poll_at) FROM '$TMP/requests.csv' WITH (FORMAT csv)" \
  || fail "loading the requests failed"
# Statistics for the loaded table, as autovacuum would gather within a
# minute: without them the schedule's first claims are planned for an empty
# table and ran into the 30 s statement timeout (seen at 100,000 requests).
sql "ANALYZE tracking_requests" >/dev/null
echo "seeded $N requests over $ACCOUNTS accounts in $(python3 -c "import time;print(round(time.time()-$t0,1))") s; first polls due from $(date -u -d @$START +%H:%M:%S) over ${INTERVAL} s"

PORT=$(free_port)
ADDR=127.0.0.1:$PORT RATE_LIMIT=0 RESPONSE_CACHE_BYTES=0 "$BIN" serve --shutdown-delay 0 >"$TMP/serve.log" 2>&1 &
SPID=$!; PIDS+=($SPID)
for _ in $(seq 1 300); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/readyz" && break; sleep 0.1; done
curl -fs -o /dev/null "http://127.0.0.1:$PORT/readyz" || fail "serve did not become ready"
# The dashboard's account: the one with most requests (all equal: the first).
SLUG=$(sql "SELECT a.slug FROM accounts a JOIN tracking_requests r ON r.account_id = a.id GROUP BY a.slug ORDER BY count(*) DESC, a.slug LIMIT 1")
KEY=$(awk -v s="$SLUG" '$1=="token" && $2==s && $3=="admin"{print $4}' "$TMP/keys")
[ -n "$KEY" ] || fail "no admin key for $SLUG"

python3 - "http://127.0.0.1:$PORT" "$KEY" "$START" "$MIN" "$TMP" "$SPID" "$BIN" <<'PY'
import json, subprocess, sys, threading, time, urllib.request
base, key, start, minutes, tmp, spid, binary = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
due = {int(k): v for k, v in json.load(open(f"{tmp}/due.json")).items()}
query = json.dumps({"query": """query Dashboard { shipments(first: 50) { nodes { id billOfLadingNumber createdAt
  containers { number currentStatus equipmentType podTerminal { name firmsCode port { name code } } }
  customFields { apiSlug value } } } }"""}).encode()
lat, errors, lock, stop = [], [0], threading.Lock(), threading.Event()
def dashboard():
    while not stop.is_set():
        t = time.monotonic()
        try:
            req = urllib.request.Request(base + "/graphql", data=query, method="POST",
                headers={"Authorization": "Token " + key, "Content-Type": "application/json"})
            body = urllib.request.urlopen(req, timeout=30).read()
            ok = b'"errors"' not in body
        except Exception:
            ok = False
        d = time.monotonic() - t
        with lock:
            if ok:
                lat.append((time.time(), d))
            else:
                errors[0] += 1
        stop.wait(max(0, 1 - d))
def sql(q):
    return subprocess.run([binary, "psql", "--", "-XAtqc", q], capture_output=True, text=True, check=True).stdout.strip()
def rss():
    for line in open(f"/proc/{spid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p))] * 1000 if v else float("nan")
while time.time() < start:
    time.sleep(0.2)
size0 = int(sql("SELECT pg_database_size(current_database())"))
ships0 = int(sql("SELECT count(*) FROM shipments"))
threading.Thread(target=dashboard, daemon=True).start()
print(f"{'min':>3} {'due':>6} {'done':>6} {'lag':>7} {'rss MB':>7} {'db MB':>7} {'B/shipment':>10} {'shipments':>9} {'dash p50 ms':>11} {'p99 ms':>7}", flush=True)
due_sum = done_sum = 0
peak = 0
for m in range(minutes):
    end = start + 60 * (m + 1)
    while time.time() < end:
        time.sleep(0.5)
    done = int(sql(f"SELECT count(*) FROM tracking_requests WHERE last_polled_at >= to_timestamp({start + 60 * m}) AND last_polled_at < to_timestamp({end})"))
    due_sum += due.get(m, 0); done_sum += done
    size = int(sql("SELECT pg_database_size(current_database())"))
    ships = int(sql("SELECT count(*) FROM shipments"))
    with lock:
        ds = [d for t, d in lat if start + 60 * m <= t < end]
    r = rss(); peak = max(peak, r)
    per = (size - size0) / (ships - ships0) if ships > ships0 else float("nan")
    print(f"{m + 1:>3} {due.get(m, 0):>6} {done:>6} {due_sum - done_sum:>7} {r:>7} {size / 2**20:>7.0f} {per:>10.0f} {ships:>9} {pct(ds, 0.5):>11.1f} {pct(ds, 0.99):>7.1f}", flush=True)
stop.set()
allds = [d for _, d in lat]
print(f"dashboard over the run: {len(allds)} answers, p50 {pct(allds, 0.5):.1f} ms, p99 {pct(allds, 0.99):.1f} ms, {errors[0]} failed; serve's peak RSS {peak} MB")
PY
sql "SELECT 'requests by status: ' || string_agg(status || ' ' || n, ', ') FROM (SELECT status, count(*) n FROM tracking_requests GROUP BY 1 ORDER BY 1) s"
sql "SELECT 'shipments ' || (SELECT count(*) FROM shipments) || ', containers ' || (SELECT count(*) FROM containers) || ', raw events ' || (SELECT count(*) FROM raw_events) || ', transport events ' || (SELECT count(*) FROM transport_events)"
sql "SELECT 'doubled shipments: ' || count(*) FROM (SELECT 1 FROM shipments GROUP BY account_id, shipping_line_scac, upper(normalized_number) HAVING count(*) > 1) d"
sql "SELECT 'database ' || pg_size_pretty(pg_database_size(current_database())) || '; largest: ' || string_agg(relname || ' ' || pg_size_pretty(s), ', ') FROM (SELECT c.relname, pg_total_relation_size(c.oid) s FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 2 DESC LIMIT 6) t"
