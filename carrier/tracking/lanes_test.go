package tracking_test

import (
	"testing"

	"github.com/lib/pq"
)

// TestLanesWriteAccountsTogether: with one lane, the polls of many
// accounts that finish together are written by shared transactions on
// plain PostgreSQL (requests of several accounts with one xmin); on Citus
// too every request is tracked once.
func TestLanesWriteAccountsTogether(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var ids []string
	for i, n := range tracked(e) {
		if i == 24 {
			break
		}
		e.acct = newAccount(e, i)
		ids = append(ids, e.request(n.RequestType, n.RequestNumber, n.SCAC))
	}
	c := e.config()
	c.Writers = 1
	e.engine(c)
	for _, id := range ids {
		if r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" }); r.ShipmentID == nil {
			t.Fatalf("request %s: %+v, want tracked", id, r)
		}
	}
	if got := e.count(`SELECT count(*) FROM shipments WHERE account_id IN (SELECT account_id FROM tracking_requests WHERE id = ANY($1))`,
		pq.StringArray(ids)); got != len(ids) {
		t.Fatalf("%d shipments for %d requests of one each", got, len(ids))
	}
	if !e.store.GroupsAccounts() {
		return // Citus: one account a transaction; xmin is each worker's own, not comparable across shards
	}
	if e.count(`SELECT count(*) FROM (SELECT xmin::text FROM tracking_requests WHERE id = ANY($1)
		GROUP BY 1 HAVING count(DISTINCT account_id) > 1) x`, pq.StringArray(ids)) == 0 {
		t.Fatal("every account's polls were written by a transaction of their own")
	}
}
