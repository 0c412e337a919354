package db

import (
	"context"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"shipgraph/model"
)

// statusHistoryQuery counts an account's containers by status at the end
// of each day from $2 ($5 days; the last ends at $3, which may be earlier
// than a whole day), in one pass over the account's containers and actual
// transport events: each container is in "new" from its creation until
// its first event that sets a status, then in the status its latest such
// event sets (model.ContainerStatusAfter, passed as $4/$5 pairs). Each
// stretch in one status becomes +1 on the first day-end it covers and −1
// on the first it no longer does; the running sum per status is the count.
// Only the days where a count changes come back.
const statusHistoryQuery = `
WITH s AS (
        SELECT c.id AS cid, c.created_at AS born, '-infinity'::timestamptz AS at, 'new'::text AS status, 0 AS ord, c.id AS eid
        FROM containers c
        WHERE c.account_id = $1 AND c.created_at < $3
    UNION ALL
        SELECT te.container_id, c.created_at, te.event_at, m.status, 1, te.id
        FROM transport_events te
        JOIN containers c ON c.account_id = te.account_id AND c.id = te.container_id
        JOIN unnest($4::text[], $5::text[]) AS m (event, status) ON m.event = te.event
        WHERE te.account_id = $1 AND te.event_at < $3 AND c.created_at < $3
), iv AS (
    SELECT status, greatest(at, born) AS f, lead(at) OVER (PARTITION BY cid ORDER BY at, ord, eid) AS t
    FROM s
), ix AS (
    SELECT status,
           greatest(0, ceil(extract(epoch FROM f - $2::timestamptz) / 86400) - 1)::int AS i0,
           CASE WHEN t IS NULL THEN $6
                ELSE least($6, greatest(0, ceil(extract(epoch FROM t - $2::timestamptz) / 86400) - 1)) END::int AS i1
    FROM iv
), d AS (
    SELECT status, i0 AS i, 1 AS n FROM ix WHERE i0 < i1
    UNION ALL
    SELECT status, i1, -1 FROM ix WHERE i0 < i1 AND i1 < $6
)
SELECT i, status, (sum(sum(n)) OVER (PARTITION BY status ORDER BY i))::int AS n
FROM d GROUP BY status, i ORDER BY i, status`

// ContainerStatusHistory counts the account's containers by status at the
// end of each of days days from from (24 hours each); the last day ends at
// end (at most from + days × 24 h). Every status any day counts is on
// every day, in the order of model.ContainerStatuses.
func (db *DB) ContainerStatusHistory(ctx context.Context, accountID string, from, end time.Time, days int) ([]*model.ContainerStatusDay, error) {
	events := make([]string, 0, len(model.ContainerStatusAfter))
	statuses := make([]string, 0, len(model.ContainerStatusAfter))
	for raw, s := range model.ContainerStatusAfter {
		events = append(events, "container.transport."+raw)
		statuses = append(statuses, string(s))
	}
	var rows []statusDelta
	if err := sqlx.SelectContext(ctx, db.read(accountID), &rows, statusHistoryQuery,
		accountID, from, end, pq.Array(events), pq.Array(statuses), days); err != nil {
		return nil, err
	}
	var order []string
	for _, s := range model.ContainerStatuses.Values() {
		if slices.ContainsFunc(rows, func(r statusDelta) bool { return r.Status == s }) {
			order = append(order, s)
		}
	}
	out := make([]*model.ContainerStatusDay, days)
	now := map[string]int{}
	next := 0
	for i := range out {
		for ; next < len(rows) && rows[next].I == i; next++ {
			now[rows[next].Status] = rows[next].N
		}
		day := from.Add(time.Duration(i) * 24 * time.Hour)
		at := day.Add(24 * time.Hour)
		if at.After(end) {
			at = end
		}
		d := &model.ContainerStatusDay{Day: day, At: at, Counts: make([]*model.ContainerStatusCount, len(order))}
		for k, s := range order {
			d.Counts[k] = &model.ContainerStatusCount{Status: model.ContainerStatus(s), Count: now[s]}
		}
		out[i] = d
	}
	return out, nil
}

// statusDelta is one row of statusHistoryQuery: a status's count from day
// I on (until its next row).
type statusDelta struct {
	I      int    `db:"i"`
	Status string `db:"status"`
	N      int    `db:"n"`
}
