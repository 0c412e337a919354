package db

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/lib/pq"

	"shipgraph/model"
)

// Data sync destinations and their tables' positions (migration 00043).
// The sealed URL is written here and read only by the sync worker
// (SyncDestinationSecret): the API's reads leave it out.

// SyncDestination is one destination of an account's data sync.
type SyncDestination = model.SyncDestination

// SyncTableStatus is where one table of a destination stands.
type SyncTableStatus = model.SyncTableStatus

const syncDestCols = `d.account_id::text, d.id::text, d.name, d.kind, d.url_display, d.tables, d.paused, d.failures, d.created_at, d.updated_at`

func scanSyncDest(row interface{ Scan(...any) error }) (*SyncDestination, error) {
	var d SyncDestination
	if err := row.Scan(&d.AccountID, &d.ID, &d.Name, &d.Kind, &d.URL, pq.Array(&d.Tables), &d.Paused, &d.Failures, &d.CreatedAt, &d.UpdatedAt); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, model.NotFound("sync destination")
		}
		return nil, mapErr(err)
	}
	return &d, nil
}

// CreateSyncDestination stores a destination with its sealed URL.
func (db *DB) CreateSyncDestination(ctx context.Context, d SyncDestination, sealed []byte) (*SyncDestination, error) {
	return scanSyncDest(db.write(d.AccountID).QueryRowxContext(ctx, `INSERT INTO sync_destinations AS d (account_id, name, kind, url_display, url_sealed, tables)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+syncDestCols, d.AccountID, d.Name, d.Kind, d.URL, sealed, pq.Array(d.Tables)))
}

// SyncDestinations lists the account's destinations, oldest first.
func (db *DB) SyncDestinations(ctx context.Context, accountID string) ([]SyncDestination, error) {
	rows, err := db.read(accountID).QueryxContext(ctx, `SELECT `+syncDestCols+` FROM sync_destinations d
WHERE d.account_id = $1 ORDER BY d.created_at, d.id`, accountID)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	var out []SyncDestination
	for rows.Next() {
		d, err := scanSyncDest(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, mapErr(rows.Err())
}

// GetSyncDestination is one of the account's destinations (not_found:
// none, or another account's).
func (db *DB) GetSyncDestination(ctx context.Context, accountID, id string) (*SyncDestination, error) {
	if !validUUID(id) {
		return nil, model.NotFound("sync destination")
	}
	return scanSyncDest(db.readPrimary(accountID).QueryRowxContext(ctx, `SELECT `+syncDestCols+` FROM sync_destinations d
WHERE d.account_id = $1 AND d.id = $2`, accountID, id))
}

// SyncDestinationSecret is the destination's sealed URL (the worker's).
func (db *DB) SyncDestinationSecret(ctx context.Context, accountID, id string) ([]byte, error) {
	var b []byte
	err := db.readPrimary(accountID).QueryRowxContext(ctx, `SELECT url_sealed FROM sync_destinations WHERE account_id = $1 AND id = $2`, accountID, id).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, model.NotFound("sync destination")
	}
	return b, mapErr(err)
}

// PauseSyncDestination pauses or resumes a destination.
func (db *DB) PauseSyncDestination(ctx context.Context, accountID, id string, paused bool) (*SyncDestination, error) {
	if !validUUID(id) {
		return nil, model.NotFound("sync destination")
	}
	return scanSyncDest(db.write(accountID).QueryRowxContext(ctx, `UPDATE sync_destinations d SET paused = $3, failures = 0, updated_at = now()
WHERE d.account_id = $1 AND d.id = $2 RETURNING `+syncDestCols, accountID, id, paused))
}

// ResyncSyncDestination forgets every table's position: the worker copies
// each table again from scratch.
func (db *DB) ResyncSyncDestination(ctx context.Context, accountID, id string) (*SyncDestination, error) {
	if !validUUID(id) {
		return nil, model.NotFound("sync destination")
	}
	var d *SyncDestination
	err := db.inTx(ctx, accountID, func(q ext) error {
		var err error
		d, err = scanSyncDest(q.QueryRowxContext(ctx, `UPDATE sync_destinations d SET failures = 0, updated_at = now()
WHERE d.account_id = $1 AND d.id = $2 RETURNING `+syncDestCols, accountID, id))
		if err != nil {
			return err
		}
		_, err = q.ExecContext(ctx, `DELETE FROM sync_table_status WHERE account_id = $1 AND destination_id = $2`, accountID, id)
		return mapErr(err)
	})
	return d, err
}

// DeleteSyncDestination removes a destination and its positions.
func (db *DB) DeleteSyncDestination(ctx context.Context, accountID, id string) error {
	if !validUUID(id) {
		return model.NotFound("sync destination")
	}
	res, err := db.write(accountID).ExecContext(ctx, `DELETE FROM sync_destinations WHERE account_id = $1 AND id = $2`, accountID, id)
	if err != nil {
		return mapErr(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return model.NotFound("sync destination")
	}
	return nil
}

const syncStatusCols = `table_name, phase, coalesce(backfill_head, -1), coalesce(backfill_after, ''), pos, rows_written,
coalesce(last_error, ''), last_error_at, synced_at, updated_at`

// SyncStatuses are the destination's tables' positions, creating the rows
// of tables (phase backfill) that have none.
func (db *DB) SyncStatuses(ctx context.Context, accountID, id string, tables []string) ([]SyncTableStatus, error) {
	if len(tables) > 0 {
		if _, err := db.write(accountID).ExecContext(ctx, `INSERT INTO sync_table_status (account_id, destination_id, table_name)
SELECT $1, $2, t FROM unnest($3::text[]) t ON CONFLICT DO NOTHING`, accountID, id, pq.Array(tables)); err != nil {
			return nil, mapErr(err)
		}
	}
	rows, err := db.write(accountID).QueryContext(ctx, `SELECT `+syncStatusCols+` FROM sync_table_status
WHERE account_id = $1 AND destination_id = $2 ORDER BY table_name`, accountID, id)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	var out []SyncTableStatus
	for rows.Next() {
		var s SyncTableStatus
		var errAt, synced sql.NullTime
		if err := rows.Scan(&s.Table, &s.Phase, &s.BackfillHead, &s.BackfillAfter, &s.Pos, &s.RowsWritten,
			&s.LastError, &errAt, &synced, &s.UpdatedAt); err != nil {
			return nil, mapErr(err)
		}
		s.LastErrorAt, s.SyncedAt = errAt.Time, synced.Time
		out = append(out, s)
	}
	return out, mapErr(rows.Err())
}

// SyncBackfillStarted records the log head a table's copy started at.
func (db *DB) SyncBackfillStarted(ctx context.Context, accountID, id, table string, head int64) error {
	_, err := db.write(accountID).ExecContext(ctx, `UPDATE sync_table_status SET backfill_head = $4, backfill_after = NULL, updated_at = now()
WHERE account_id = $1 AND destination_id = $2 AND table_name = $3 AND phase = 'backfill'`, accountID, id, table, head)
	return mapErr(err)
}

// SyncBackfillPage records a copied page: the last key copied, or, when
// done, the table following the log from the head its copy started at.
func (db *DB) SyncBackfillPage(ctx context.Context, accountID, id, table, after string, rows int, done bool, at time.Time) error {
	var err error
	if done {
		_, err = db.write(accountID).ExecContext(ctx, `UPDATE sync_table_status SET phase = 'follow', pos = backfill_head, backfill_after = NULL,
rows_written = rows_written + $4, last_error = NULL, synced_at = $5, updated_at = now()
WHERE account_id = $1 AND destination_id = $2 AND table_name = $3 AND phase = 'backfill'`, accountID, id, table, rows, at)
	} else {
		_, err = db.write(accountID).ExecContext(ctx, `UPDATE sync_table_status SET backfill_after = $4, rows_written = rows_written + $5,
last_error = NULL, updated_at = now()
WHERE account_id = $1 AND destination_id = $2 AND table_name = $3 AND phase = 'backfill'`, accountID, id, table, after, rows)
	}
	return mapErr(err)
}

// SyncAdvance moves a following table from position from to to, if it is
// still at from (false: it moved, or was reset, meanwhile).
func (db *DB) SyncAdvance(ctx context.Context, accountID, id, table string, from, to int64, rows int, at time.Time) (bool, error) {
	res, err := db.write(accountID).ExecContext(ctx, `UPDATE sync_table_status SET pos = $5, rows_written = rows_written + $6,
last_error = NULL, synced_at = $7, updated_at = now()
WHERE account_id = $1 AND destination_id = $2 AND table_name = $3 AND phase = 'follow' AND pos = $4`, accountID, id, table, from, to, rows, at)
	if err != nil {
		return false, mapErr(err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// SyncFailed records an error on the destination's tables and counts a
// failure (the worker's backoff); it returns the failures in a row.
func (db *DB) SyncFailed(ctx context.Context, accountID, id string, tables []string, msg string, at time.Time) (int, error) {
	var n int
	err := db.inTx(ctx, accountID, func(q ext) error {
		if err := q.QueryRowxContext(ctx, `UPDATE sync_destinations SET failures = failures + 1
WHERE account_id = $1 AND id = $2 RETURNING failures`, accountID, id).Scan(&n); err != nil {
			return mapErr(err)
		}
		_, err := q.ExecContext(ctx, `UPDATE sync_table_status SET last_error = $4, last_error_at = $5, updated_at = now()
WHERE account_id = $1 AND destination_id = $2 AND table_name = ANY($3::text[])`, accountID, id, pq.Array(tables), msg, at)
		return mapErr(err)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return 0, model.NotFound("sync destination")
	}
	return n, err
}

// SyncSucceeded clears the destination's failure count.
func (db *DB) SyncSucceeded(ctx context.Context, accountID, id string) error {
	_, err := db.write(accountID).ExecContext(ctx, `UPDATE sync_destinations SET failures = 0
WHERE account_id = $1 AND id = $2 AND failures <> 0`, accountID, id)
	return mapErr(err)
}

// SyncLease takes or renews the destination's lease for owner until
// until, unless another owner holds it past now: one worker per
// destination at a time across instances.
func (db *DB) SyncLease(ctx context.Context, accountID, id, owner string, now, until time.Time) (bool, error) {
	res, err := db.write(accountID).ExecContext(ctx, `UPDATE sync_destinations SET lease_owner = $3, lease_until = $5
WHERE account_id = $1 AND id = $2 AND (lease_owner IS NULL OR lease_owner = $3 OR lease_until < $4)`, accountID, id, owner, now, until)
	if err != nil {
		return false, mapErr(err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// SyncRelease gives the lease back.
func (db *DB) SyncRelease(ctx context.Context, accountID, id, owner string) error {
	_, err := db.write(accountID).ExecContext(ctx, `UPDATE sync_destinations SET lease_owner = NULL, lease_until = NULL
WHERE account_id = $1 AND id = $2 AND lease_owner = $3`, accountID, id, owner)
	return mapErr(err)
}
