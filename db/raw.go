package db

import (
	"context"
	"database/sql/driver"
	"errors"

	"github.com/lib/pq"
)

// The row reader's reads through the pool (prepared.go) run on lib/pq's
// driver rows directly: the statement is prepared once per connection
// and kept by the connection itself (rawConn), and the reader takes each
// row's driver values as lib/pq decodes them (readDriverRows in scan.go).
// database/sql's path costs, per statement, its statement-per-connection
// lookup, the argument conversion, a Rows with its locks and, per column
// of every row, convertAssign through an interface destination; on a
// dashboard (three statements, about 330 rows of four to six columns)
// that was a tenth of the server's CPU. Everything else (writes,
// transactions, sqlx reads, scalar reads) keeps database/sql's path, and
// so does a read whose struct has a field only database/sql can store
// (rawStorable).

// rawConnector makes lib/pq connections that keep their own prepared
// statements for the raw path.
type rawConnector struct{ *pq.Connector }

func (c rawConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc, ok := cn.(pqConn)
	if !ok { // not lib/pq's connection as this file knows it: no raw path
		return cn, nil
	}
	return &rawConn{pqConn: pc}, nil
}

// pqConn is what lib/pq's connection implements and database/sql uses;
// rawConn passes it all through.
type pqConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.QueryerContext
	driver.ExecerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

// rawConn is a lib/pq connection with the statements the raw path
// prepared on it, by text. database/sql hands a connection to one user
// at a time (Conn.Raw holds it), so the map needs no lock; the statements
// go with the connection when it closes.
type rawConn struct {
	pqConn
	stmts map[string]driver.Stmt
}

// query runs query on the connection, prepared unless the connection
// keeps maxPrepared statements already; a statement that no longer fits
// its tables (stale) is dropped and the query runs unprepared.
func (c *rawConn) query(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	st, ok := c.stmts[query]
	if !ok && len(c.stmts) < maxPrepared {
		var err error
		if st, err = c.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		if c.stmts == nil {
			c.stmts = map[string]driver.Stmt{}
		}
		c.stmts[query] = st
	}
	if st != nil {
		rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, args)
		if !staleErr(err) {
			return rows, err
		}
		delete(c.stmts, query)
		_ = st.Close()
	}
	return c.QueryContext(ctx, query, args)
}

// staleErr reports whether err says a prepared statement no longer fits
// the tables ("cached plan must not change result type").
func staleErr(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code == "0A000"
}

// errNoRaw: the pool's connection is not a rawConn; the caller takes
// database/sql's path.
var errNoRaw = errors.New("db: no raw connection")

// queryRaw runs query with args on a pooled connection and hands its rows
// to read. A connection found broken before any row was read is discarded
// and the query tried again, as database/sql does; the last try goes
// through database/sql (errNoRaw), which takes a new connection.
func (p *prepared) queryRaw(ctx context.Context, query string, args []any, read func(driver.Rows) error) error {
	nargs := make([]driver.NamedValue, len(args))
	for try := 0; try < 2; try++ {
		started := false
		err := p.rawOnce(ctx, query, args, nargs, func(rows driver.Rows) error {
			started = true
			return read(rows)
		})
		if started || !errors.Is(err, driver.ErrBadConn) {
			return err
		}
	}
	return errNoRaw
}

func (p *prepared) rawOnce(ctx context.Context, query string, args []any, nargs []driver.NamedValue, read func(driver.Rows) error) error {
	conn, err := p.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*rawConn)
		if !ok {
			return errNoRaw
		}
		for i, a := range args {
			nv := driver.NamedValue{Ordinal: i + 1, Value: a}
			err := c.CheckNamedValue(&nv)
			if errors.Is(err, driver.ErrSkip) {
				nv.Value, err = driver.DefaultParameterConverter.ConvertValue(a)
			}
			if err != nil {
				return err
			}
			nargs[i] = nv
		}
		rows, err := c.query(ctx, query, nargs)
		if err != nil {
			return err
		}
		err = read(rows)
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
		return err
	})
}
