package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/lib/pq"
)

// The durable change log (migration 00008): the change triggers append one
// row per committed change of shipments, containers, custom fields, custom
// field definitions and options, and documents, in the writing transaction.
//
// Every row has a position in its account's log (migration 00035): 1, 2,
// 3… given at commit (migration 00056: a row is logged without one) by a
// deferred trigger that takes the account's row of change_log_heads,
// numbers the transaction's rows after it and keeps that row locked until
// the transaction ends. So the positions of one account commit in the
// order they were given, without gaps: a reader that saw position n has
// seen every position below it, on
// plain PostgreSQL and on a distributed one (Citus) alike, whichever node
// holds the account's shard and after it moved (the rows carry their
// positions). Account readers (subscriptions) order and resume by
// position; nothing is ever held back from them.
//
// A row's public id (LoggedChange.ID) comes from an identity at INSERT
// time: unique across accounts, increasing in the order rows were written
// (not committed). A client resumes after an id: its row's position says
// where.
//
// Readers of every account (the webhook fan-out, the response cache's
// feed) keep a position per account, and find the accounts whose log
// moved in change_log_heads (ChangeLogHeads): no order across accounts is
// needed, nor kept.

// ChangeLogChannel is the NOTIFY channel woken when changes of any account
// may have been logged (the server sends it after a write commits:
// wakeup.go): the wake-up of cross-account readers such as the webhook
// dispatcher. Each account's own channel (ChangeChannel) is woken too.
const ChangeLogChannel = "shipgraph_change_log"

// LoggedChange is one row of the change log.
type LoggedChange struct {
	// ID is the public log id: unique, increasing in the order rows were
	// written (not committed).
	ID int64
	// Pos is the row's position in its account's log (1, 2, 3…), for
	// resuming after it.
	Pos       int64
	AccountID string
	// Type is shipment, container, custom_field, custom_field_definition,
	// custom_field_option or document.
	Type     string
	RecordID string
	// Op is INSERT, UPDATE or DELETE.
	Op string
	// Parent is the container's shipment, the custom field's entity, the
	// option's definition; "" for the others.
	Parent string
	// Changed names every column an UPDATE changed (updated_at included),
	// sorted; nil for INSERT and DELETE.
	Changed []string
	// Old and New are JSON objects of the changed columns' previous and new
	// values (as to_jsonb writes them); null for INSERT and DELETE.
	Old, New json.RawMessage
	LoggedAt time.Time
	// WAL is the primary's WAL insert position when the change was read
	// (0: unknown): the change's commit record is before it, so a replica
	// that replayed up to it has the change (WithReadAt).
	WAL uint64
	// WALAt is when WAL was read: a re-read waits for a replica until the
	// replica wait after it (WithReadAt).
	WALAt time.Time
}

// DefaultChangeLogPage is the page size of a read with limit <= 0.
const DefaultChangeLogPage = 1000

const changeLogCols = `l.pos, l.id, l.account_id, l.record_type, l.record_id, l.op,
	coalesce(l.parent_id::text, ''), l.changed, l.old, l.new, l.logged_at`

// scanChange reads one row of changeLogCols, preceded by the WAL insert
// position and the barrier column.
func scanChange(rows *sql.Rows, c *LoggedChange, barrier *int64, readAt time.Time) error {
	var (
		wal                   int64
		pos, id               sql.NullInt64
		account, typ, rid, op sql.NullString
		oldv, newv            []byte
		at                    sql.NullTime
	)
	if err := rows.Scan(&wal, barrier, &pos, &id, &account, &typ, &rid, &op, &c.Parent, pq.Array(&c.Changed), &oldv, &newv, &at); err != nil {
		return mapErr(err)
	}
	c.ID, c.Pos = id.Int64, pos.Int64
	c.AccountID, c.Type, c.RecordID, c.Op = account.String, typ.String, rid.String, op.String
	if oldv != nil {
		c.Old = json.RawMessage(oldv)
	}
	if newv != nil {
		c.New = json.RawMessage(newv)
	}
	c.LoggedAt = at.Time
	c.WAL, c.WALAt = uint64(wal), readAt
	return nil
}

// AccountChangeLogPage is one read of an account's log.
type AccountChangeLogPage struct {
	Changes []LoggedChange
	// Next is the position to read after: the last change's, or the
	// position read after when there were none.
	Next int64
	// More: the page was full; read again at once.
	More bool
	// Gap: positions between the one read after and the last change
	// returned are missing: pruned (positions are dense when committed).
	// Whatever was derived from the account's log must be re-read.
	Gap bool
	// Barrier, when not 0, is the WAL position the synchronous standby
	// must have before the changes go out to clients (AwaitStandby): the
	// server runs with one. 0: it does not (or the store is on Citus,
	// whose nodes' standbys are not the coordinator's: docs/decisions.md).
	Barrier uint64
}

// ReadAccountChangeLog reads one account's changes after position after,
// in order, up to limit of them (subscriptions).
func (db *DB) ReadAccountChangeLog(ctx context.Context, accountID string, after int64, limit int) ([]LoggedChange, int64, error) {
	p, err := db.ReadAccountChangeLogPage(ctx, accountID, after, limit)
	return p.Changes, p.Next, err
}

// ReadAccountChangeLogPage reads one account's changes after position
// after. Every row it returns was committed, and so was every position
// below it: a position is taken under the account's head row lock, which
// its transaction holds until it ends.
func (db *DB) ReadAccountChangeLogPage(ctx context.Context, accountID string, after int64, limit int) (AccountChangeLogPage, error) {
	if limit <= 0 {
		limit = DefaultChangeLogPage
	}
	// The WAL insert position, read after the statement's snapshot was
	// taken, is past the commit record of every row returned (each one's
	// transaction ended before the snapshot): the position a re-read of
	// those rows' records needs a replica to have replayed. The insert
	// position, not pg_current_wal_lsn (the written one): with
	// synchronous_commit off a commit may be inserted and not yet written.
	return readLogPage(ctx, db.read(accountID), `(pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::int8`, db.barrierCol(), accountID, after, limit, true)
}

