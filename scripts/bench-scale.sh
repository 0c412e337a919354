#!/usr/bin/env bash
# make bench-scale: list latencies at 20,000 and 1,000,000 shipments, one
# request at a time (see README "Scale"). Seeds each size once into a private
# PostgreSQL cluster kept under $SCALE_DIR (default /var/tmp/shipgraph-scale)
# and reuses it on later runs; prints the median of $ROUNDS timed requests
# per endpoint and size, with the response cache off (RESPONSE_CACHE_BYTES=0:
# a repeated request would otherwise time the cache, not the query). Never
# part of make test.
#
#   SCALE_DIR   where the cluster lives (default /var/tmp/shipgraph-scale)
#   SIZES       shipment counts to compare (default "20000 1000000")
#   ROUNDS      timed requests per endpoint (default 15, after 2 warm-ups)
#   BIN         the binary (default bin/shipgraph; make bench-scale builds it)
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE_DIR=${SCALE_DIR:-/var/tmp/shipgraph-scale}
SIZES=${SIZES:-"20000 1000000"}
ROUNDS=${ROUNDS:-15}
BIN=${BIN:-bin/shipgraph}
PORT=${SCALE_PG_PORT:-55433}
BIN=$(realpath "$BIN")

pgbin=$(dirname "$(command -v pg_ctl || ls /usr/lib/postgresql/*/bin/pg_ctl | sort -V | tail -1)")
# PostgreSQL refuses to run as root: run the cluster as postgres then.
as_pg() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }

data=$SCALE_DIR/data
mkdir -p "$SCALE_DIR"
[ "$(id -u)" = 0 ] && chown postgres "$SCALE_DIR"
if [ ! -f "$data/PG_VERSION" ]; then
	as_pg "$pgbin/initdb -D $data -A trust -U postgres" >"$SCALE_DIR/initdb.log"
	cat >>"$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$SCALE_DIR'
shared_buffers = '1GB'
maintenance_work_mem = '512MB'
max_wal_size = '4GB'
CONF
fi
started=
if ! as_pg "$pgbin/pg_ctl -D $data status" >/dev/null 2>&1; then
	as_pg "$pgbin/pg_ctl -D $data -l $SCALE_DIR/postgres.log -w start" >/dev/null
	started=1
fi
srv=
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
	[ -n "$started" ] && as_pg "$pgbin/pg_ctl -D $data -m fast stop" >/dev/null
	true
}
trap cleanup EXIT

admin="postgres://postgres@127.0.0.1:$PORT/postgres?sslmode=disable"
median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f", m*1000}'; }

