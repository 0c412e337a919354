package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"
	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/model"
)

// TestConnectTimeoutCoversHandshake: a server that accepts connections and
// never answers fails Open within the connect timeout (lib/pq's handshake
// included), as unavailable — it does not hang.
func TestConnectTimeoutCoversHandshake(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accepted, never answered
		}
	}()
	begin := time.Now()
	_, err = db.OpenWith(context.Background(), "postgres://u@"+ln.Addr().String()+"/x?sslmode=disable",
		db.Options{ConnectTimeout: time.Second})
	if took := time.Since(begin); err == nil || took > 4*time.Second {
		t.Fatalf("Open of a silent server: %v after %v, want an error within about 1s", err, took)
	}
	if got := model.ErrorCode(err); got != model.EUNAVAILABLE {
		t.Errorf("silent server: %v is %s, want unavailable", err, got)
	}
}

// TestStatementTimeout: the session's statement_timeout cancels a
// statement that runs too long (57014, unavailable). The statement would
// run a minute: it must end cancelled by the statement timeout (the
// server's message says which cancel), no sooner than the timeout; no
// upper bound in seconds, which a loaded machine can overrun.
func TestStatementTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	store, err := db.OpenWith(context.Background(), dbtest.NewDB(t), db.Options{StatementTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	begin := time.Now()
	_, err = store.SQL().ExecContext(context.Background(), `SELECT pg_sleep(60)`)
	took := time.Since(begin)
	var pqe *pq.Error
	if !errors.As(err, &pqe) || pqe.Code != "57014" || !strings.Contains(pqe.Message, "statement timeout") || took < timeout {
		t.Fatalf("pg_sleep(60) under a %v statement_timeout: %v after %v, want cancelled by the statement timeout", timeout, err, took)
	}
	if model.ErrorCode(err) != model.EUNAVAILABLE {
		t.Errorf("statement timeout: %s, want unavailable", model.ErrorCode(err))
	}
}

// TestClassifySQLSTATE: every SQLSTATE class the store can meet, raised by
// a real PostgreSQL, gets its application code: the database's failures
// (connection, resources, transaction rollback, operator intervention,
// system) are unavailable; the client's data errors are invalid.
func TestClassifySQLSTATE(t *testing.T) {
	sdb := openDB(t).SQL()
	ctx := context.Background()
	raise := func(code string) string {
		return fmt.Sprintf(`DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = '%s'; END $$`, code)
	}
	for _, c := range []struct {
		what, sql, code, want string
	}{
		// Provoked for real.
		{"invalid UTF-8", `SELECT convert_from('\xff'::bytea, 'UTF8')`, "22021", model.EINVALID},
		{"NUL in jsonb", `SELECT '"a\u0000b"'::jsonb`, "22P05", model.EINVALID},
		{"out of range", `SELECT 99999999999::int4`, "22003", model.EINVALID},
		{"statement timeout", `SET LOCAL statement_timeout = 1; SELECT pg_sleep(1)`, "57014", model.EUNAVAILABLE},
		{"unique violation", `CREATE TEMP TABLE u (x int PRIMARY KEY); INSERT INTO u VALUES (1), (1)`, "23505", model.ECONFLICT},
		// Raised with the code of failures that need a broken server to
		// happen (the outage tests provoke the common ones for real).
		{"connection failure", raise("08006"), "08006", model.EUNAVAILABLE},
		{"too many clients", raise("53300"), "53300", model.EUNAVAILABLE},
		{"out of memory", raise("53200"), "53200", model.EUNAVAILABLE},
		{"serialization failure", raise("40001"), "40001", model.EUNAVAILABLE},
		{"deadlock", raise("40P01"), "40P01", model.EUNAVAILABLE},
		{"admin shutdown", raise("57P01"), "57P01", model.EUNAVAILABLE},
		{"shutting down", raise("57P03"), "57P03", model.EUNAVAILABLE},
		{"I/O error", raise("58030"), "58030", model.EUNAVAILABLE},
		{"syntax error stays internal", `SELEC 1`, "42601", model.EINTERNAL},
		// Citus's errors of a shard group that moved under the statement
		// (no SQLSTATE of their own): a retry succeeds.
		{"shard moved", `DO $$ BEGIN RAISE EXCEPTION 'could not find valid entry for shard 102161'; END $$`, "P0001", model.EUNAVAILABLE},
		{"shard moved under a trigger", `DO $$ BEGIN RAISE EXCEPTION 'cannot execute a distributed query from a query on a shard' USING ERRCODE = '0A000'; END $$`, "0A000", model.EUNAVAILABLE},
		{"other errors stay internal", `DO $$ BEGIN RAISE EXCEPTION 'could not find a shard'; END $$`, "P0001", model.EINTERNAL},
		// A worker's deadlock or serialization failure in a COPY, which
		// a Citus coordinator relays with the message only (XX000).
		{"deadlock relayed without its code", `DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = 'XX000'; END $$`, "XX000", model.EUNAVAILABLE},
		{"serialization failure relayed without its code", `DO $$ BEGIN RAISE EXCEPTION 'could not serialize access due to concurrent update' USING ERRCODE = 'XX000'; END $$`, "XX000", model.EUNAVAILABLE},
		{"other internal errors stay internal", `DO $$ BEGIN RAISE EXCEPTION 'deadlock detected in the planner' USING ERRCODE = 'XX000'; END $$`, "XX000", model.EINTERNAL},
	} {
		t.Run(c.what, func(t *testing.T) {
			tx, err := sdb.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			_, err = tx.ExecContext(ctx, c.sql)
			var pqe *pq.Error
			if !errors.As(err, &pqe) || string(pqe.Code) != c.code {
				t.Fatalf("got %v, want SQLSTATE %s", err, c.code)
			}
			if got := model.ErrorCode(db.Classify(err)); got != c.want {
				t.Errorf("Classify: %s, want %s", got, c.want)
			}
			// An unmapped driver error that escapes the store, wrapped,
			// is classified the same by the model.
			if got := model.ErrorCode(fmt.Errorf("wrapped: %w", err)); got != c.want {
				t.Errorf("model.ErrorCode: %s, want %s", got, c.want)
			}
			if c.want != model.EINTERNAL && model.ErrorMessage(err) == err.Error() {
				t.Errorf("the driver's text is shown: %q", model.ErrorMessage(err))
			}
		})
	}
}

// TestClassifyConnectionLoss: a connection ended by the server
// (pg_terminate_backend), a server that is down, and a server out of
// connection slots (53300, for real) are unavailable, and the store
// recovers once the server is back.
func TestClassifyConnectionLoss(t *testing.T) {
	srv := dbtest.NewServer(t)
	ctx := context.Background()
	store, err := db.Open(ctx, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	admin := dbtest.Open(t, srv.URL())

	// A connection held in a transaction, then terminated by the server.
	conn, err := store.SQL().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := conn.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	_, err = conn.ExecContext(ctx, `SELECT 1`)
	_ = conn.Close()
	if err == nil {
		t.Fatal("a terminated connection answered")
	}
	if got := model.ErrorCode(db.Classify(err)); got != model.EUNAVAILABLE {
		t.Errorf("terminated connection (%v): %s, want unavailable", err, got)
	}

	// Out of connection slots: a fresh pool meets "too many clients".
	var max int
	if err := admin.QueryRowContext(ctx, `SELECT current_setting('max_connections')::int`).Scan(&max); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		held []*sql.Conn
	)
	hog, err := sql.Open("postgres", srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	var full error
	for range max + 5 {
		c, err := hog.Conn(ctx)
		if err != nil {
			full = err
			break
		}
		mu.Lock()
		held = append(held, c)
		mu.Unlock()
	}
	var pqe *pq.Error
	if !errors.As(full, &pqe) || pqe.Code != "53300" {
		t.Fatalf("exhausting %d connections: %v, want 53300", max, full)
	}
	if got := model.ErrorCode(db.Classify(full)); got != model.EUNAVAILABLE {
		t.Errorf("too many clients: %s, want unavailable", got)
	}
	for _, c := range held {
		_ = c.Close()
	}
	_ = hog.Close()

	// The server goes down: every statement is unavailable.
	srv.Stop(t)
	_, err = store.FindAccount(ctx, "acme")
	if got := model.ErrorCode(err); got != model.EUNAVAILABLE {
		t.Errorf("server down (%v): %s, want unavailable", err, got)
	}
	srv.Start(t)
	if _, err := store.FindAccount(ctx, "nobody"); model.ErrorCode(err) != model.ENOTFOUND {
		t.Errorf("after the restart: %v, want not found", err)
	}
}
