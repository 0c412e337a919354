//go:build linux

package main

// On a Citus cluster (make test-citus): shards move while the API writes.
// The test database gets the cluster's spare worker, the shards are
// rebalanced onto it (citus_rebalance_start) and then one account is
// isolated to a shard of its own (isolate_tenant_to_new_shard), each while
// two accounts create tracking requests through /v2 without pause and one
// of them stops and resumes its shipments' tracking, which raises webhook
// notifications. Every write the API acknowledged must be there
// afterwards, no answer may be a 5xx other than 503 (the one a client
// retries), the account's changes subscriptions (WebSocket and SSE) must
// see every change of the change log exactly once, and every webhook
// notification must be delivered exactly once (liveProbe, as for a
// failover, with no outage: no redelivery is excused).

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lib/pq"

	"shipgraph/carrier/sim"
	"shipgraph/db/dbtest"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
	"shipgraph/testkit/simtest"
)

// citusWriter creates tracking requests of one account until stopped;
// with ships, each round also stops or resumes the tracking of one of
// them in turn (a webhook notification when it stops).
type citusWriter struct {
	base, key, account string
	ships              []string

	mu    sync.Mutex
	acked []string // ids of the 201s
	bad   []string // answers other than 201 and 503
	n503  int
	count atomic.Int64 // acknowledged writes
}

func (w *citusWriter) run(stop <-chan struct{}, done *sync.WaitGroup) {
	defer done.Done()
	client := &http.Client{Timeout: time.Minute}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		body, _ := json.Marshal(map[string]any{"data": map[string]any{"type": "tracking_request", "attributes": map[string]any{
			"request_type": "bill_of_lading", "request_number": fmt.Sprintf("MEDU%s%06d", w.account[:4], i), "scac": "MSCU"}}})
		req, _ := http.NewRequest(http.MethodPost, w.base+"/v2/tracking_requests", bytes.NewReader(body))
		req.Header.Set("Authorization", "Token "+w.key)
		req.Header.Set("Content-Type", "application/vnd.api+json")
		if len(w.ships) > 0 {
			verb := "stop_tracking"
			if (i/len(w.ships))%2 == 1 {
				verb = "resume_tracking"
			}
			treq, _ := http.NewRequest(http.MethodPatch, w.base+"/v2/shipments/"+w.ships[i%len(w.ships)]+"/"+verb, nil)
			treq.Header.Set("Authorization", "Token "+w.key)
			if res, err := client.Do(treq); err != nil {
				w.mu.Lock()
				w.bad = append(w.bad, err.Error())
				w.mu.Unlock()
			} else {
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				w.mu.Lock()
				switch res.StatusCode {
				case http.StatusOK:
				case http.StatusServiceUnavailable:
					w.n503++
				default:
					w.bad = append(w.bad, fmt.Sprintf("%s: %d %s", verb, res.StatusCode, b))
				}
				w.mu.Unlock()
			}
		}
		res, err := client.Do(req)
		if err != nil {
			w.mu.Lock()
			w.bad = append(w.bad, err.Error())
			w.mu.Unlock()
			continue
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		w.mu.Lock()
		switch res.StatusCode {
		case http.StatusCreated:
			var out struct {
				Data struct{ ID string } `json:"data"`
			}
			if json.Unmarshal(b, &out) == nil && out.Data.ID != "" {
				w.acked = append(w.acked, out.Data.ID)
				w.count.Add(1)
			} else {
				w.bad = append(w.bad, "201 without an id: "+string(b))
			}
		case http.StatusServiceUnavailable:
			w.n503++
		default:
			w.bad = append(w.bad, fmt.Sprintf("%d %s", res.StatusCode, b))
		}
		w.mu.Unlock()
	}
}

