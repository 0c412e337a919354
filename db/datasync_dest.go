package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/lib/pq"
)

// SyncTarget is a customer's PostgreSQL database that the data sync
// writes the exported tables to (package datasync): tables made when
// missing, rows upserted by key and deleted by key, and _transfer_status
// (table, last updated) written in the same transaction as the rows.
type SyncTarget struct {
	conn   *sql.DB
	schema string
}

// OpenSyncTarget connects to the destination database at url, tables in
// schema ("": public), dialling through dial (nil: the default dialer).
func OpenSyncTarget(url, schema string, dial pq.Dialer) (*SyncTarget, error) {
	c, err := pq.NewConnector(url)
	if err != nil {
		return nil, err
	}
	if dial != nil {
		c.Dialer(dial)
	}
	conn := sql.OpenDB(c)
	conn.SetMaxOpenConns(2)
	conn.SetConnMaxIdleTime(time.Minute)
	if schema == "" {
		schema = "public"
	}
	return &SyncTarget{conn: conn, schema: schema}, nil
}

// Close closes the connections.
func (t *SyncTarget) Close() error { return t.conn.Close() }

func (t *SyncTarget) name(table string) string {
	return pq.QuoteIdentifier(t.schema) + "." + pq.QuoteIdentifier(table)
}

// Prepare makes the schema, the tables and any missing column.
func (t *SyncTarget) Prepare(ctx context.Context, tables []*SyncTable) error {
	stmts := []string{
		"CREATE SCHEMA IF NOT EXISTS " + pq.QuoteIdentifier(t.schema),
		"CREATE TABLE IF NOT EXISTS " + t.name(SyncTransferStatus) + " (data_model_name text PRIMARY KEY, transfer_last_updated_at timestamp NOT NULL)",
	}
	for _, tb := range tables {
		var cols []string
		for _, c := range tb.Columns {
			cols = append(cols, pq.QuoteIdentifier(c.Name)+" "+c.Type)
		}
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (%s, PRIMARY KEY (%s))",
			t.name(tb.Name), strings.Join(cols, ", "), pq.QuoteIdentifier(tb.Key())))
		for _, c := range tb.Columns[1:] {
			stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s %s", t.name(tb.Name), pq.QuoteIdentifier(c.Name), c.Type))
		}
	}
	for _, s := range stmts {
		if _, err := t.conn.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// Reset empties a table (a copy from scratch starts).
func (t *SyncTarget) Reset(ctx context.Context, tb *SyncTable) error {
	_, err := t.conn.ExecContext(ctx, "TRUNCATE "+t.name(tb.Name))
	return err
}

// Apply upserts rows and deletes the rows of keys deletes, and records
// at as the table's last update, in one transaction.
func (t *SyncTarget) Apply(ctx context.Context, tb *SyncTable, rows []SyncRow, deletes []string, at time.Time) error {
	tx, err := t.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	n := len(tb.Columns)
	names := make([]string, n)
	var sets []string
	for i, c := range tb.Columns {
		names[i] = pq.QuoteIdentifier(c.Name)
		if i > 0 {
			sets = append(sets, names[i]+" = EXCLUDED."+names[i])
		}
	}
	head := fmt.Sprintf("INSERT INTO %s (%s) VALUES ", t.name(tb.Name), strings.Join(names, ", "))
	tail := fmt.Sprintf(" ON CONFLICT (%s) DO UPDATE SET %s", names[0], strings.Join(sets, ", "))
	per := 60000 / n // bind parameters per statement stay under PostgreSQL's 65535
	for len(rows) > 0 {
		chunk := rows[:min(per, len(rows))]
		rows = rows[len(chunk):]
		var b strings.Builder
		args := make([]any, 0, len(chunk)*n)
		for r, row := range chunk {
			if r > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for i, v := range row {
				if i > 0 {
					b.WriteString(", ")
				}
				args = append(args, v)
				fmt.Fprintf(&b, "$%d", len(args))
			}
			b.WriteByte(')')
		}
		if _, err := tx.ExecContext(ctx, head+b.String()+tail, args...); err != nil {
			return err
		}
	}
	if len(deletes) > 0 {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("DELETE FROM %s WHERE %s = ANY($1::text[])", t.name(tb.Name), names[0]), pq.Array(deletes)); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+t.name(SyncTransferStatus)+` (data_model_name, transfer_last_updated_at) VALUES ($1, $2)
ON CONFLICT (data_model_name) DO UPDATE SET transfer_last_updated_at = EXCLUDED.transfer_last_updated_at`, tb.Name, at.UTC()); err != nil {
		return err
	}
	return tx.Commit()
}
