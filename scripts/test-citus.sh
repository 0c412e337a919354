#!/usr/bin/env bash
# make test-citus: the test suite against a Citus cluster on loopback
# (scripts/citus-cluster.sh): every test database is distributed by account
# (db/dbtest clones a distributed template on every node). The tests named
# in scripts/citus-skip.txt are skipped, each for the reason given there.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(scripts/citus-cluster.sh start | sed 's/^/export /')"
skip=$(grep -v '^\s*\(#\|$\)' scripts/citus-skip.txt | awk '{print "^" $1 "$"}' | paste -sd'|' -)
echo "citus: coordinator $SHIPGRAPH_TEST_DATABASE_URL; skipping $(grep -cv '^\s*\(#\|$\)' scripts/citus-skip.txt) tests (scripts/citus-skip.txt)"
begin=$(date +%s)
# One template for every package of this run (db/dbtest: EnvTemplate),
# migrated and distributed once instead of once per package; dropped after.
export SHIPGRAPH_TEST_TEMPLATE=citus_${begin}_$$
rc=0
go test -count=1 -p "${CITUS_TEST_P:-2}" -timeout "${CITUS_TEST_TIMEOUT:-25m}" ${skip:+-skip "$skip"} "${@:-./...}" || rc=$?
echo "citus: go test ${*:-./...} took $(($(date +%s) - begin)) s (exit $rc)"
# The shared templates of this run: one per migrate func (db/dbtest).
for t in $(psql -X -At "$SHIPGRAPH_TEST_DATABASE_URL" \
  -c "SELECT datname FROM pg_database WHERE datname LIKE 'sg_tmpl_run_${SHIPGRAPH_TEST_TEMPLATE}_%'" 2>/dev/null); do
  scripts/citus-cluster.sh dropdb "$t" || true
done
exit "$rc"
