package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/jmoiron/sqlx"
)

// Joint reads. A level of a load plan often reads several relationships
// of the same records at once (a dashboard's shipments: their containers
// and their custom fields), each its own batch statement. Each statement
// is a round trip, and under a server's load a PostgreSQL backend sleeps
// between them, waiting for the next: a wake-up and colder caches per
// statement that running the same statements back to back (pgbench) does
// not pay (docs/scale.md, "Stop 42: PostgreSQL's side of the dashboard").
// ReadJoint sends such batch reads as one statement: each read's own
// statement, parenthesized, as a branch of a UNION ALL, its rows told
// apart by a first column (part_) and its columns at a place of their own
// in the row (NULL in the other branches' rows):
//
//	(SELECT 0 AS part_, p.<A's names>, NULL AS <B's names>… FROM (<A's statement>) p)
//	UNION ALL (SELECT 1, NULL…, p.<B's names> FROM (<B's statement>) p)
//
// PostgreSQL types an untyped NULL of one branch as the other branch's
// column, and runs a UNION ALL's branches one after the other (an Append,
// never parallel at these sizes), each in its own order (a subquery with
// ORDER BY is not flattened into the one above it): the rows of each read
// come as its own statement gives them, which the readers rely on (rows
// grouped by parent, in order). Every branch names the account
// ($1), so the statement stays on the account's shard under Citus.

// Batch is a batch read of the account's T by ids: its statement as a
// select list and the rest (FROM … WHERE … ORDER BY …), given the
// placeholders of its ids and of the account. It runs alone (Read) or as
// a part of a joint read (Part, ReadJoint).
type Batch[T any] struct {
	stmt func(db *DB, ids, account string) (cols, rest string)
}

// newBatch declares a batch read. Its rows are read only by the row
// reader's own stores (rawStorable): a joint read has no other path.
func newBatch[T any](stmt func(db *DB, ids, account string) (cols, rest string)) *Batch[T] {
	if !rawStorable(reflect.TypeFor[T]()) {
		panic(fmt.Sprintf("db: %s cannot be read by a joint read", reflect.TypeFor[T]()))
	}
	return &Batch[T]{stmt: stmt}
}

// Read runs the batch read alone: one statement ($1 the ids, $2 the
// account).
func (b *Batch[T]) Read(ctx context.Context, db *DB, accountID string, ids []string) ([]*T, error) {
	cols, rest := b.stmt(db, "$1", "$2")
	return byIDs[T](ctx, db.read(accountID), "SELECT "+cols+" "+rest, ids, accountID)
}

// LinkBatch is a batch read over a join table: rows of a parent id and
// an item, handed out as Linked[T]. It runs alone (Read) or as a part of
// a joint read (Part).
type LinkBatch[T any] struct {
	read func(ctx context.Context, db *DB, accountID string, ids []string) ([]Linked[T], error)
	part func(ids []string) (JointPart, func() []Linked[T])
}

// newLinkBatch declares a batch read over a join table whose rows are R.
func newLinkBatch[R any, T any](stmt func(db *DB, ids, account string) (cols, rest string), linked func(*R) Linked[T]) *LinkBatch[T] {
	b := newBatch[R](stmt)
	links := func(rows []*R) []Linked[T] {
		out := make([]Linked[T], len(rows))
		for i, r := range rows {
			out[i] = linked(r)
		}
		return out
	}
	return &LinkBatch[T]{
		read: func(ctx context.Context, db *DB, accountID string, ids []string) ([]Linked[T], error) {
			rows, err := b.Read(ctx, db, accountID, ids)
			if err != nil {
				return nil, err
			}
			return links(rows), nil
		},
		part: func(ids []string) (JointPart, func() []Linked[T]) {
			p := b.Part(ids)
			return p, func() []Linked[T] { return links(p.Rows) }
		},
	}
}

// Read runs the batch read alone.
func (b *LinkBatch[T]) Read(ctx context.Context, db *DB, accountID string, ids []string) ([]Linked[T], error) {
	return b.read(ctx, db, accountID, ids)
}

