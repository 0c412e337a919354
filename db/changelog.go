package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"
)

// The durable change log (migration 00008): the change triggers append one
// row per committed change of shipments, containers, custom fields, custom
// field definitions and options, and documents, in the writing transaction.
//
// A row's public id (LoggedChange.ID) comes from a sequence at INSERT time,
// so ids do not commit in order: transaction A may take id 5, B id 6, and B
// commit first. A reader that went past 6 by id would lose 5 for ever.
// Readers here order and resume by Cursor, (xid, id) — xid is the writing
// transaction's id — and return only rows whose xid is below the xmin of
// the reading statement's snapshot: every transaction that could still add
// a row at or below such a position has ended, so nothing can appear
// behind a cursor once a reader returned it.
//
// The cost: a transaction that stays open after writing (or a prepared
// transaction) holds back every row logged by transactions that started
// writing after it, in every account, until it ends — any writing
// transaction of the PostgreSQL cluster, whatever its database, since
// transaction ids are the cluster's. Readers are delayed, never lose
// rows. Transactions that only read hold nothing back.

// ChangeLogChannel is the NOTIFY channel woken (once per transaction) when
// changes of any account were logged: the wake-up of cross-account readers
// such as the webhook dispatcher. Each account's own channel
// (ChangeChannel) is woken too.
const ChangeLogChannel = "shipgraph_change_log"

// Cursor is a position in the change log: (xid, id) of the last row read,
// or a position between rows (ChangeLogHead). The zero Cursor is before
// every row.
type Cursor struct {
	XID uint64 // the writing transaction's xid8
	ID  int64  // the log id
}

// Less reports whether c is before o.
func (c Cursor) Less(o Cursor) bool {
	return c.XID < o.XID || c.XID == o.XID && c.ID < o.ID
}

// IsZero reports whether c is the start of the log.
func (c Cursor) IsZero() bool { return c == Cursor{} }

// String is "xid:id", which ParseCursor reads back (for storing a cursor
// as text).
func (c Cursor) String() string {
	return strconv.FormatUint(c.XID, 10) + ":" + strconv.FormatInt(c.ID, 10)
}

// ParseCursor reads a Cursor's String.
func ParseCursor(s string) (Cursor, error) {
	x, i, ok := strings.Cut(s, ":")
	xid, err1 := strconv.ParseUint(x, 10, 64)
	id, err2 := strconv.ParseInt(i, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return Cursor{}, fmt.Errorf("change log cursor %q: want xid:id", s)
	}
	return Cursor{XID: xid, ID: id}, nil
}

