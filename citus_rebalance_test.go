package main

// On a Citus cluster (make test-citus): shards move while the API writes.
// The test database gets the cluster's spare worker, the shards are
// rebalanced onto it (citus_rebalance_start) and then one account is
// isolated to a shard of its own (isolate_tenant_to_new_shard), each while
// two accounts create tracking requests through /v2 without pause. Every
// write the API acknowledged must be there afterwards, and no answer may
// be a 5xx other than 503 (the one a client retries).

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
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

	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/testkit"
)

// citusWriter creates tracking requests of one account until stopped.
type citusWriter struct {
	base, key, account string

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
	env := testkit.New(t, testkit.Options{Shipments: -1})
	q := env.Store.SQL()

	if _, err := q.ExecContext(ctx, `INSERT INTO shipping_lines (scac, name, short_name) VALUES ('MSCU', 'MSC', 'MSC')`); err != nil {
		t.Fatal(err)
	}
	// Two accounts, an admin key each.
	var writers []*citusWriter
	base := strings.TrimSuffix(env.URL(), "/graphql")
	for _, slug := range []string{"big", "small"} {
		var id string
		if err := q.QueryRowContext(ctx, `INSERT INTO accounts (slug, company_name) VALUES ($1, $1) RETURNING id`, slug).Scan(&id); err != nil {
			t.Fatal(err)
		}
		raw := make([]byte, 20)
		_, _ = rand.Read(raw)
		key := "sg_" + hex.EncodeToString(raw)
		if _, err := env.Store.CreateToken(ctx, db.TokenInput{AccountID: id, Role: "admin", Name: "citus", Key: key}); err != nil {
			t.Fatal(err)
		}
		writers = append(writers, &citusWriter{base: base, key: key, account: id})
	}

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
	spareAdmin, err := sql.Open("postgres", admin.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { spareAdmin.Close() })
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
