#!/usr/bin/env bash
# Failover numbers (docs/failures.md): runs the failover tests N times
# (default 3) and prints each run's line: time from the primary's death (or
# the switchover's start) to the first successful write, writes
# acknowledged, 503s, /readyz. The tests assert the promises (no 500, no
# acknowledged write lost); this collects the times, which vary with the
# machine. Needs pg_autoctl (postgresql-15-auto-failover) for the HA cases.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-3}
for i in $(seq 1 "$n"); do
  go test -count=1 -run 'TestFailoverPromote|TestFailoverAutoFailover|TestSwitchoverAutoFailover' -v . 2>&1 |
    grep -E '^(--- |    failover.*(kill \(and promote\)|ready in))' | sed "s/^/run $i: /"
done
