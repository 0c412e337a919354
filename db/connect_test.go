package db_test

import (
	"context"
	"errors"
	"net"
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
// statement that runs too long (57014, unavailable).
func TestStatementTimeout(t *testing.T) {
	store, err := db.OpenWith(context.Background(), dbtest.NewDB(t), db.Options{StatementTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	begin := time.Now()
	_, err = store.SQL().ExecContext(context.Background(), `SELECT pg_sleep(3)`)
	var pqe *pq.Error
	if !errors.As(err, &pqe) || pqe.Code != "57014" || time.Since(begin) > 2*time.Second {
		t.Fatalf("pg_sleep(3) under a 200ms statement_timeout: %v after %v", err, time.Since(begin))
	}
	if model.ErrorCode(err) != model.EUNAVAILABLE {
		t.Errorf("statement timeout: %s, want unavailable", model.ErrorCode(err))
	}
}
