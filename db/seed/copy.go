package seed

import (
	"context"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// COPY in text format, encoded by the seed itself and streamed with pq's
// raw CopyData. The usual path (a prepared COPY and one Stmt.Exec per row)
// spends more CPU in database/sql and in pq's per-value conversion than
// PostgreSQL spends parsing the rows; on a small machine the two compete
// for the same cores. Encoding here happens in the generator goroutine,
// while the connection streams the previous chunk.

// seedBuf accumulates rows of one table in COPY text format.
type seedBuf struct {
	b    []byte
	rows int64
}

// row appends one row. Values are what the generator produces: nil
// (NULL), string, time.Time, int64, float64, bool, []byte (bytea) and
// pq.StringArray.
func (w *seedBuf) row(vals []any) {
	for i, v := range vals {
		if i > 0 {
			w.b = append(w.b, '\t')
		}
		switch x := v.(type) {
		case nil:
			w.b = append(w.b, `\N`...)
		case string:
			w.b = seedEscape(w.b, x)
		case time.Time:
			w.b = x.UTC().AppendFormat(w.b, "2006-01-02 15:04:05.999999Z07:00")
		case int64:
			w.b = strconv.AppendInt(w.b, x, 10)
		case float64:
			w.b = strconv.AppendFloat(w.b, x, 'g', -1, 64)
		case bool:
			if x {
				w.b = append(w.b, 't')
			} else {
				w.b = append(w.b, 'f')
			}
		case []byte:
			// bytea hex format; the backslash itself is escaped for COPY
			w.b = append(w.b, `\\x`...)
			w.b = hex.AppendEncode(w.b, x)
		case pq.StringArray:
			if x == nil {
				w.b = append(w.b, `\N`...)
				break
			}
			lit, _ := x.Value() // never fails
			w.b = seedEscape(w.b, lit.(string))
		default:
			// A programming error in the generator: fail loudly in tests.
			panic(fmt.Sprintf("seed: cannot encode %T for COPY", v))
		}
	}
	w.b = append(w.b, '\n')
	w.rows++
}

// seedEscape appends s with the characters COPY's text format reserves
// escaped.
func seedEscape(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, c)
		}
	}
	return b
}

// seedCopyPiece is how much COPY data goes into one protocol message:
// PostgreSQL starts parsing as soon as a message is in, so a chunk streams
// as a series of messages rather than one long one.
const seedCopyPiece = 256 << 10

// seedCopyData is pq's raw COPY stream: a method of the statement that
// pq's PrepareContext returns for COPY … FROM STDIN (exported for this
// use since lib/pq#1077). The seed tests fail at once if an upgrade of
// pq drops it.
type seedCopyData interface {
	CopyData(ctx context.Context, line string) (driver.Result, error)
}

// seedCopyStream runs one COPY of t with the rows in buf, on the
// connection of the transaction (conn.Raw gives the driver connection the
// transaction runs on; pq only accepts COPY inside a transaction).
// Without freeze (tables that were empty, not truncated in this
// transaction) the COPY writes ordinary rows.
func seedCopyStream(ctx context.Context, conn *sqlx.Conn, t *seedTable, buf *seedBuf, freeze bool) error {
	if buf.rows == 0 {
		return nil
	}
	err := conn.Raw(func(dc any) error {
		prep, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return errors.New("driver cannot prepare statements with a context")
		}
		stmt := t.copy
		if !freeze {
			stmt = strings.TrimSuffix(stmt, " WITH (FREEZE)")
		}
		st, err := prep.PrepareContext(ctx, stmt)
		if err != nil {
			return err
		}
		cd, ok := st.(seedCopyData)
		if !ok {
			st.Close()
			return errors.New("driver has no raw COPY stream (lib/pq's CopyData)")
		}
		b := buf.b
		for len(b) > 0 {
			// Cut at a row boundary; CopyData adds the newline back.
			n := len(b)
			if n > seedCopyPiece {
				n = seedCopyPiece
				for b[n-1] != '\n' {
					n++
				}
			}
			if _, err := cd.CopyData(ctx, string(b[:n-1])); err != nil {
				st.Close()
				return err
			}
			b = b[n:]
		}
		// Close ends the COPY and returns the server's verdict on it.
		return st.Close()
	})
	if err != nil {
		return fmt.Errorf("seed: copy %s: %w", t.name, err)
	}
	return nil
}
