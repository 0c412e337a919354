package db

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jmoiron/sqlx"
)

// DemoMove is one container DemoActivity moved.
type DemoMove struct {
	ID     string `db:"id"`
	Number string `db:"number"`
	Status string `db:"current_status"`
	// AccountID is the demo account's (not shown: the wake-up's).
	AccountID string `db:"account_id" json:"-"`
}

// demoSteps moves a container one step along its journey at the port of
// discharge, setting what a terminal reports at that step. Anything not
// on the way round starts again on the ship.
var demoSteps = map[string]string{
	"on_ship": `current_status = 'not_available', pod_arrived_at = now(), pod_discharged_at = now(),
		availability_known = true, available_for_pickup = false, terminal_checked_at = now(),
		holds_at_pod_terminal = '[{"name":"customs","status":"hold","description":"Customs exam pending"}]',
		location_at_pod_terminal = 'Yard ' || (1 + floor(random() * 9))::int`,
	"not_available": `current_status = 'available', available_for_pickup = true, terminal_checked_at = now(),
		holds_at_pod_terminal = '[]', pickup_lfd_terminal = date_trunc('day', now()) + interval '4 days'`,
	"available": `current_status = 'picked_up', available_for_pickup = false, pod_full_out_at = now(),
		terminal_checked_at = now(), location_at_pod_terminal = NULL`,
	"picked_up": `current_status = 'empty_returned', empty_terminated_at = now()`,
	"": `current_status = 'on_ship', pod_arrived_at = NULL, pod_discharged_at = NULL, pod_full_out_at = NULL,
		empty_terminated_at = NULL, availability_known = false, available_for_pickup = NULL,
		holds_at_pod_terminal = '[]', pickup_lfd_terminal = NULL, location_at_pod_terminal = NULL,
		terminal_checked_at = now()`,
}

// DemoActivity moves up to n of a dozen demo containers (the first
// account's, by slug) one step along their journey, in one transaction,
// and returns them as they are now. For live demos only: it changes data.
func (db *DB) DemoActivity(ctx context.Context, n int) ([]DemoMove, error) {
	var moved []DemoMove
	err := db.inTx(ctx, "", func(q ext) error {
		// The account first, in a statement of its own: with the account
		// picked by a subquery Citus cannot route the reads and writes below
		// to its shard (they went to every shard).
		var account string
		if err := sqlx.GetContext(ctx, q, &account, `SELECT id FROM accounts ORDER BY slug LIMIT 1`); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return err
		}
		var picked []DemoMove
		if err := sqlx.SelectContext(ctx, q, &picked, `
			SELECT id, number, current_status, account_id FROM (
				SELECT c.id, c.number, c.current_status, c.account_id FROM containers c
				WHERE c.account_id = $2
				ORDER BY c.id LIMIT 12) demo
			ORDER BY random() LIMIT $1
			FOR UPDATE`, n, account); err != nil {
			return err
		}
		for _, c := range picked {
			set, ok := demoSteps[c.Status]
			if !ok {
				set = demoSteps[""]
			}
			var m DemoMove
			if err := sqlx.GetContext(ctx, q, &m, `UPDATE containers SET `+set+`, updated_at = now()
				WHERE account_id = $2 AND id = $1
				RETURNING id, number, current_status, account_id`, c.ID, account); err != nil {
				return err
			}
			moved = append(moved, m)
		}
		return nil
	})
	if err == nil && len(moved) > 0 {
		// Written as no one account's: the readers are woken here.
		db.w.wrote(moved[0].AccountID)
	}
	return moved, mapErr(err)
}