// LoggedChange is one row of the change log.
type LoggedChange struct {
	// ID is the public log id: unique, increasing in the order rows were
	// written (not committed).
	ID int64
	// Cursor is the row's position, for resuming after it.
	Cursor    Cursor
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

// ChangeLogPage is one read of the log.
type ChangeLogPage struct {
	Changes []LoggedChange
	// Next is the cursor to read after: the last change's, or the cursor
	// read after when there were none.
	Next Cursor
	// Pending: rows after Next are committed but held back (a transaction
	// that wrote before them is still open); read again shortly. No
	// wake-up comes when that transaction ends without logging anything.
	Pending bool
	// More: the page was full; read again at once.
	More bool
	// Horizon is the xmin of the page's snapshot: every transaction below
	// it had ended, and a read that reached a page that is not More has
	// read every change of those transactions (after the cursor).
	Horizon uint64
}

// DefaultChangeLogPage is the page size of a read with limit <= 0.
const DefaultChangeLogPage = 1000

const changeLogCols = `l.xid::text, l.id, l.account_id, l.record_type, l.record_id, l.op,
	coalesce(l.parent_id::text, ''), l.changed, l.old, l.new, l.logged_at`

// ReadChangeLog reads every account's changes after the cursor, in order,
// up to limit of them. It is cross-tenant by design: it is the webhook
// dispatcher's read, which serves every account's webhooks; what it
// returns must be routed by AccountID and never shown across accounts.
func (db *DB) ReadChangeLog(ctx context.Context, after Cursor, limit int) ([]LoggedChange, Cursor, error) {
	p, err := db.ReadChangeLogPage(ctx, "", after, limit)
	return p.Changes, p.Next, err
}

// ReadAccountChangeLog reads one account's changes after the cursor, in
// order, up to limit of them (subscriptions).
func (db *DB) ReadAccountChangeLog(ctx context.Context, accountID string, after Cursor, limit int) ([]LoggedChange, Cursor, error) {
	p, err := db.ReadChangeLogPage(ctx, accountID, after, limit)
	return p.Changes, p.Next, err
}

// ReadChangeLogPage reads the changes after the cursor of one account, or
// of every account when accountID is "" (cross-tenant: see ReadChangeLog),
// and says whether more are pending.
func (db *DB) ReadChangeLogPage(ctx context.Context, accountID string, after Cursor, limit int) (ChangeLogPage, error) {
	if limit <= 0 {
		limit = DefaultChangeLogPage
	}
	// The snapshot's xmin and the rows after the cursor come from one
	// statement, so one snapshot: rows at or above xmin are held back.
	where := `(l.xid, l.id) > ($1::xid8, $2)`
	args := []any{strconv.FormatUint(after.XID, 10), after.ID, limit}
	if accountID != "" {
		where = `l.account_id = $4 AND ` + where
		args = append(args, accountID)
	}
	// The WAL insert position, read after the statement's snapshot was
	// taken, is past the commit record of every row returned (each one's
	// transaction ended before the snapshot): the position a re-read of
	// those rows' records needs a replica to have replayed. The insert
	// position, not pg_current_wal_lsn (the written one): with
	// synchronous_commit off a commit may be inserted and not yet written.
	rows, err := db.read(accountID).QueryContext(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text,
	(pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::int8, `+changeLogCols+`
FROM (SELECT 1) one LEFT JOIN LATERAL (
	SELECT l.* FROM change_log l WHERE `+where+` ORDER BY l.xid, l.id LIMIT $3
) l ON true
ORDER BY l.xid, l.id`, args...)
	if err != nil {
		return ChangeLogPage{Next: after}, mapErr(err)
	}
	defer rows.Close()
	page := ChangeLogPage{Next: after}
	readAt := time.Now()
	n := 0
	for rows.Next() {
		var (
			xmin, xid             sql.NullString
			wal                   int64
			id                    sql.NullInt64
			account, typ, rid, op sql.NullString
			c                     LoggedChange
			oldv, newv            []byte
			at                    sql.NullTime
		)
		if err := rows.Scan(&xmin, &wal, &xid, &id, &account, &typ, &rid, &op, &c.Parent, pq.Array(&c.Changed), &oldv, &newv, &at); err != nil {
			return ChangeLogPage{Next: after}, mapErr(err)
		}
		horizon, err := strconv.ParseUint(xmin.String, 10, 64)
		if err != nil {
			return ChangeLogPage{Next: after}, fmt.Errorf("change log: snapshot xmin %q: %w", xmin.String, err)
		}
		page.Horizon = horizon
		if !xid.Valid {
			break // no rows: the LEFT JOIN's one
		}
		n++
		x, err := strconv.ParseUint(xid.String, 10, 64)
		if err != nil {
			return ChangeLogPage{Next: after}, fmt.Errorf("change log: xid %q below %q", xid.String, xmin.String)
		}
		if x >= horizon {
			page.Pending = true
			break
		}
		c.ID, c.Cursor = id.Int64, Cursor{XID: x, ID: id.Int64}
		c.AccountID, c.Type, c.RecordID, c.Op = account.String, typ.String, rid.String, op.String
		if oldv != nil {
			c.Old = json.RawMessage(oldv)
		}
		if newv != nil {
			c.New = json.RawMessage(newv)
		}
		c.LoggedAt = at.Time
		c.WAL, c.WALAt = uint64(wal), readAt
		page.Changes = append(page.Changes, c)
		page.Next = c.Cursor
	}
	if err := rows.Err(); err != nil {
		return ChangeLogPage{Next: after}, mapErr(err)
	}
	page.More = !page.Pending && n == limit
	return page, nil
}

// ChangeLogHead is the position of "from now on": every change committed
// after it returns is after it. (A few changes committed just before it,
// by transactions that wrote while an older one was still open, are after
// it too: a reader from the head may see them.)
func (db *DB) ChangeLogHead(ctx context.Context) (Cursor, error) {
	var s string
	if err := db.read("").QueryRowxContext(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text`).Scan(&s); err != nil {
		return Cursor{}, mapErr(err)
	}
	x, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return Cursor{}, err
	}
	return Cursor{XID: x}, nil
}

// ChangeLogEnded is a change-log position every transaction that ended
// before the call is below (the xmax of a snapshot of the primary): a
// reader whose page Horizon reached it has read their changes. Recorded
// after a write, before its answer (the response cache's read-your-writes
// over instances).
func (db *DB) ChangeLogEnded(ctx context.Context) (uint64, error) {
	var s string
	if err := db.write("").QueryRowxContext(ctx, `SELECT pg_snapshot_xmax(pg_current_snapshot())::text`).Scan(&s); err != nil {
		return 0, mapErr(err)
	}
	return strconv.ParseUint(s, 10, 64)
}

// ChangeLogCursor is the position of the change with the public log id,
// whatever its account (the webhook dispatcher's); false when no such
// change is in the log (pruned, or never written).
func (db *DB) ChangeLogCursor(ctx context.Context, id int64) (Cursor, bool, error) {
	return db.changeLogCursor(ctx, `SELECT xid::text FROM change_log WHERE id = $1`, id)
}

// AccountChangeLogCursor is ChangeLogCursor within one account: another
// account's id is unknown.
func (db *DB) AccountChangeLogCursor(ctx context.Context, accountID string, id int64) (Cursor, bool, error) {
	return db.changeLogCursor(ctx, `SELECT xid::text FROM change_log WHERE id = $1 AND account_id = $2`, id, accountID)
}

func (db *DB) changeLogCursor(ctx context.Context, q string, id int64, args ...any) (Cursor, bool, error) {
	var s string
	err := db.read("").QueryRowxContext(ctx, q, append([]any{id}, args...)...).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return Cursor{}, false, nil
	}
	if err != nil {
		return Cursor{}, false, mapErr(err)
	}
	x, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return Cursor{}, false, err
	}
	return Cursor{XID: x, ID: id}, true, nil
}

// ChangeLogPruned is the last position pruning removed: a reader whose
// cursor is before it (Less) may have missed changes.
func (db *DB) ChangeLogPruned(ctx context.Context) (Cursor, error) {
	var s string
	var id int64
	if err := db.read("").QueryRowxContext(ctx, `SELECT xid::text, id FROM change_log_pruned`).Scan(&s, &id); err != nil {
		return Cursor{}, mapErr(err)
	}
	x, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return Cursor{}, err
	}
	return Cursor{XID: x, ID: id}, nil
}