// Part is the batch read of ids as a part of a joint read, with its
// links once ReadJoint returned.
func (b *LinkBatch[T]) Part(ids []string) (JointPart, func() []Linked[T]) { return b.part(ids) }

// Part is the batch read of ids as a part of a joint read; its rows are
// Rows once ReadJoint returns.
func (b *Batch[T]) Part(ids []string) *BatchPart[T] { return &BatchPart[T]{b: b, ids: ids} }

// BatchPart is one batch read of a joint read.
type BatchPart[T any] struct {
	b    *Batch[T]
	ids  []string
	Rows []*T
}

// JointPart is a part of a joint read (a *BatchPart).
type JointPart interface {
	stmt(db *DB, ids, account string) (cols, rest string)
	keys() []string
	// reader stores the rows of the part from the result's columns at
	// [at, at+len(names)).
	reader(names []string, at int, typeName func(i int) string) (func(row []driver.Value) error, error)
	// alone runs the part as its own statement.
	alone(ctx context.Context, db *DB, accountID string, ids []string) error
}

func (p *BatchPart[T]) stmt(db *DB, ids, account string) (string, string) {
	return p.b.stmt(db, ids, account)
}

func (p *BatchPart[T]) keys() []string { return p.ids }

func (p *BatchPart[T]) alone(ctx context.Context, db *DB, accountID string, ids []string) error {
	rows, err := p.b.Read(ctx, db, accountID, ids)
	p.Rows = rows
	return err
}

func (p *BatchPart[T]) reader(names []string, at int, typeName func(i int) string) (func([]driver.Value) error, error) {
	plan, err := planFor(reflect.TypeFor[T](), names)
	if err != nil {
		return nil, err
	}
	cols, err := newColDests(plan, func(i int) (string, error) { return typeName(at + i), nil })
	if err != nil {
		return nil, err
	}
	var own ownedRows[T]
	return func(row []driver.Value) error {
		v := own.next()
		if err := storeRow(cols, unsafe.Pointer(v), row, at, names); err != nil {
			return err
		}
		p.Rows = append(p.Rows, v)
		return nil
	}, nil
}

// ReadJoint runs a and b, two batch reads of the account's data, as one
// statement; a part without a valid id reads nothing, and a single part
// left runs as its own statement. Each part's rows are what its read
// alone returns, in the same order. Two, not more: PostgreSQL types a
// UNION pairwise, and the NULLs of a third read's columns in the first
// two branches would be typed text before they meet its uuids.
func (db *DB) ReadJoint(ctx context.Context, accountID string, a, b JointPart) error {
	if !validUUID(accountID) {
		return nil
	}
	parts := []JointPart{a, b}
	args := []any{accountID}
	var live []JointPart
	for _, p := range parts {
		if valid := validUUIDs(p.keys()); len(valid) > 0 {
			live = append(live, p)
			args = append(args, uuidArray(valid))
		}
	}
	switch len(live) {
	case 0:
		return nil
	case 1:
		return live[0].alone(ctx, db, accountID, live[0].keys())
	}
	query, widths := db.jointStatement(live)
	err := readRows(ctx, db.read(accountID), query, args, func(rows driver.Rows) (int64, error) {
		return readJointRows(rows, live, widths)
	})
	return mapErr(err)
}

// jointStatement is the statement of parts ($1 the account, $2… each
// part's ids) and the number of columns of each.
func (db *DB) jointStatement(parts []JointPart) (string, []int) {
	items := make([][]string, len(parts))
	rests := make([]string, len(parts))
	widths := make([]int, len(parts))
	for i, p := range parts {
		cols, rest := p.stmt(db, "$"+strconv.Itoa(i+2), "$1")
		items[i], rests[i] = splitSelect(cols), rest
		widths[i] = len(items[i])
	}
	var b strings.Builder
	for i := range parts {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		b.WriteString("(SELECT ")
		b.WriteString(strconv.Itoa(i))
		if i == 0 {
			b.WriteString(" AS part_")
		}
		for j := range parts {
			for _, it := range items[j] {
				b.WriteString(", ")
				switch {
				case j == i:
					b.WriteString("p.")
					b.WriteString(outputName(it))
				case i == 0: // the first branch names the columns
					b.WriteString("NULL AS ")
					b.WriteString(outputName(it))
				default:
					b.WriteString("NULL")
				}
			}
		}
		// The read's own statement, sorted before the other reads'
		// NULLs are added: rows sorted with them (a null bitmap, every
		// attribute past it fetched the slow way) cost the sort 15 %
		// more of the dashboard's instructions (docs/scale.md).
		b.WriteString(" FROM (SELECT ")
		b.WriteString(strings.Join(items[i], ", "))
		b.WriteByte(' ')
		b.WriteString(rests[i])
		b.WriteString(") p)")
	}
	return b.String(), widths
}

