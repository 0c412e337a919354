#!/usr/bin/env bash
# A Citus cluster on loopback for development and CI: a coordinator, two
# workers and one spare worker (started, not added: the rebalancing test adds
# it to its own database), each a PostgreSQL 15 server run by the postgres OS
# user with shared_preload_libraries=citus. Citus itself comes from
# ../shared/citus (installed idempotently, see its README.md).
#
#   scripts/citus-cluster.sh start   # install, init (first time), start, add the workers
#   scripts/citus-cluster.sh env     # print DATABASE_URL=... and the test variables
#   scripts/citus-cluster.sh stop    # stop every node (data kept)
#   scripts/citus-cluster.sh destroy # stop and remove the data
#   scripts/citus-cluster.sh dropdb NAME # drop database NAME on every node
#
# CITUS_DIR (default /tmp/shipgraph-citus) holds the nodes' data; CITUS_PORT
# (default 9700) is the coordinator's port, workers take the next three.
# CITUS_DB (default shipgraph) is created on every node, with the extension
# and the nodes added, as is the maintenance database "postgres" (the test
# kit's admin database: it finds the workers in its pg_dist_node).
# CITUS_SHARD_COUNT (default 8) is the shard count of distributed tables.
# Idempotent: start on a running cluster only checks it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CITUS_DIR=${CITUS_DIR:-/tmp/shipgraph-citus}
CITUS_PORT=${CITUS_PORT:-9700}
CITUS_DB=${CITUS_DB:-shipgraph}
CITUS_SHARD_COUNT=${CITUS_SHARD_COUNT:-8}
CITUS_SRC=${CITUS_SRC:-$here/../../shared/citus}
[ -d "$CITUS_SRC" ] || CITUS_SRC=$here/../../../shared/citus
BIN=/usr/lib/postgresql/15/bin
coord=$CITUS_PORT
workers=($((CITUS_PORT + 1)) $((CITUS_PORT + 2)))
spare=$((CITUS_PORT + 3))
all=("$coord" "${workers[@]}" "$spare")

# as_pg runs a command as the postgres OS user (servers refuse to run as root).
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
psql_at() { # psql_at PORT DB SQL
  PGOPTIONS="-c client_min_messages=warning" as_pg "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$1" -U postgres -d "$2" -Atc "$3"
}

start_node() { # start_node PORT
  local d=$CITUS_DIR/$1
  if [ ! -f "$d/PG_VERSION" ]; then
    mkdir -p "$d"
    chown postgres: "$CITUS_DIR" "$d" 2>/dev/null || true
    chmod 700 "$d"
    as_pg "$BIN/initdb" -D "$d" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    echo "include 'shipgraph.conf'" >>"$d/postgresql.conf"
  fi
  # The settings, rewritten at every start: a changed file restarts a
  # running node. Each database with the extension runs a Citus
  # maintenance daemon (a background worker): the test suite's parallel
  # databases need many.
  local conf
  conf=$(cat <<EOF
# written by scripts/citus-cluster.sh
listen_addresses = '127.0.0.1'
port = $1
unix_socket_directories = '$d'
shared_preload_libraries = 'citus'
max_connections = 400
max_prepared_transactions = 400
max_worker_processes = 160
shared_buffers = 64MB
fsync = off
synchronous_commit = off
full_page_writes = off
wal_level = logical
max_replication_slots = 40
max_wal_senders = 40
citus.shard_count = $CITUS_SHARD_COUNT
# Triggers on distributed tables (db.Distribute sets it per database too;
# the test kit's clones of a template do not inherit that).
citus.enable_unsafe_triggers = on
citus.max_adaptive_executor_pool_size = 4
log_min_messages = warning
log_line_prefix = '%m [%p] %d '
EOF
)
  if [ "$(cat "$d/shipgraph.conf" 2>/dev/null)" != "$conf" ]; then
    printf '%s\n' "$conf" >"$d/shipgraph.conf"
    chown postgres: "$d/shipgraph.conf" 2>/dev/null || true
    if as_pg "$BIN/pg_ctl" -D "$d" status >/dev/null 2>&1; then
      as_pg "$BIN/pg_ctl" -D "$d" -m fast -w restart -l "$d/postgres.log" >/dev/null
    fi
  fi
  if ! as_pg "$BIN/pg_ctl" -D "$d" status >/dev/null 2>&1; then
    as_pg "$BIN/pg_ctl" -D "$d" -l "$d/postgres.log" -w -t 60 start >/dev/null
  fi
}

