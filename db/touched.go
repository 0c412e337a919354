package db

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
)

// Tables is a set of the tables a request's statements named, in the
// change log's terms (the response cache, httpapi: an answer is kept with
// what it read, and a logged change of one of those types drops it). A
// bit per record type of the log; TablesUnlogged for a table whose changes
// are not logged (an answer that read one cannot be kept: nothing would
// tell it changed).
type Tables uint32

// The record types of the change log (db/migrations 00008, 00013, 00015).
const (
	TablesShipment Tables = 1 << iota
	TablesContainer
	TablesCustomField
	TablesCustomFieldDefinition
	TablesCustomFieldOption
	TablesDocument
	TablesTrackingRequest
	TablesTransportEvent
	// TablesUnlogged: a table whose changes the log does not record.
	TablesUnlogged Tables = 1 << 31
	// TablesLogged is every logged type.
	TablesLogged = TablesShipment | TablesContainer | TablesCustomField | TablesCustomFieldDefinition |
		TablesCustomFieldOption | TablesDocument | TablesTrackingRequest | TablesTransportEvent
)

// TablesOfChange is the bit of a change log record type (LoggedChange.Type);
// a type it does not know is every logged type (a new trigger drops too
// much rather than too little).
func TablesOfChange(recordType string) Tables {
	switch recordType {
	case "shipment":
		return TablesShipment
	case "container":
		return TablesContainer
	case "custom_field":
		return TablesCustomField
	case "custom_field_definition":
		return TablesCustomFieldDefinition
	case "custom_field_option":
		return TablesCustomFieldOption
	case "document":
		return TablesDocument
	case "tracking_request":
		return TablesTrackingRequest
	case "transport_event":
		return TablesTransportEvent
	}
	return TablesLogged
}

// tableBits names every table of the schema with what reading it depends
// on. The join tables of documents change with their document (one
// transaction, db/files.go); list_counts counts logged lists. The reference
// tables (ports, metro areas, terminals, rail terminals, shipping lines)
// are read through the reference cache, which promises an edit shows
// within REFERENCE_CACHE_TTL: the response cache keeps answers no longer
// than that, so they count as nothing here. Raw events arrive with the
// poll that logs the transport events and container changes they make
// (one statement, tracking_poll.go); a poll that adds raw events alone
// shows within that bound too. Every other table is unlogged.
var tableBits = map[string]Tables{
	"shipments":                 TablesShipment,
	"containers":                TablesContainer,
	"custom_fields":             TablesCustomField,
	"custom_field_definitions":  TablesCustomFieldDefinition,
	"custom_field_options":      TablesCustomFieldOption,
	"documents":                 TablesDocument,
	"document_containers":       TablesDocument,
	"document_shipments":        TablesDocument,
	"document_representations":  TablesDocument,
	"tracking_requests":         TablesTrackingRequest,
	"transport_events":          TablesTransportEvent,
	"list_counts":               TablesLogged,
	"ports":                     0,
	"metro_areas":               0,
	"terminals":                 0,
	"rail_terminals":            0,
	"shipping_lines":            0,
	"accounts":                  TablesUnlogged,
	"api_tokens":                TablesUnlogged,
	"users":                     TablesUnlogged,
	"vessels":                   TablesUnlogged,
	"raw_events":                TablesTransportEvent | TablesContainer,
	"uploads":                   TablesUnlogged,
	"email_submissions":         TablesUnlogged,
	"webhooks":                  TablesUnlogged,
	"webhook_log_cursors":       TablesUnlogged,
	"webhook_delivery_attempts": TablesUnlogged,
	"webhook_notifications":     TablesUnlogged,
	"change_log":                TablesUnlogged,
	"change_log_heads":          TablesUnlogged,
}

// Touched records the tables the statements of a context named, split by
// whether they read or wrote (WithTouched).
type Touched struct {
	read, wrote atomic.Uint32
}

// Read is the set of tables read.
func (t *Touched) Read() Tables { return Tables(t.read.Load()) }

// Wrote is the set of tables written (a statement that is not a read names
// them: the tables it reads count as written too).
func (t *Touched) Wrote() Tables { return Tables(t.wrote.Load()) }

type touchedKey struct{}

// WithTouched returns ctx whose statements are recorded in t.
func WithTouched(ctx context.Context, t *Touched) context.Context {
	return context.WithValue(ctx, touchedKey{}, t)
}

// touch records statement q, sent in a read scope or not (a write scope or
// a transaction: what the store method does, not what the text says), in
// ctx's Touched, if any.
func touch(ctx context.Context, q string, read bool) {
	t, _ := ctx.Value(touchedKey{}).(*Touched)
	if t == nil {
		return
	}
	if read {
		t.read.Or(uint32(statementTables(q)))
	} else {
		t.wrote.Or(uint32(statementTables(q)))
	}
}

// statements caches what each statement text names (the store's statements
// are a bounded set of texts; past maxStatements they are scanned each
// time).
var statements sync.Map // string → Tables
var statementsN atomic.Int64

const maxStatements = 20_000

func statementTables(q string) Tables {
	if v, ok := statements.Load(q); ok {
		return v.(Tables)
	}
	s := scanTables(q)
	if statementsN.Load() < maxStatements {
		if _, loaded := statements.LoadOrStore(q, s); !loaded {
			statementsN.Add(1)
		}
	}
	return s
}

// scanTables is the union of the bits of every table name q mentions as a
// word (over-matching a column or alias of the same name only drops more).
// A statement that names no table we know (a function call, a cursor) is
// unlogged: it could read anything.
func scanTables(q string) Tables {
	q = strings.ToLower(q)
	var out Tables
	found := false
	for name, bits := range tableBits {
		for i := 0; ; {
			j := strings.Index(q[i:], name)
			if j < 0 {
				break
			}
			j += i
			end := j + len(name)
			if (j == 0 || !wordByte(q[j-1])) && (end == len(q) || !wordByte(q[end])) {
				out |= bits
				found = true
				break
			}
			i = j + 1
		}
	}
	if !found {
		return TablesUnlogged
	}
	return out
}

func wordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}