// barrierCol is a change-log read's barrier column (syncBarrierSQL): 0 on
// Citus, where the log is on the workers and a barrier would be the
// coordinator's.
func (db *DB) barrierCol() string {
	if !db.plain {
		return `0::int8`
	}
	return syncBarrierSQL
}

// changeLogPageFrom is a page's read after its columns: the account's
// positions index (partial, numbered rows only, migration 00066: pos > $2
// implies pos IS NOT NULL).
const changeLogPageFrom = `
FROM change_log l WHERE l.account_id = $1 AND l.pos > $2 ORDER BY l.pos LIMIT $3`

// readLogPage reads one account's changes after position after through
// q, with lsn the statement's first column (the WAL position a re-read
// needs, or 0 where none is kept) and barrier its second (the page's
// Barrier: barrierCol); stamp: the changes carry when they were read (the
// statement's end).
func readLogPage(ctx context.Context, q ext, lsn, barrier, accountID string, after int64, limit int, stamp bool) (AccountChangeLogPage, error) {
	page := AccountChangeLogPage{Next: after}
	rows, err := q.QueryContext(ctx, `SELECT `+lsn+`, `+barrier+`, `+changeLogCols+changeLogPageFrom, accountID, after, limit)
	if err != nil {
		return page, mapErr(err)
	}
	defer rows.Close()
	var readAt time.Time
	if stamp {
		readAt = time.Now()
	}
	for rows.Next() {
		var c LoggedChange
		var barrier int64
		if err := scanChange(rows, &c, &barrier, readAt); err != nil {
			return AccountChangeLogPage{Next: after}, err
		}
		page.Barrier = max(page.Barrier, uint64(barrier))
		if c.Pos != page.Next+1 {
			page.Gap = true
		}
		page.Changes = append(page.Changes, c)
		page.Next = c.Pos
	}
	if err := rows.Err(); err != nil {
		return AccountChangeLogPage{Next: after}, mapErr(err)
	}
	page.More = len(page.Changes) == limit
	return page, nil
}

// AccountChangeLogHead is the account's last committed position (0: it
// never logged a change): every change committed after it returns is
// after it, exactly.
func (db *DB) AccountChangeLogHead(ctx context.Context, accountID string) (int64, error) {
	heads, err := db.AccountChangeLogHeads(ctx, []string{accountID})
	return heads[accountID], err
}

// AccountChangeLogHeads is AccountChangeLogHead of several accounts in
// one statement (an account with no change is missing). Both read the
// primary (readPrimary): the response cache records the head as a write's
// position and the hub starts subscriptions from it, so a lagging replica
// must not make it older; the request is not marked as a writer.
func (db *DB) AccountChangeLogHeads(ctx context.Context, accountIDs []string) (map[string]int64, error) {
	rows, err := db.readPrimary("").QueryContext(ctx, `SELECT account_id::text, pos FROM change_log_heads WHERE account_id = ANY($1::uuid[])`,
		pq.Array(validUUIDs(accountIDs)))
	return scanHeads(rows, err)
}

// AccountChangeLogStart is AccountChangeLogHead for a reader that hands
// out the changes after the head (a subscription starts there), with the
// read's barrier (AccountChangeLogPage.Barrier): a head counting a change
// the synchronous standby lacks would make the reader skip the change a
// promoted standby logs at that position instead.
func (db *DB) AccountChangeLogStart(ctx context.Context, accountID string) (head int64, barrier uint64, err error) {
	if !validUUID(accountID) {
		return 0, 0, nil
	}
	var b int64
	err = db.readPrimary("").QueryRowxContext(ctx, `SELECT pos, `+db.barrierCol()+` FROM change_log_heads WHERE account_id = $1`, accountID).Scan(&head, &b)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, mapErr(err)
	}
	return head, uint64(b), nil
}

// changeLogPosSQL finds a public id's position by the primary key.
const changeLogPosSQL = `SELECT pos FROM change_log WHERE account_id = $1 AND id = $2`

// AccountChangeLogPos is the position in the account's log of the change
// with the public log id; false when the account has no such change
// (another account's, pruned, or never written).
func (db *DB) AccountChangeLogPos(ctx context.Context, accountID string, id int64) (int64, bool, error) {
	if !validUUID(accountID) {
		return 0, false, nil
	}
	var pos int64
	err := db.read(accountID).QueryRowxContext(ctx, changeLogPosSQL, accountID, id).Scan(&pos)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, mapErr(err)
	}
	return pos, true, nil
}

// ChangeLogHeads returns the head of every account that ever logged a
// change: readers of every account (cross-tenant by design, as
// ReadAccountChangeLog's callers route what they read by account) find
// there the accounts whose log moved past their position. One row per
// account, read in full: its cost grows with the number of accounts, not
// of changes.
func (db *DB) ChangeLogHeads(ctx context.Context) (map[string]int64, error) {
	rows, err := db.read("").QueryContext(ctx, `SELECT account_id::text, pos FROM change_log_heads`)
	return scanHeads(rows, err)
}

// scanHeads reads rows of (account_id, pos) into a map by account.
func scanHeads(rows *sql.Rows, err error) (map[string]int64, error) {
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var a string
		var pos int64
		if err := rows.Scan(&a, &pos); err != nil {
			return nil, mapErr(err)
		}
		out[a] = pos
	}
	return out, mapErr(rows.Err())
}
