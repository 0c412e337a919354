package db_test

import (
	"context"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/db/seed"
)

// The demo activity moves containers along their journey, and the change
// feed hears it (the seeder's bulk load, on the other hand, is silent).
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
	moved, err := store.DemoActivity(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) == 0 {
		t.Fatal("nothing moved")
	}
	for range moved {
		select {
		case e := <-events:
			c := e.Change
			if e.Kind != db.FeedChange || c.Type != "container" || c.Op != "UPDATE" || c.AccountID != account || c.Parent == "" || len(c.Columns) == 0 {
				t.Fatalf("event %+v %+v", e, c)
			}
			if _, ok := c.Was["current_status"]; !ok {
				t.Errorf("no previous status in %+v", c)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no change heard")
		}
	}
}
