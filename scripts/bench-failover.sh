#!/usr/bin/env bash
# Failover numbers (docs/failures.md): runs the failover tests N times
# (default 3) and prints each run's lines: time from the primary's death (or
# the switchover's start) to the first successful write, writes
# acknowledged, 503s, /readyz; subscription events (WebSocket, SSE) skipped
# or doubled, webhook notifications lost or redelivered; the revocation's
# time to reach the second instance; and the whole set's wall time. The
# tests assert the promises (no 500, no acknowledged write lost, no event
# skipped or doubled, no notification lost, redeliveries only of those in
# flight at the kill); this collects the counts and times, which vary with
# the machine. Needs pg_autoctl (postgresql-15-auto-failover) for the HA
# cases.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-3}
go test -c -o /tmp/shipgraph-failover.test . >/dev/null
for i in $(seq 1 "$n"); do
  begin=$(date +%s.%N)
  /tmp/shipgraph-failover.test -test.count=1 -test.v \
    -test.run 'TestServeBadDatabaseURL|TestFailoverPromote|TestFailoverAutoFailover|TestReplicaOldTimeline' 2>&1 |
    grep -E '^(--- |    failover.*(kill \(and promote\)|ready in|failover live:|failover revocation:|pg_auto_failover: (planned|node_2)))' | sed "s/^/run $i: /" || true
  echo "run $i: the failover set took $(echo "$(date +%s.%N) - $begin" | bc | cut -d. -f1) s"
done
