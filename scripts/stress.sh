#!/usr/bin/env bash
# make stress: the tests that used to race a sleep or a clock (issue 25),
# each package's set run COUNT times under -race while the CPU is kept busy,
# one package at a time. Fails on the first failing package.
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-20}"
go="${GO:-go}"

# Load: stress-ng on every core, or two busy loops without it.
if command -v stress-ng >/dev/null; then
  stress-ng --cpu 2 --quiet >/dev/null 2>&1 &
  load=$!
else
  ( while :; do :; done ) & l1=$!
  ( while :; do :; done ) & l2=$!
  load="$l1 $l2"
fi
trap 'kill $load 2>/dev/null || true' EXIT

run() {
  local pkg=$1 pattern=$2
  echo "=== $pkg: $pattern (-count=$count -race, under load)"
  $go test -race -count="$count" -timeout 60m -run "$pattern" "$pkg"
}

run ./db 'TestListenerFanOut$|TestReferenceCache$'
run ./sharedlimit 'TestSubscriptionsExpireWithTheirInstance$|TestAllowShared$'
run ./httpapi 'TestSharedSubscriptionLimit$|TestSharedLimitsRedisDown$|TestSharedRateLimit$|TestLiveSSESlowConsumer$|TestRevocationReachesEveryInstance$|TestReplicasManyInstances$'
run ./live 'TestFanOutInLogOrder$|TestSlowConsumerEnded$|TestResumeFromLogID$|TestRevokedKeyEnds$'
run . 'TestDrainOnShutdown$|TestInterruptSkipsDelay$'
echo "stress: all passed"
