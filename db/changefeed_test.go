package db_test

import (
	"context"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/db/seed"
)

// The demo activity moves containers along their journey: the account's
// channel wakes its readers once per transaction, and the log has each
// move (the seeder's bulk load, on the other hand, is silent).
func TestDemoActivityAndFeed(t *testing.T) {
	store := openDB(t)
	ctx := context.Background()
	if _, _, err := seed.Run(ctx, store, seed.Options{Shipments: 3, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	feed := store.Listen(time.Second)
	defer feed.Close()
	events := feed.Subscribe(16, db.FeedChange).Events()
	select {
	case e := <-events:
		if e.Kind != db.FeedListening {
			t.Fatalf("first event %v", e.Kind)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the feed did not listen")
	}
	var account string
	if err := store.SQL().QueryRowContext(ctx, `SELECT id FROM accounts ORDER BY slug LIMIT 1`).Scan(&account); err != nil {
		t.Fatal(err)
	}
	if err := feed.Listen(account); err != nil {
		t.Fatal(err)
	}
	if err := feed.ListenAll(); err != nil {
		t.Fatal(err)
	}
	head, err := store.AccountChangeLogHead(ctx, account)
	if err != nil {
		t.Fatal(err)
	}
	moved, err := store.DemoActivity(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) == 0 {
		t.Fatal("nothing moved")
	}
	// One wake-up on the account's channel, one on every account's (which
	// names the account).
	woken := map[string]int{}
	for range 2 {
		select {
		case e := <-events:
			if e.Kind != db.FeedChange || e.Change.ID != "" {
				t.Fatalf("event %+v %+v", e, e.Change)
			}
			woken[e.Change.AccountID]++
		case <-time.After(5 * time.Second):
			t.Fatal("no wake-up heard")
		}
	}
	if woken[account] != 2 {
		t.Fatalf("wake-ups %v", woken)
	}
	select {
	case e := <-events:
		t.Fatalf("a third wake-up %+v", e)
	case <-time.After(200 * time.Millisecond):
	}
	logged, _, err := store.ReadAccountChangeLog(ctx, account, head, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) != len(moved) {
		t.Fatalf("%d moved, %d logged", len(moved), len(logged))
	}
	for i := range logged {
		c := db.ChangeOf(&logged[i])
		if c.Type != "container" || c.Op != "UPDATE" || c.AccountID != account || c.Parent == "" || len(c.Columns) == 0 || c.Log == 0 {
			t.Fatalf("change %+v", c)
		}
		if _, ok := c.Was["current_status"]; !ok {
			t.Errorf("no previous status in %+v", c)
		}
	}
}
