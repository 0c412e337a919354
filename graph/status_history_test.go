package graph_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"shipgraph/model"
	"shipgraph/testkit"
)

// statusTruth is a container's status at $2, written per container (the
// store computes it for all days in one pass of stretches): its latest
// actual transport event with a status at or before $2, else new; counted
// when it was created by then.
const statusTruth = `
SELECT upper(coalesce((
         SELECT m.status FROM transport_events te
         JOIN unnest($3::text[], $4::text[]) AS m (event, status) ON m.event = te.event
         WHERE te.account_id = c.account_id AND te.container_id = c.id AND te.event_at <= $2
         ORDER BY te.event_at DESC, te.id DESC LIMIT 1), 'new')) AS status, count(*)
FROM containers c WHERE c.account_id = $1 AND c.created_at <= $2 GROUP BY 1`

// TestContainerStatusHistory: each day's counts equal the status of every
// container at the day's end read one by one, for two accounts and keys;
// days not begun are left out and bad arguments are refused.
func TestContainerStatusHistory(t *testing.T) {
	t.Parallel()
	env := testkit.New(t, testkit.Options{Shipments: 120})
	var n int
	// Containers created over the last six weeks, so that the days differ.
	// (A hash of the id from a time given as a parameter, not random() or
	// now(): Citus refuses volatile functions, and stable ones applied to a
	// column, in an UPDATE of a distributed table.)
	env.SQL(t, &n, `WITH u AS (UPDATE containers SET created_at = to_timestamp($1::float8 - abs(hashtext(id::text)) % 3628800)
		RETURNING 1) SELECT count(*) FROM u`, time.Now().Unix())
	var events, statuses []string
	for raw, s := range model.ContainerStatusAfter {
		events = append(events, "container.transport."+raw)
		statuses = append(statuses, string(s))
	}
	from := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -29)
	const q = `query($from: DateTime!, $days: Int!) { containerStatusHistory(from: $from, days: $days) { day at counts { status count } } }`
	for _, who := range []string{acmeAdmin, globexViewer} {
		var account string
		env.SQL(t, &account, `SELECT id FROM accounts WHERE slug = $1`, strings.Split(who, "/")[0])
		var data struct {
			ContainerStatusHistory []struct {
				Day, At time.Time
				Counts  []struct {
					Status string
					Count  int
				}
			}
		}
		env.Must(t, env.Key(t, who), q, map[string]any{"from": from, "days": 40}, &data)
		days := data.ContainerStatusHistory
		if len(days) != 30 {
			t.Fatalf("%s: %d days, want 30 (the ten not begun left out)", who, len(days))
		}
		varied, statusesSeen := false, map[string]bool{}
		for i, d := range days {
			if want := from.AddDate(0, 0, i); !d.Day.Equal(want) {
				t.Fatalf("%s: day %d starts %v, want %v", who, i, d.Day, want)
			}
			got := map[string]int{}
			for _, c := range d.Counts {
				if c.Count > 0 {
					got[c.Status] = c.Count
					statusesSeen[c.Status] = true
				}
			}
			want := map[string]int{}
			for _, r := range env.Rows(t, statusTruth, account, d.At, pq.Array(events), pq.Array(statuses)) {
				fmt.Sscan(r[1], &n)
				want[r[0]] = n
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s: day %d (%v): got %v, want %v", who, i, d.At, got, want)
			}
			if i > 0 && fmt.Sprint(got) != fmt.Sprint(countsOf(days[i-1].Counts)) {
				varied = true
			}
			if len(d.Counts) != len(days[0].Counts) {
				t.Fatalf("%s: day %d has %d statuses, day 0 %d: every status on every day", who, i, len(d.Counts), len(days[0].Counts))
			}
		}
		if !varied || len(statusesSeen) < 3 {
			t.Fatalf("%s: the seeded history does not vary (%v): the test needs days that differ", who, statusesSeen)
		}
		if last := days[len(days)-1].At; time.Since(last) > time.Minute || last.After(time.Now()) {
			t.Fatalf("%s: the current day ends at %v, want now", who, last)
		}
	}
	for _, bad := range []map[string]any{
		{"from": from, "days": 0},
		{"from": from, "days": model.MaxStatusHistoryDays + 1},
		{"from": time.Now().Add(48 * time.Hour), "days": 3},
	} {
		res := env.Do(t, env.Key(t, acmeAdmin), q, bad)
		if len(res.Errors) == 0 || res.Errors[0].Code() != "BAD_USER_INPUT" {
			t.Fatalf("%v: want BAD_USER_INPUT, got %+v", bad, res.Errors)
		}
	}
}

func countsOf(cs []struct {
	Status string
	Count  int
}) map[string]int {
	m := map[string]int{}
	for _, c := range cs {
		if c.Count > 0 {
			m[c.Status] = c.Count
		}
	}
	return m
}
