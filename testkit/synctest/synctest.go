// Package synctest compares a data sync's destination with its source in
// tests: each side's rows of a table as one line per row, in key order.
package synctest

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"shipgraph/db"
)

// SourceLines is the account's rows of the table as the sync exports them,
// one line per row, in key order.
func SourceLines(ctx context.Context, store *db.DB, account string, tb *db.SyncTable) ([]string, error) {
	var out []string
	after := ""
	for {
		rows, err := store.SyncPage(ctx, account, tb, after, 500)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out = append(out, Line(r))
		}
		if len(rows) < 500 {
			return out, nil
		}
		after = rows[len(rows)-1].Key()
	}
}

// DestLines is a PostgreSQL destination's rows of the table in key order
// (an error: no table, or the destination does not answer).
func DestLines(ctx context.Context, dest *sql.DB, tb *db.SyncTable) ([]string, error) {
	names := make([]string, len(tb.Columns))
	for i, c := range tb.Columns {
		names[i] = c.Name
	}
	rows, err := dest.QueryContext(ctx, fmt.Sprintf(`SELECT %s FROM %s ORDER BY %s`, strings.Join(names, ", "), tb.Name, tb.Key()))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			if t, ok := v.(time.Time); ok {
				// timestamp without time zone: the UTC wall clock.
				vals[i] = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
			}
		}
		out = append(out, Line(vals))
	}
	return out, rows.Err()
}

// Line is one row's values as a line: "∅" for NULL, times in UTC
// RFC 3339, bytes as text, the values joined by "|".
func Line(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		switch v := v.(type) {
		case nil:
			parts[i] = "∅"
		case time.Time:
			parts[i] = v.UTC().Format(time.RFC3339Nano)
		case []byte:
			parts[i] = string(v)
		default:
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, "|")
}
