package db_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shipgraph/model"
)

// TestReferenceCache: with a TTL, reference rows are read once and served
// from memory until it passes; they come whole whatever the column
// selection; each read gets its own copies; ids that do not exist are read
// again; and without a TTL every read goes to the database.
func TestReferenceCache(t *testing.T) {
	f := newFixture(t)
	read := func(want int64, what string) []*model.Terminal {
		t.Helper()
		ctx, n := counting()
		got, err := f.DB.Select(model.Selection{"Terminal": {"name"}}).TerminalsByIDs(ctx, []string{f.TermLA, f.TermOK})
		if err != nil {
			t.Fatal(err)
		}
		if n.Load() != want {
			t.Errorf("%s: %d statements, want %d", what, n.Load(), want)
		}
		if len(got) != 2 {
			t.Fatalf("%s: %d terminals, want 2", what, len(got))
		}
		return got
	}

	read(1, "no TTL")
	read(1, "no TTL again")

	// The caches read an injected clock: time passes only when the test
	// moves it, so "within the TTL" holds however slow the machine is.
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	f.DB.SetReferenceClock(func() time.Time { return time.Unix(0, clock.Load()) })
	const ttl = 200 * time.Millisecond
	f.DB.SetReferenceTTL(ttl)
	first := read(1, "first read")
	for _, term := range first {
		if term.PortID == "" || term.FirmsCode == nil {
			t.Errorf("cached terminal %s read without every column: %+v", term.ID, term)
		}
	}
	first[0].Name = "changed by a request"
	again := read(0, "within the TTL")
	for _, term := range again {
		if term.Name == "changed by a request" {
			t.Errorf("a request's change to its record reached the cache")
		}
	}
	if again[0] == first[0] || again[1] == first[1] {
		t.Errorf("two reads share a record")
	}

	name := func(ts []*model.Terminal, id string) string {
		for _, term := range ts {
			if term.ID == id {
				return term.Name
			}
		}
		return ""
	}
	// An edit shows once the TTL has passed.
	f.exec(t, `UPDATE terminals SET name = 'Pier 400 (renamed)' WHERE id = $1`, f.TermLA)
	stale := read(0, "edited, within the TTL")
	clock.Add(int64(ttl - time.Nanosecond))
	if got := name(read(0, "edited, the TTL all but passed"), f.TermLA); got != "Pier 400" {
		t.Errorf("the TTL all but passed: %q, want the cached name", got)
	}
	clock.Add(int64(time.Nanosecond))
	fresh := read(1, "after the TTL")
	if name(stale, f.TermLA) != "Pier 400" || name(fresh, f.TermLA) != "Pier 400 (renamed)" {
		t.Errorf("names within and after the TTL: %q, %q", name(stale, f.TermLA), name(fresh, f.TermLA))
	}

	// Only the ids not held are read; unknown ids are not kept.
	ctx, n := counting()
	missing := "00000000-0000-0000-0000-000000000000"
	for range 2 {
		ports, err := f.DB.PortsByIDs(ctx, []string{f.PortLA, missing})
		if err != nil || len(ports) != 1 {
			t.Fatalf("ports: %v, %v", ports, err)
		}
	}
	if n.Load() != 2 {
		t.Errorf("a known and an unknown port read twice: %d statements, want 2 (the unknown id each time)", n.Load())
	}

	// Concurrent readers (go test -race).
	f.DB.SetReferenceTTL(time.Minute)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				ts, err := f.DB.TerminalsByIDs(ctx, []string{f.TermLA, f.TermOK})
				if err != nil || len(ts) != 2 {
					t.Errorf("concurrent read: %v, %v", ts, err)
					return
				}
				ts[0].Name = "mine"
			}
		})
	}
	wg.Wait()

	f.DB.SetReferenceTTL(0)
	read(1, "TTL off")
}