# setup_db DB: the database on every node, the extension, the nodes added.
setup_db() {
  local db=$1 p
  for p in "${all[@]}"; do
    if [ "$db" != postgres ] && [ -z "$(psql_at "$p" postgres "SELECT 1 FROM pg_database WHERE datname = '$db'")" ]; then
      psql_at "$p" postgres "CREATE DATABASE \"$db\""
    fi
    psql_at "$p" "$db" "CREATE EXTENSION IF NOT EXISTS citus"
  done
  psql_at "$coord" "$db" "SELECT citus_set_coordinator_host('127.0.0.1', $coord)" >/dev/null
  for p in "${workers[@]}"; do
    if [ -z "$(psql_at "$coord" "$db" "SELECT 1 FROM pg_dist_node WHERE nodename = '127.0.0.1' AND nodeport = $p")" ]; then
      psql_at "$coord" "$db" "SELECT citus_add_node('127.0.0.1', $p)" >/dev/null
    fi
  done
}

print_env() {
  echo "DATABASE_URL=postgres://postgres@127.0.0.1:$coord/$CITUS_DB?sslmode=disable"
  echo "SHIPGRAPH_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:$coord/postgres?sslmode=disable"
  echo "SHIPGRAPH_TEST_CITUS_SPARE=127.0.0.1:$spare"
}

case "${1:-}" in
  start)
    [ -x "$BIN/postgres" ] || { echo "citus-cluster: PostgreSQL 15 is not installed (apt-get install postgresql-15)" >&2; exit 1; }
    # The Citus build links against a symbol PostgreSQL 15 exports from its
    # latest minor releases (built with 15.20's headers).
    minor=$("$BIN/postgres" --version | sed -n 's/.* 15\.\([0-9]*\).*/\1/p')
    [ "${minor:-0}" -ge 20 ] || { echo "citus-cluster: PostgreSQL 15.$minor is too old for the Citus build; apt-get install postgresql-15 (15.20 or later)" >&2; exit 1; }
    [ -x "$CITUS_SRC/install.sh" ] || { echo "citus-cluster: no Citus build at $CITUS_SRC (set CITUS_SRC)" >&2; exit 1; }
    "$CITUS_SRC/install.sh" >/dev/null
    mkdir -p "$CITUS_DIR"
    for p in "${all[@]}"; do start_node "$p"; done
    setup_db postgres
    setup_db "$CITUS_DB"
    # The spare worker has the extension in both databases, nothing else.
    print_env
    ;;
  env) print_env ;;
  stop)
    for p in "${all[@]}"; do
      [ -f "$CITUS_DIR/$p/PG_VERSION" ] && as_pg "$BIN/pg_ctl" -D "$CITUS_DIR/$p" -m fast -w stop >/dev/null 2>&1 || true
    done
    ;;
  destroy)
    "$0" stop
    rm -rf "$CITUS_DIR"
    ;;
  dropdb) # dropdb NAME: drop database NAME on every node (the test run's template)
    for p in "$coord" "${workers[@]}"; do
      psql_at "$p" postgres "DROP DATABASE IF EXISTS \"$2\" WITH (FORCE)"
    done
    ;;
  *)
    echo "usage: $0 start|env|stop|destroy|dropdb NAME" >&2
    exit 2
    ;;
esac