// readJointRows hands each row of a joint statement to the reader of its
// part (the first column).
func readJointRows(rows driver.Rows, parts []JointPart, widths []int) (int64, error) {
	columns := rows.Columns()
	typeName := driverTypeNames(rows)
	readers := make([]func([]driver.Value) error, len(parts))
	at := 1
	for i, p := range parts {
		if at+widths[i] > len(columns) {
			return -1, fmt.Errorf("db: joint read: %d columns, want more than %d", len(columns), at+widths[i])
		}
		r, err := p.reader(columns[at:at+widths[i]], at, typeName)
		if err != nil {
			return -1, err
		}
		readers[i] = r
		at += widths[i]
	}
	dest := make([]driver.Value, len(columns))
	var n int64
	for {
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				return n, nil
			}
			return n, err
		}
		part, err := toInt(dest[0])
		if err != nil || part < 0 || int(part) >= len(parts) {
			return n, fmt.Errorf("db: joint read: row of part %v", dest[0])
		}
		if err := readers[part](dest); err != nil {
			return n, err
		}
		n++
	}
}

// readRows runs query and hands its rows to read as driver rows: lib/pq's
// own on the raw path (raw.go), else database/sql's seen through
// sqlDriverRows. It goes through the one statement path (send) as
// scanRows does.
func readRows(ctx context.Context, q sqlx.QueryerContext, query string, args []any, read func(driver.Rows) (int64, error)) error {
	if c, ok := q.(counted); ok && (c.r == nil || !c.read || c.primary) {
		_, err := sendRead(c, ctx, query, args, read, func(e sqlx.ExtContext, ctx context.Context, query string, args []any) (int64, error) {
			return readSQLRows(ctx, e, query, args, read)
		})
		return err
	}
	ctx, sp := startStatement(ctx, query)
	n, err := readSQLRows(ctx, q, query, args, read)
	endStatement(sp, n, err)
	return err
}

func readSQLRows(ctx context.Context, q sqlx.QueryerContext, query string, args []any, read func(driver.Rows) (int64, error)) (int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return -1, err
	}
	defer rows.Close()
	columns, err := rows.Columns()
	if err != nil {
		return -1, err
	}
	types, err := rows.ColumnTypes()
	if err != nil {
		return -1, err
	}
	n, err := read(&sqlDriverRows{rows: rows, columns: columns, types: types})
	if err != nil {
		return n, err
	}
	return n, rows.Err()
}

// sqlDriverRows are database/sql's rows as driver rows: each value as
// database/sql hands it to an *any (bytes copied).
type sqlDriverRows struct {
	rows    *sql.Rows
	columns []string
	types   []*sql.ColumnType
	vals    []any
	ptrs    []any
}

func (r *sqlDriverRows) Columns() []string { return r.columns }
func (r *sqlDriverRows) Close() error      { return r.rows.Close() }

func (r *sqlDriverRows) ColumnTypeDatabaseTypeName(i int) string {
	return r.types[i].DatabaseTypeName()
}

func (r *sqlDriverRows) Next(dest []driver.Value) error {
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	if r.ptrs == nil {
		r.vals = make([]any, len(r.columns))
		r.ptrs = make([]any, len(r.columns))
		for i := range r.vals {
			r.ptrs[i] = &r.vals[i]
		}
	}
	if err := r.rows.Scan(r.ptrs...); err != nil {
		return err
	}
	for i, v := range r.vals {
		dest[i] = v
	}
	return nil
}