func TestCitusShardMovesUnderWrites(t *testing.T) {
	if !dbtest.Citus(t) {
		t.Skip("needs a Citus cluster: make test-citus")
	}
	spare := os.Getenv("SHIPGRAPH_TEST_CITUS_SPARE")
	if spare == "" {
		t.Skip("needs the cluster's spare worker: SHIPGRAPH_TEST_CITUS_SPARE (scripts/citus-cluster.sh env)")
	}
	ctx := context.Background()
	dbURL := dbtest.NewDB(t)
	keys := seedKeys(t, dbURL, "20")
	// The carrier simulator serves MSCU, so that /v2 accepts its tracking
	// requests (a SCAC without a carrier connection is refused).
	simulator, err := sim.New(sim.Options{Seed: 11, SCACs: []string{"MSCU"}})
	if err != nil {
		t.Fatal(err)
	}
	simURL := simtest.Serve(t, simulator)
	base := serve(t, "--database-url", dbURL, "--rate-limit", "0", "--carriers", "MSCU="+simURL+"/MSCU",
		"--webhook-allow-private-urls", "--webhook-retry-base", "20ms")
	q := dbtest.Open(t, dbURL)

	// acme (the big account, isolated below) and globex, an admin key
	// each; acme's tracked shipments are stopped and resumed in turn.
	var writers []*citusWriter
	for _, slug := range []string{"acme", "globex"} {
		w := &citusWriter{base: base, key: keys[slug+" admin"]}
		if err := q.QueryRowContext(ctx, `SELECT id FROM accounts WHERE slug = $1`, slug).Scan(&w.account); err != nil {
			t.Fatal(err)
		}
		writers = append(writers, w)
	}
	writers[0].ships = pg.Column[string](t, q, `SELECT id FROM shipments WHERE account_id = $1 AND line_tracking_stopped_at IS NULL ORDER BY id LIMIT 4`,
		writers[0].account)
	if len(writers[0].ships) < 2 {
		t.Fatalf("acme has %d tracked shipments, want 2 or more", len(writers[0].ships))
	}
	probe := startProbe(t, base, writers[0].key, func() {
		for _, verb := range []string{"stop_tracking", "resume_tracking"} {
			if status, body := call(t, http.MethodPatch, base+"/v2/shipments/"+writers[0].ships[0]+"/"+verb, writers[0].key, ""); status != http.StatusOK {
				t.Fatalf("%s before the load: %d %s", verb, status, body)
			}
		}
	})

	// The spare worker joins this database's cluster.
	var name string
	if err := q.QueryRowContext(ctx, `SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	admin, err := url.Parse(dbtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	admin.Host = spare
	spareAdmin := dbtest.Open(t, admin.String())
	if _, err := spareAdmin.ExecContext(ctx, `CREATE DATABASE `+pq.QuoteIdentifier(name)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for {
			_, err := spareAdmin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+pq.QuoteIdentifier(name)+` WITH (FORCE)`)
			var pqErr *pq.Error
			if err == nil || !errors.As(err, &pqErr) || pqErr.Code != "55006" || ctx.Err() != nil {
				if err != nil {
					t.Errorf("dropping the spare worker's database: %v", err)
				}
				return
			}
			time.Sleep(50 * time.Millisecond) // the coordinator's connections are closing
		}
	})
	admin.Path = "/" + name
	spareDB, err := sql.Open("postgres", admin.String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := spareDB.ExecContext(ctx, `CREATE EXTENSION citus`); err != nil {
		t.Fatal(err)
	}
	spareDB.Close()
	host, port, _ := strings.Cut(spare, ":")
	if _, err := q.ExecContext(ctx, `SELECT citus_add_node($1, $2::int)`, host, port); err != nil {
		t.Fatal(err)
	}

	// Shard moves take longer than the store's statement timeout.
	op, err := q.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op.Close() })
	if _, err := op.ExecContext(ctx, `SET statement_timeout = 0`); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var done sync.WaitGroup
	for _, w := range writers {
		done.Add(1)
		go w.run(stop, &done)
	}
	stopped := false
	halt := func() {
		if !stopped {
			stopped = true
			close(stop)
			done.Wait()
		}
	}
	t.Cleanup(halt)
	t.Cleanup(func() {
		// Registered after halt, so it runs first: a failure says what
		// the writers were answered.
		if !t.Failed() {
			return
		}
		for _, w := range writers {
			w.mu.Lock()
			first := ""
			if len(w.bad) > 0 {
				first = w.bad[0]
			}
			t.Logf("account %s: %d acknowledged, %d answered 503, %d other answers, first: %.500s", w.account, len(w.acked), w.n503, len(w.bad), first)
			w.mu.Unlock()
		}
	})
	// Writes are flowing before a shard moves, and go on after.
	flowing := func(what string) {
		t.Helper()
		from := make([]int64, len(writers))
		for i, w := range writers {
			from[i] = w.count.Load()
		}
		testkit.WaitFor(t, 2*time.Minute, what, func() bool {
			for i, w := range writers {
				if w.count.Load() < from[i]+10 {
					return false
				}
			}
			return true
		})
	}
	flowing("writes before the rebalance")

	onSpare := func() int {
		var n int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM pg_dist_placement p JOIN pg_dist_node n ON n.groupid = p.groupid
			WHERE n.nodename = $1 AND n.nodeport = $2::int`, host, port).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := onSpare(); n != 0 {
		t.Fatalf("%d shards on the spare worker before the rebalance", n)
	}
	begin := time.Now()
	if _, err := op.ExecContext(ctx, `SELECT citus_rebalance_start()`); err != nil {
		t.Fatal(err)
	}
	if _, err := op.ExecContext(ctx, `SELECT citus_rebalance_wait()`); err != nil {
		t.Fatal(err)
	}
	moved := onSpare()
	if moved == 0 {
		t.Fatal("the rebalance moved no shard onto the new worker")
	}
	t.Logf("rebalance: %d shard placements moved onto the third worker in %v", moved, time.Since(begin).Round(time.Millisecond))
	flowing("writes after the rebalance")

	// The big account gets a shard group of its own, while it writes. The
	// split blocks the account's writes while it copies (block_writes): the
	// non-blocking split's logical decoding through the citus output plugin
	// fails with this build ("library \"citus\" may not be used as an output
	// plugin"); the writes wait, none may fail.
	big := writers[0].account
	begin = time.Now()
	if _, err := op.ExecContext(ctx, `SELECT isolate_tenant_to_new_shard('tracking_requests', $1::uuid, cascade_option => 'CASCADE', shard_transfer_mode => 'block_writes')`, big); err != nil {
		t.Fatal(err)
	}
	var lo, hi string
	if err := q.QueryRowContext(ctx, `SELECT s.shardminvalue, s.shardmaxvalue FROM pg_dist_shard s
		WHERE s.shardid = get_shard_id_for_distribution_column('tracking_requests', $1::uuid)`, big).Scan(&lo, &hi); err != nil {
		t.Fatal(err)
	}
	if lo != hi {
		t.Fatalf("the big account's shard covers hashes %s..%s, want one value", lo, hi)
	}
	t.Logf("isolation: the big account on a shard of its own in %v", time.Since(begin).Round(time.Millisecond))
	flowing("writes after the isolation")
	halt()
	// No kill: every notification is delivered once, nothing redelivered.
	probe.check(t, dbURL, time.Time{})

	for _, w := range writers {
		w.mu.Lock()
		if len(w.bad) > 0 {
			t.Errorf("account %s: %d answers neither 201 nor 503, e.g. %s", w.account, len(w.bad), w.bad[0])
		}
		var n int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM tracking_requests WHERE account_id = $1 AND id = ANY($2::uuid[])`,
			w.account, pq.Array(w.acked)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != len(w.acked) {
			t.Errorf("account %s: %d of %d acknowledged writes are there", w.account, n, len(w.acked))
		}
		t.Logf("account %s: %d writes acknowledged and kept, %d answered 503", w.account, len(w.acked), w.n503)
		w.mu.Unlock()
	}
}
