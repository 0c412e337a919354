#!/usr/bin/env bash
# Tracking under load (issue 26's numbers; a benchmark, not a test): N
# tracking requests POSTed to /v2/tracking_requests over DUR seconds by
# CONNS clients, against the carrier simulator, then waited for until none
# is pending. Prints the requests accepted, refused and settled by status,
# duplicates (must be 0: one request per number), the create → settled
# latencies (p50, p99: updated_at − created_at, the database's clock), the
# events written and doubled (must be 0), and serve's RSS at the end.
#
#   scripts/bench-tracking.sh [N] [DUR]     (defaults 10000 requests, 60 s; CONNS=16)
#
# MIX=even (default) POSTs the simulator's numbers round-robin over its
# carriers, a book of business spread over them; MIX=sim takes them in the
# simulator's order (carrier by carrier: ~1,600 numbers of one carrier in
# ten seconds, then the next). Each carrier allows RATE requests a minute
# (default 600, the engine's default, bursts of a tenth), so the carriers'
# limits alone put a floor under "settled": the script prints it per
# carrier with when each carrier's last request settled.
#
# Everything runs on 127.0.0.1 with a private embedded PostgreSQL under a
# temporary DATA_DIR (EMBEDDED_FAST), removed at exit. Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}; DUR=${2:-60}; CONNS=${CONNS:-16}; MIX=${MIX:-even}; RATE=${RATE:-600}
BIN=${BIN:-bin/shipgraph}
[ -x "$BIN" ] || make --no-print-directory build >&2
TMP=$(mktemp -d /tmp/sgtrack.XXXXXX); chmod 755 "$TMP"
export DATA_DIR=$TMP/data EMBEDDED_FAST=true LOG_LEVEL=warn
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
fail() { echo "bench-tracking: $*" >&2; for f in "$TMP"/*.out "$TMP"/*.err "$TMP"/*.log; do [ -s "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }; done; exit 1; }
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

# Enough numbers: each simulated shipment gives a bill of lading, a booking
# and its containers' numbers. SCACS: the simulator's lines that the API
# tracks (ZIMU is refused at create: not supported in shipping_lines.csv).
SCACS=${SCACS:-MAEU,MSCU,CMDU,HLCU,ONEY,EGLV,COSU}
per=$(( N / $(echo "$SCACS" | tr , '\n' | wc -l) / 3 + 20 ))
"$BIN" carrier-sim --addr 127.0.0.1:0 --seed 7 --scacs "$SCACS" --shipments "$per" >"$TMP/sim.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do grep -q '^CARRIERS=' "$TMP/sim.out" && break; sleep 0.1; done
CARRIERS=$(sed -n 's/^CARRIERS=//p' "$TMP/sim.out"); export CARRIERS
SIM=$(sed -n 's/^carrier-sim listening on \([^ ]*\).*/\1/p' "$TMP/sim.out")

"$BIN" seed --seed-shipments 1 >"$TMP/keys" 2>"$TMP/seed.err" || fail "seed failed"
KEY=$(awk '$1=="token" && $2=="acme" && $3=="admin"{print $4}' "$TMP/keys")
PORT=$(free_port)
ADDR=127.0.0.1:$PORT RATE_LIMIT=0 "$BIN" serve --shutdown-delay 0 >"$TMP/serve.log" 2>&1 &
SPID=$!; PIDS+=($SPID)
for _ in $(seq 1 200); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/readyz" && break; sleep 0.1; done

sql() { "$BIN" psql -- -XAtqc "$1"; }
T0=$(sql "SELECT now()")   # the first POST, on the database's clock
# serve's tracking metrics every 5 s, for the timeline printed at the end.
( while sleep 5; do echo "@ $(date +%s.%N)"; curl -fs "http://127.0.0.1:$PORT/metrics" | grep '^shipgraph_tracking_' || true; done >"$TMP/metrics.txt" ) &
MPID=$!; PIDS+=($MPID); START=$(date +%s.%N)
python3 - "$SIM" "http://127.0.0.1:$PORT" "$KEY" "$N" "$DUR" "$CONNS" "$MIX" "$RATE" <<'PY'
import json, sys, threading, time, urllib.request, urllib.error
sim, base, key, n, dur, conns = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
mix, rate = sys.argv[7], int(sys.argv[8])
nums = json.load(urllib.request.urlopen(sim + "/sim/numbers"))
if len(nums) < n:
    sys.exit(f"the simulator knows {len(nums)} numbers, fewer than {n}")
if mix == "even":   # round-robin over the carriers, each carrier's numbers in the simulator's order
    by = {}
    for x in nums:
        by.setdefault(x["scac"], []).append(x)
    lists, nums = list(by.values()), []
    for i in range(max(map(len, lists))):
        nums += [l[i] for l in lists if i < len(l)]
nums = nums[:n]
# The carriers' floor: each carrier's requests polled as early as its rate
# allows (GCRA: RATE a minute, bursts of a tenth) from when each is POSTed.
per_s, burst, floor = rate / 60, max(1, rate // 10), {}
for i, x in enumerate(nums):
    c, at = floor.setdefault(x["scac"], [0, 0.0, 0.0]), dur * i / n
    t = max(at, c[1] - (burst - 1) / per_s)
    c[0], c[1], c[2] = c[0] + 1, max(c[1], t) + 1 / per_s, t
print("carriers' floor (%d a minute each), settled after the last POST: %s" % (rate, ", ".join(
    "%s %d: %.0f s" % (s, c[0], c[2] - dur * (n - 1) / n) for s, c in sorted(floor.items()))))
status = {}
lock = threading.Lock()
start = time.monotonic()
def post(i):
    x = nums[i]
    body = json.dumps({"data": {"type": "tracking_request", "attributes": {
        "request_type": x["request_type"], "request_number": x["request_number"], "scac": x["scac"]}}}).encode()
    req = urllib.request.Request(base + "/v2/tracking_requests", data=body, method="POST",
        headers={"Authorization": "Token " + key, "Content-Type": "application/vnd.api+json"})
    try:
        code = urllib.request.urlopen(req, timeout=30).status
    except urllib.error.HTTPError as e:
        code = e.code
    except Exception as e:
        code = type(e).__name__
    with lock:
        status[code] = status.get(code, 0) + 1
def worker(w):
    for i in range(w, n, conns):
        due = start + dur * i / n          # paced: N requests spread over DUR
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        post(i)
ts = [threading.Thread(target=worker, args=(w,)) for w in range(conns)]
[t.start() for t in ts]; [t.join() for t in ts]
print(f"posted {n} in {time.monotonic() - start:.1f} s: statuses {dict(sorted(status.items(), key=str))}")
PY

deadline=$(( $(date +%s) + 600 ))
while :; do
  pending=$(sql "SELECT count(*) FROM tracking_requests WHERE status = 'pending'")
  [ "$pending" = 0 ] && break
  [ "$(date +%s)" -gt "$deadline" ] && { echo "still $pending pending after 10 minutes"; break; }
  sleep 1
done
echo "settled $(( $(date +%s) - deadline + 600 )) s after the last POST (the seed's one shipment has its own request)"
sql "SELECT 'requests by status: ' || string_agg(status || ' ' || n, ', ') FROM (SELECT status, count(*) n FROM tracking_requests GROUP BY 1 ORDER BY 1) s"
sql "SELECT 'failed by reason: ' || coalesce(string_agg(coalesce(failed_reason, '?') || ' ' || n, ', '), 'none') FROM (SELECT failed_reason, count(*) n FROM tracking_requests WHERE status = 'failed' GROUP BY 1 ORDER BY 1) s"
sql "SELECT 'duplicate numbers: ' || count(*) FROM (SELECT 1 FROM tracking_requests GROUP BY account_id, request_type, request_number, scac HAVING count(*) > 1) d"
sql "SELECT 'by carrier, settled after the last POST: ' || string_agg(scac || ' ' || n || ': ' || s || ' s', ', ') FROM (SELECT scac, count(*) n, round(extract(epoch FROM max(updated_at) - (SELECT max(created_at) FROM tracking_requests))) s FROM tracking_requests WHERE status <> 'pending' GROUP BY 1 ORDER BY 1) x"
sql "SELECT 'polls a second by carrier, per 20 s from the first POST: ' || string_agg(scac || ' ' || w, '; ') FROM (SELECT scac, string_agg(to_char(n / 20.0, 'FM990.0'), ' ' ORDER BY b) w FROM (SELECT r.scac, b, count(t.id) n FROM (SELECT DISTINCT scac FROM tracking_requests) r CROSS JOIN generate_series(0, (SELECT floor(extract(epoch FROM max(updated_at) - '$T0'::timestamptz) / 20)::int FROM tracking_requests)) b LEFT JOIN tracking_requests t ON t.scac = r.scac AND t.status <> 'pending' AND floor(extract(epoch FROM t.updated_at - '$T0'::timestamptz) / 20) = b GROUP BY 1, 2) x GROUP BY 1 ORDER BY 1) y"
sql "SELECT 'create → settled: p50 ' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY s) * 1000) || ' ms, p99 ' || round(percentile_cont(0.99) WITHIN GROUP (ORDER BY s) * 1000) || ' ms' FROM (SELECT extract(epoch FROM updated_at - created_at) s FROM tracking_requests WHERE status <> 'pending') x"
sql "SELECT 'shipments ' || (SELECT count(*) FROM shipments) || ', containers ' || (SELECT count(*) FROM containers) || ', raw events ' || (SELECT count(*) FROM raw_events) || ', transport events ' || (SELECT count(*) FROM transport_events)"
sql "SELECT 'doubled events: ' || (SELECT count(*) FROM (SELECT 1 FROM raw_events GROUP BY account_id, container_id, scac, carrier_event_id HAVING count(*) > 1) d)"
sql "SELECT 'poll jobs: ' || string_agg(state || ' ' || n, ', ') FROM (SELECT state, count(*) n FROM river_job WHERE kind = 'tracking_poll' GROUP BY 1 ORDER BY 1) s"
curl -fs "http://127.0.0.1:$PORT/metrics" | awk '/^shipgraph_tracking_(batch_polls|poll_step_seconds)_(sum|count)|^shipgraph_tracking_polls_postponed_total/{printf "%s %s\n", $1, $2}' || true
kill "$MPID" 2>/dev/null || true
# Per 20 s from the first POST: polls done a second, the mean of each step
# a poll (ms) and the carrier snoozes a second.
python3 - "$TMP/metrics.txt" "$START" <<'PY'
import sys, re
rows, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("@ "):
        cur = {"t": float(line[2:]) - float(sys.argv[2])}; rows.append(cur); continue
    m = re.match(r'(\S+) (\S+)$', line.strip())
    if m and cur is not None:
        cur[m.group(1)] = float(m.group(2))
k = lambda s, st: 'shipgraph_tracking_poll_step_seconds_%s{step="%s"}' % (s, st)
busy = 'shipgraph_tracking_polls_postponed_total{reason="carrier_busy"}'
print("timeline (from the first POST): s, polls/s, ms a poll read fetch queue, write ms a batch, carrier snoozes/s")
prev = {"t": 0.0}
for r in rows:
    if r["t"] - prev["t"] < 19.5 and r is not rows[-1]:
        continue
    d = lambda name: r.get(name, 0.0) - prev.get(name, 0.0)
    dt, n = r["t"] - prev["t"], d(k("count", "fetch"))
    ms = lambda st: 1000 * d(k("sum", st)) / max(1, d(k("count", st)))
    print("  %4.0f–%4.0f s: %5.1f polls/s, %4.0f %4.0f %4.0f ms, %4.0f ms, %4.1f/s" % (prev["t"], r["t"], n / dt,
          ms("read"), ms("fetch"), ms("queue"), ms("write"), d(busy) / dt))
    prev = r
PY
echo "serve RSS: $(awk '/VmRSS/{print $2, $3}' /proc/$SPID/status) (peak $(awk '/VmHWM/{print $2, $3}' /proc/$SPID/status))"
