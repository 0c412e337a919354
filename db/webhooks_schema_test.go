package db_test

import (
	"context"
	"testing"

	"shipgraph/db/dbtest"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"
)

// The webhook tables hold their keys: a notification raised twice for one
// change is refused, and deleting a webhook removes its notifications and
// their attempts.
func TestWebhookTablesKeys(t *testing.T) {
	ctx := context.Background()
	x, err := sqlx.Open("postgres", dbtest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	var acct, hook, note string
	if err := x.QueryRowContext(ctx, `INSERT INTO accounts (slug, company_name) VALUES ('wh', 'WH') RETURNING id`).Scan(&acct); err != nil {
		t.Fatal(err)
	}
	if err := x.QueryRowContext(ctx, `INSERT INTO webhooks (account_id, url, events, secret) VALUES ($1, 'https://example.com/h', '{container.updated}', 'abc') RETURNING id`, acct).Scan(&hook); err != nil {
		t.Fatal(err)
	}
	ins := `INSERT INTO webhook_notifications (account_id, webhook_id, event, change_id, reference_type, reference_id, payload)
		VALUES ($1, $2, 'container.updated', 7, 'container', gen_random_uuid(), '{"changeset":{}}') RETURNING id`
	if err := x.QueryRowContext(ctx, ins, acct, hook).Scan(&note); err != nil {
		t.Fatal(err)
	}
	if _, err := x.ExecContext(ctx, ins, acct, hook); err == nil {
		t.Fatal("the same change and event raised twice for one webhook was accepted")
	}
	if _, err := x.ExecContext(ctx, `INSERT INTO webhook_delivery_attempts (account_id, notification_id, duration_ms, status_code) VALUES ($1, $2, 12, 500)`, acct, note); err != nil {
		t.Fatal(err)
	}
	if _, err := x.ExecContext(ctx, `UPDATE webhook_notifications SET delivery_status = 'lost' WHERE id = $1`, note); err == nil {
		t.Fatal("an unknown delivery_status was accepted")
	}
	if _, err := x.ExecContext(ctx, `DELETE FROM webhooks WHERE id = $1`, hook); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := x.GetContext(ctx, &n, `SELECT (SELECT count(*) FROM webhook_notifications) + (SELECT count(*) FROM webhook_delivery_attempts)`); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d notifications and attempts outlived their webhook", n)
	}
}