for n in $SIZES; do
	dbname=sg_$n
	url="postgres://postgres@127.0.0.1:$PORT/$dbname?sslmode=disable"
	if ! psql -Atqc "SELECT 1 FROM pg_database WHERE datname = '$dbname'" "$admin" | grep -q 1; then
		psql -qc "CREATE DATABASE $dbname" "$admin"
	fi
	keys=$SCALE_DIR/$dbname.keys
	if [ ! -s "$keys" ]; then
		echo "seeding $n shipments into $dbname (once; reused later)..." >&2
		DATABASE_URL=$url "$BIN" seed --seed-shipments "$n" --seed 42 --force >"$keys.tmp"
		# A database that has been in use has been vacuumed: without its
		# visibility map, skipping rows in an index (numbered pages) reads
		# the table too (the deepest /v2 page at 1 M: 74 ms before, 16 after).
		psql -qc "VACUUM (ANALYZE)" "$url"
		mv "$keys.tmp" "$keys"
	fi
	# The binary migrates on start; make sure a reused database is current.
	DATABASE_URL=$url "$BIN" migrate >/dev/null
	key=$(awk '$2 == "acme" && $3 == "admin" {print $4}' "$keys")
	addr=127.0.0.1:$((PORT + 100))
	DATABASE_URL=$url ADDR=$addr LOG_LEVEL=error RATE_LIMIT=0 RESPONSE_CACHE_BYTES=0 "$BIN" serve >"$SCALE_DIR/serve.log" 2>&1 &
	srv=$!
	# Readiness, not liveness: /healthz answers 200 while the database is
	# still connecting (everything else 503); /readyz only once it serves.
	ready=
	for _ in $(seq 600); do
		if curl -fs "http://$addr/readyz" >/dev/null 2>&1; then ready=1; break; fi
		kill -0 "$srv" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$ready" ]; then
		echo "bench-scale: the server at $addr never became ready; its log:" >&2
		cat "$SCALE_DIR/serve.log" >&2
		kill "$srv" 2>/dev/null || true
		exit 1
	fi

	get() { curl -gfsS -o /dev/null -w '%{time_total}\n' -H "Authorization: Token $key" "http://$addr$1"; }
	gql() { curl -gfsS -o /dev/null -w '%{time_total}\n' -H "Authorization: Token $key" -H 'Content-Type: application/json' \
		--data "{\"query\":\"$1\"}" "http://$addr/graphql"; }
	run() { # name, then a command printing one duration per call
		local name=$1; shift
		# ONLY=Stats runs only the lines whose name holds "Stats" (the grouped counts).
		[[ -n "${ONLY:-}" && "$name" != *"$ONLY"* ]] && return
		"$@" >/dev/null; "$@" >/dev/null
		printf '%-9s %-58s %8s ms\n' "$n" "$name" "$(for _ in $(seq "$ROUNDS"); do "$@"; done | median)"
	}
	# next link of page k, following links.next from page 1 (keyset) —
	# measures the cost of one page deep in the walk.
	deep_next() {
		local path=$1 pages=$2 next="http://$addr$1"
		for _ in $(seq "$pages"); do
			next=$(curl -gfsS -H "Authorization: Token $key" "$next" | sed -n 's/.*"next":"\([^"]*\)".*/\1/p')
			[ -n "$next" ] || break
		done
		echo "$next"
	}
	run "/v2/documents?include=shipments,cargos&page[size]=100" get '/v2/documents?include=shipments,cargos&page%5Bsize%5D=100'
	run "/v2/documents" get '/v2/documents'
	run "/v2/documents?filter[filename]=bl" get '/v2/documents?filter%5Bfilename%5D=bl'
	run "/v2/shipments" get '/v2/shipments'
	run "/v2/containers" get '/v2/containers'
	run "/v2/custom_field_definitions" get '/v2/custom_field_definitions'
	run "/v2/documents?page[number]=300" get '/v2/documents?page%5Bnumber%5D=300'
	run "/v2/documents?page[number]=3334 (the deepest numbered page)" get '/v2/documents?page%5Bnumber%5D=3334'
	run "/v2/shipments?page[size]=100 links.next of page 1" get "$(deep_next '/v2/shipments?page%5Bsize%5D=100' 1 | sed "s#^http://$addr##")"
	# DEEP=5000 walks 5,000 pages first (minutes at 1,000,000 shipments).
	run "/v2/shipments?page[size]=100 links.next of page ${DEEP:-100}" get "$(deep_next '/v2/shipments?page%5Bsize%5D=100' "${DEEP:-100}" | sed "s#^http://$addr##")"
	run "graphql shipments(first: 50) { totalCount nodes { id } }" gql '{ shipments(first: 50) { totalCount nodes { id } } }'
	run "graphql containers(first: 50) { totalCount nodes { id } }" gql '{ containers(first: 50) { totalCount nodes { id } } }'
	run "graphql documents(first: 50) { totalCount nodes { id } }" gql '{ documents(first: 50) { totalCount nodes { id } } }'
	run "graphql shipments(page: {number: 200, size: 50})" gql '{ shipments(page: {number: 200, size: 50}) { nodes { id } } }'
	run "graphql shipments(page: {number: 2001, size: 50}) (deepest)" gql '{ shipments(page: {number: 2001, size: 50}) { nodes { id } } }'
	# Grouped counts of the whole account (issue 27: goal <= 100 ms at 1 M).
	run "graphql containerStats(groupBy: [STATUS])" gql '{ containerStats(groupBy: [STATUS]) { status count } }'
	run "graphql containerStats(groupBy: [POD_TERMINAL, LAST_FREE_DAY])" gql '{ containerStats(groupBy: [POD_TERMINAL, LAST_FREE_DAY]) { podTerminal { name } lastFreeDay count } }'
	run "graphql containerStats(groupBy: [SHIPPING_LINE])" gql '{ containerStats(groupBy: [SHIPPING_LINE]) { shippingLineScac count } }'
	run "graphql shipmentStats(groupBy: [POD_TERMINAL, ETA_WEEK])" gql '{ shipmentStats(groupBy: [POD_TERMINAL, ETA_WEEK]) { podTerminal { name } etaWeek count } }'
	run "graphql shipmentStats(groupBy: [SHIPPING_LINE])" gql '{ shipmentStats(groupBy: [SHIPPING_LINE]) { shippingLineScac count } }'
	# Search (issue 28): one query of each kind, the values read from acme's data
	# (the seed is fixed, so they are the same on every run of a size).
	one() { psql -Atqc "$1" "$url"; }
	acme_rows="FROM shipments s JOIN accounts a ON a.id = s.account_id AND a.slug = 'acme'"
	s_bl=$(one "SELECT s.bill_of_lading_number $acme_rows ORDER BY s.id LIMIT 1")
	s_ref=$(one "SELECT s.ref_numbers[1] $acme_rows WHERE s.ref_numbers <> '{}' ORDER BY s.id LIMIT 1")
	s_box=$(one "SELECT c.number FROM containers c JOIN accounts a ON a.id = c.account_id AND a.slug = 'acme' ORDER BY c.id LIMIT 1")
	search() { # name, query
		run "/v2/search?query=$2 ($1)" get "/v2/search?query=${2// /%20}"
	}
	search "whole bill of lading" "$s_bl"
	search "seven digits of one" "${s_bl: -7}"
	search "reference number" "$s_ref"
	search "container number" "$s_box"
	search "a customer: a word in 1 of 14" "tyrell"
	search "a port: two words" "los angeles"
	search "a tag" "reefer"
	search "no match" "zzqx"
	search "two letters" "ms"
	kill "$srv"; wait "$srv" 2>/dev/null || true; srv=
done
