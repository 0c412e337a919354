package db

import (
	"testing"
	"time"
)

// Only plain reads may go to a replica: writes, data-modifying WITHs and
// row locks stay on the primary.
func TestIsRead(t *testing.T) {
	for q, want := range map[string]bool{
		"SELECT s.id FROM shipments s WHERE s.account_id = $1": true,
		"\n\t\tselect 1": true,
		"WITH page AS (SELECT id FROM shipments) SELECT * FROM page":                              true,
		"SELECT s.updated_at FROM shipments s":                                                    true,
		"(SELECT 1) UNION (SELECT 2)":                                                             true,
		"INSERT INTO uploads (key) VALUES ($1) RETURNING id":                                      false,
		"WITH d AS (UPDATE documents SET name = $1 RETURNING id) SELECT id FROM d":                false,
		"WITH cf AS (\n\tDELETE FROM custom_fields cf WHERE cf.id = $1 RETURNING cf.id) SELECT 1": false,
		"SELECT o.id FROM custom_field_options o WHERE o.id = $1 FOR UPDATE OF o":                 false,
		"SELECT o.id FROM custom_field_options o FOR SHARE":                                       false,
		"UPDATE api_tokens SET last_used_at = now()":                                              false,
		"SELECT nextval('s')": false,
		"BEGIN":               false,
	} {
		if got := isRead(q); got != want {
			t.Errorf("isRead(%q) = %v, want %v", q, got, want)
		}
	}
}

// A replica has a write when it replayed past it; a position just past a
// WAL page (or segment) header is reached at the page's start.
func TestCaughtUp(t *testing.T) {
	for _, c := range []struct {
		replay, need uint64
		want         bool
	}{
		{100, 100, true},
		{101, 100, true},
		{99, 100, false},
		{0, 0, true},
		{3 * walPageSize, 3*walPageSize + walShortHeader, true},
		{3*walPageSize - 8, 3*walPageSize + walShortHeader, false},
		{2 * walSegmentSize, 2*walSegmentSize + walLongHeader, true},
		{2*walSegmentSize + 16, 2*walSegmentSize + walLongHeader, true},
		{2*walSegmentSize - 8, 2*walSegmentSize + walLongHeader, false},
	} {
		if got := caughtUp(c.replay, c.need); got != c.want {
			t.Errorf("caughtUp(%d, %d) = %v, want %v", c.replay, c.need, got, c.want)
		}
	}
}

// Lag is the age of the oldest primary position the replica has not
// replayed.
func TestLagOf(t *testing.T) {
	now := time.Now()
	r := &router{samples: []walSample{{now.Add(-3 * time.Second), 100}, {now.Add(-2 * time.Second), 200}, {now.Add(-time.Second), 300}}}
	for replay, want := range map[uint64]time.Duration{50: 3 * time.Second, 100: 2 * time.Second, 250: time.Second, 300: 0, 400: 0} {
		if got := r.lagOf(replay, now); got != want {
			t.Errorf("lagOf(%d) = %v, want %v", replay, got, want)
		}
	}
}

// A replica's name in /readyz and logs has no password.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://app:secret@replica1:5432/shipgraph?sslmode=require": "replica1:5432/shipgraph",
		"postgres://postgres@/shipgraph?host=%2Ftmp%2Fsock&port=5432":   "/tmp/sock:5432/shipgraph",
		"host=replica2 dbname=shipgraph password=secret":                "replica2/shipgraph",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}
