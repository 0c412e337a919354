#!/bin/bash
# kill -9 of a real server during 1,000 webhook deliveries, then a restart
# (docs/webhooks.md, "Numbers"). Not a test: run it by hand, as root on a
# machine with the PostgreSQL server package (it runs PostgreSQL as user
# postgres on ports 55432-55434):  webhook/testdata/crash/run.sh
set -u
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
W=$(mktemp -d /tmp/shipgraph-webhook-crash.XXXXXX); chmod 777 $W
go build -C "$SRC" -o $W/sg . && go build -o $W/receiver "$SRC/webhook/testdata/crash/receiver.go" || exit 1
cd $W
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | tail -1)
PGPORT=55432; RPORT=55433; SPORT=55434
mkdir -p $W/pg; chown postgres $W/pg
su postgres -c "$PGBIN/initdb -D $W/pg -A trust -U postgres" >/dev/null
su postgres -c "$PGBIN/pg_ctl -D $W/pg -o '-p $PGPORT -k /tmp -c fsync=off' -l $W/pg/pg.log start -w" >/dev/null
export DATABASE_URL="postgres://postgres@127.0.0.1:$PGPORT/postgres?sslmode=disable"
PSQL="$PGBIN/psql -X -q -t -A $DATABASE_URL"
./sg migrate >/dev/null 2>&1 && SEED_SHIPMENTS=10 ./sg seed >/dev/null 2>&1 || { echo seed failed; exit 1; }
./receiver 127.0.0.1:$RPORT & RPID=$!
$PSQL -c "INSERT INTO webhooks (account_id, url, events, secret) SELECT id, 'http://127.0.0.1:$RPORT/hook', '{container.updated}', 'secret' FROM accounts WHERE slug = 'acme'"
export WEBHOOK_ALLOW_PRIVATE_URLS=true WEBHOOK_RETRY_BASE=1s ADDR=127.0.0.1:$SPORT LOG_LEVEL=warn SHUTDOWN_DELAY=0
./sg serve >$W/serve1.log 2>&1 & SPID=$!
sleep 2
# 1,000 changes, one row each, committed by plain SQL
$PSQL -c "DO \$\$ DECLARE c uuid; BEGIN SELECT id INTO c FROM containers WHERE account_id = (SELECT id FROM accounts WHERE slug='acme') LIMIT 1; FOR i IN 1..1000 LOOP UPDATE containers SET available_for_pickup = NOT coalesce(available_for_pickup, false) WHERE id = c; END LOOP; END \$\$"
# wait for some deliveries, then kill -9
while :; do n=$($PSQL -c "SELECT count(*) FROM webhook_notifications WHERE delivery_status='succeeded'"); [ "$n" -ge 300 ] && break; sleep 0.1; done
kill -9 $SPID; wait $SPID 2>/dev/null
echo "killed at: $($PSQL -c "SELECT delivery_status, count(*), count(claimed_by) FROM webhook_notifications GROUP BY 1 ORDER BY 1" | tr '\n' ' ')"
echo "receiver at kill: $(curl -s 127.0.0.1:$RPORT/stats)"
t0=$(date +%s.%N)
./sg serve >$W/serve2.log 2>&1 & SPID=$!
while :; do n=$($PSQL -c "SELECT count(*) FROM webhook_notifications WHERE delivery_status='succeeded'"); [ "$n" -ge 1000 ] && break; sleep 0.2; done
t1=$(date +%s.%N)
echo "all 1000 succeeded $(echo "$t1 - $t0" | bc) s after the restart"
echo "final: $($PSQL -c "SELECT delivery_status, count(*), sum(attempts) FROM webhook_notifications GROUP BY 1" | tr '\n' ' ')"
echo "receiver: $(curl -s 127.0.0.1:$RPORT/stats)"
kill $SPID; wait $SPID 2>/dev/null
kill $RPID
su postgres -c "$PGBIN/pg_ctl -D $W/pg stop -m fast" >/dev/null
rm -rf $W
