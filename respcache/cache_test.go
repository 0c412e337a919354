package respcache_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"shipgraph/respcache"
)

func entry(n int) *respcache.Entry {
	return &respcache.Entry{Status: 200, Body: bytes.Repeat([]byte("x"), n), ETag: `"e"`}
}

// TestBoundAndLRU: the cache stays within its bytes, dropping the least
// recently used entry first; an entry larger than an eighth is not kept.
func TestBoundAndLRU(t *testing.T) {
	now := time.Now()
	c := respcache.New(64<<10, 0)
	c.SetLive(true)
	g := c.Gen("a")
	for i := range 6 {
		if !c.Put(fmt.Sprint(i), "a", 1, g, entry(7000), now) {
			t.Fatalf("entry %d not kept", i)
		}
	}
	if c.Get("0", now) == nil { // 0 is now the most recently used
		t.Fatal("entry 0 missing")
	}
	for i := 6; i < 12; i++ {
		c.Put(fmt.Sprint(i), "a", 1, g, entry(7000), now)
	}
	if c.Size() > 64<<10 {
		t.Errorf("size %d over the bound", c.Size())
	}
	if c.Get("0", now) == nil {
		t.Error("the recently used entry 0 was evicted")
	}
	if c.Get("1", now) != nil {
		t.Error("the least recently used entry 1 is still there")
	}
	if c.Put("big", "a", 1, g, entry(9000), now) {
		t.Error("an entry past an eighth of the cache was kept")
	}
}

// TestInvalidate: a change drops only its account's entries that read its
// type, and a read begun before it is not kept; the max age and a cache
// that is not live keep nothing.
func TestInvalidate(t *testing.T) {
	now := time.Now()
	c := respcache.New(1<<20, time.Minute)
	c.SetLive(true)
	ga, gb := c.Gen("a"), c.Gen("b")
	c.Put("a1", "a", 1, ga, entry(10), now)
	c.Put("a2", "a", 2, ga, entry(10), now)
	c.Put("b1", "b", 1, gb, entry(10), now)
	inflight := c.Gen("a")
	if n := c.Invalidate("a", 1); n != 1 {
		t.Fatalf("dropped %d, want 1", n)
	}
	if c.Get("a1", now) != nil || c.Get("a2", now) == nil || c.Get("b1", now) == nil {
		t.Error("the wrong entries were dropped")
	}
	if c.Put("a3", "a", 2, inflight, entry(10), now) {
		t.Error("a read begun before the change was kept")
	}
	if !c.Put("a3", "a", 2, c.Gen("a"), entry(10), now) {
		t.Error("a read begun after the change was not kept")
	}
	if c.Get("a3", now.Add(2*time.Minute)) != nil {
		t.Error("an entry past its max age was served")
	}
	g := c.Gen("b")
	c.Flush()
	if c.Len() != 0 || c.Put("b2", "b", 1, g, entry(10), now) {
		t.Error("a flush kept entries, or a read begun before it")
	}
	c.SetLive(false)
	if c.Put("b3", "b", 1, c.Gen("b"), entry(10), now) || c.Get("b3", now) != nil {
		t.Error("a cache that is not live kept or served")
	}
}
