package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"regexp"
	"strings"
	"syscall"

	"github.com/lib/pq"

	"shipgraph/model"
)

// The one classification of database errors. A failure of the database
// (it is down, restarting, out of connections, timed out, or chose this
// transaction as a serialization or deadlock victim) is EUNAVAILABLE: /v2
// answers 503 with Retry-After and GraphQL extensions.code UNAVAILABLE,
// and a client may simply try again. A value PostgreSQL rejects is the
// client's (EINVALID); a unique violation a conflict. Anything else stays
// an internal error, logged and never shown.
//
// The store maps the errors it returns (mapErr); an error that escapes it
// unmapped — a connection lost while rows were read, a driver error
// wrapped on its way up — is still classified by model.ErrorCode and
// model.AsError, which consult Classify (registered below), so both
// transports answer it the same.

func init() { model.SetClassifier(classify) }

// Unavailable is the error of a database that cannot answer now (a
// template: Classify returns copies).
var Unavailable = &model.Error{Code: model.EUNAVAILABLE, Message: "the database is unavailable; try again shortly"}

var (
	errInvalidText = &model.Error{Code: model.EINVALID, Message: "a value is not valid text (invalid UTF-8 or a NUL character)"}
	errOutOfRange  = &model.Error{Code: model.EINVALID, Message: "a number is out of range"}
	errInvalid     = &model.Error{Code: model.EINVALID, Message: "a value is not valid"}
	errTooLong     = &model.Error{Code: model.EINVALID, Message: "a value is too long"}
	errConflict    = &model.Error{Code: model.ECONFLICT, Message: "a record with these values already exists"}
	errReference   = &model.Error{Code: model.EINVALID, Message: "a referenced record does not exist"}
)

// Classify returns the application error of a database error: err itself
// when it already is one or is not a database error, else the *model.Error
// of its class (wrapping nothing: the driver's text is never shown).
func Classify(err error) error {
	if e := classify(err); e != nil {
		return e
	}
	return err
}

// classify is Classify for errors it knows, nil for the others. It returns
// a fresh copy: callers may point the error at a member.
func classify(err error) *model.Error {
	if err == nil {
		return nil
	}
	var e *model.Error
	var pqe *pq.Error
	switch {
	case errors.As(err, &pqe):
		e = classifyCode(string(pqe.Code))
		if e == nil && (shardMoving(pqe.Message) || relayedTransient(pqe)) {
			e = Unavailable
		}
	case isConnectionLoss(err):
		e = Unavailable
	}
	if e == nil {
		return nil
	}
	c := *e
	return &c
}

// The SQLSTATEs of a transaction PostgreSQL chose as a victim: the whole
// transaction may run again (Victim); to a client, unavailable
// (classifyCode).
const (
	serializationFailure = "40001"
	deadlockDetected     = "40P01"
)

// classifyCode maps a SQLSTATE to its application error.
func classifyCode(code string) *model.Error {
	switch code {
	case "23505": // unique_violation
		return errConflict
	case "23503": // foreign_key_violation
		return errReference
	case "22021", // character_not_in_repertoire (invalid UTF-8, NUL in text)
		"22P05": // untranslatable_character (\u0000 in jsonb)
		return errInvalidText
	case "22003": // numeric_value_out_of_range
		return errOutOfRange
	case "22001": // string_data_right_truncation
		return errTooLong
	case "23514", "23502", "22P02", "22007", "22008", "22023", "22004":
		return errInvalid
	case serializationFailure, deadlockDetected, // a victim (Victim)
		"55P03", // lock_not_available
		"57014", // query_canceled (statement_timeout, cancellation)
		"57P01", // admin_shutdown
		"57P02", // crash_shutdown
		"57P03", // cannot_connect_now (starting up, shutting down)
		"57P05", // idle_session_timeout
		"25P03", // idle_in_transaction_session_timeout
		// read_only_sql_transaction: a write on a primary being demoted
		// or a standby not yet promoted (a switchover): the
		// next attempt reaches the new primary.
		"25006":
		return Unavailable
	}
	if len(code) < 2 {
		return nil
	}
	switch code[:2] {
	case "08", // connection_exception
		"53", // insufficient_resources (53300 too_many_connections, out of memory, disk full)
		"58": // system_error (I/O)
		return Unavailable
	}
	return nil
}

// citusMoving are the texts of Citus's errors of a statement that met a
// shard group while it moved (a rebalance, a tenant isolated): for a moment
// around the move's end a node routes by placements just replaced (an old
// placement gone: "could not find valid entry for shard"; a trigger on the
// shard's new node sees its colocated shard as remote: "a distributed query
// from a query on a shard"; a parallel task's result dropped with it). They
// carry no SQLSTATE of their own (XX000 or feature_not_supported) and the
// same statement succeeds once the move has ended: unavailable, so a client
// retries (TestCitusShardMovesUnderWrites: no answer but 201 or 503 while
// shards move). The nested query's text is also what a trigger that really
// names another account's shard would get; TestShardTriggersKeepCounts and
// the trigger tests on the cluster catch that one, every time, not once in
// a move.
var citusMoving = []string{
	"could not find valid entry for shard",
	"cannot execute a distributed query from a query on a shard",
	"could not find the intermediate result file",
}

// Victim reports whether err ended a transaction PostgreSQL chose as a
// deadlock's or a serialization failure's victim (40P01, 40001, or the same
// relayed by a Citus coordinator without its code): the whole transaction
// may simply be run again.
func Victim(err error) bool {
	var pqe *pq.Error
	if !errors.As(err, &pqe) {
		return false
	}
	return pqe.Code == deadlockDetected || pqe.Code == serializationFailure || relayedTransient(pqe)
}

// relayedTransient reports a deadlock or serialization failure that a
// Citus coordinator relayed without its SQLSTATE: an error of a worker's
// COPY (an INSERT … SELECT a coordinator runs as COPY, a trigger's rows)
// comes back with the worker's message only (ReportCopyError), as XX000.
// The message is PostgreSQL's own, so the class is known: a retry, as for
// 40P01 and 40001 (TestClassifySQLSTATE; ci52's TestStatsRollupsConcurrentWriters).
func relayedTransient(e *pq.Error) bool {
	return e.Code == "XX000" && (e.Message == "deadlock detected" ||
		strings.HasPrefix(e.Message, "could not serialize access"))
}

// shardMoving reports a Citus error of a shard group moving (citusMoving).
func shardMoving(msg string) bool {
	for _, m := range citusMoving {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// isConnectionLoss reports errors of a connection that failed or of a
// request that ran out of time: the database was not reached, or stopped
// answering.
func isConnectionLoss(err error) bool {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// shardSuffix is what Citus appends to a constraint's or index's name on a
// shard (its shard id), which its errors report.
var shardSuffix = regexp.MustCompile(`_[0-9]+$`)

// messageConstraint finds the constraint in an error's message, for the
// errors a Citus coordinator relays from a worker without the field.
var messageConstraint = regexp.MustCompile(`constraint "([^"]+)"`)

// constraintIs reports whether e names constraint (or unique index) name,
// on plain PostgreSQL or on a Citus shard.
func constraintIs(e *pq.Error, name string) bool {
	c := e.Constraint
	if c == "" {
		if m := messageConstraint.FindStringSubmatch(e.Message); m != nil {
			c = m[1]
		}
	}
	return c == name || shardSuffix.ReplaceAllString(c, "") == name
}
