package db

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"shipgraph/model"
)

// Columns exposes the column lists to the external tests, which check them
// against the model structs' db tags.
var Columns = map[string]string{
	"Account":                accountCols,
	"User":                   userCols,
	"APIToken":               tokenCols,
	"Port":                   portCols,
	"MetroArea":              metroAreaCols,
	"Terminal":               terminalCols,
	"RailTerminal":           railTerminalCols,
	"ShippingLine":           shippingLineCols,
	"Shipment":               shipmentCols + ", " + strings.ReplaceAll(shipmentContainerIDsCol, accountParam, "s.account_id"),
	"Container":              containerCols + ", " + strings.ReplaceAll(containerJourneyCols, accountParam, "c.account_id"),
	"Document":               documentCols,
	"EmailSubmission":        emailSubmissionCols,
	"DocumentRepresentation": documentRepresentationCols,
	"CustomFieldDefinition":  customFieldDefinitionCols,
	"CustomFieldOption":      customFieldOptionCols,
	"CustomField":            customFieldCols,
}

// SelectItems splits a select list into its items, as the pickers do.
func SelectItems(list string) []string { return splitSelect(list) }

// OutputNames returns the output column names of a select list.
func OutputNames(list string) []string {
	items := splitSelect(list)
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = outputName(it)
	}
	return names
}

// ScanBoth reads query into values of R through the row plans of scan.go
// and through sqlx, for the tests that compare them. The plans read on
// both their paths (the raw driver rows and database/sql's); a difference
// between the two is an error.
func ScanBoth[R any](ctx context.Context, d *DB, query string, args ...any) (plans, viaSqlx []R, err error) {
	var viaRaw []R
	storable := rawStorable(reflect.TypeFor[R]())
	if storable {
		read := false
		err := d.q.ExtContext.(*prepared).queryRaw(ctx, query, args, func(rows driver.Rows) error {
			read = true
			_, err := readDriverRows(rows, func(v *R) { viaRaw = append(viaRaw, *v) }, false)
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		if !read {
			return nil, nil, errors.New("db: the raw path did not read")
		}
	}
	if _, err := scanSQLRows(ctx, d.q, func(v *R) { plans = append(plans, *v) }, false, query, args...); err != nil {
		return nil, nil, err
	}
	if storable && !reflect.DeepEqual(viaRaw, plans) {
		return nil, nil, fmt.Errorf("db: the raw path read %+v, database/sql's %+v", viaRaw, plans)
	}
	if err := sqlx.SelectContext(ctx, d.q, &viaSqlx, query, args...); err != nil {
		return nil, nil, err
	}
	return plans, viaSqlx, nil
}

// Migrations are the embedded migrations, for the test that migrates a
// seeded database down and up again (distribution_test.go).
var Migrations = migrations

var CustomFieldFrom = customFieldFrom

// SetReferenceClock makes the reference caches read the time from now
// instead of time.Now: a test moves it past the TTL instead of sleeping.
func (db *DB) SetReferenceClock(now func() time.Time) {
	setClock(&db.ref.ports, now)
	setClock(&db.ref.metroAreas, now)
	setClock(&db.ref.terminals, now)
	setClock(&db.ref.railTerminals, now)
	setClock(&db.ref.shippingLines, now)
}

func setClock[T any](c *refCache[T], now func() time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clock = now
}

// SetSearchWindow makes Search read n newest records of a type before it
// turns to the text indexes (search.go), so a test's few records take
// both ways.
func (db *DB) SetSearchWindow(n int) { db.searchWindow = n }

// ScanStringArray exposes the rows' text array reader to the tests.
var ScanStringArray = scanStringArray

// SelectRows reads query through the row plans of scan.go, as a prepared
// statement of the pool, or unprepared (without arguments lib/pq sends it
// by the simple protocol, whose values all arrive as text).
func SelectRows[R any](ctx context.Context, d *DB, unprepared bool, query string, args ...any) ([]R, error) {
	var q sqlx.QueryerContext = d.q
	if unprepared {
		q = d.db
	}
	var out []R
	err := selectRows(ctx, q, func(v *R) { out = append(out, *v) }, query, args...)
	return out, err
}

// QueryRow runs query through the transaction's scope, as its statements
// run.
func (t *TrackingTx) QueryRow(query string, args ...any) *sqlx.Row {
	return t.q.QueryRowxContext(t.ctx, query, args...)
}

// TextFormCols are the pickers' whole lists (optional items included, the
// account placeholder as the row's own account) with their columns in
// text form, against the plain lists of Columns.
var TextFormCols = map[string]string{
	"Shipment":  pickers["Shipment"].list(pickers["Shipment"].order, "s.account_id"),
	"Container": pickers["Container"].list(pickers["Container"].order, "c.account_id"),
	"Document":  pickers["Document"].list(pickers["Document"].order, ""),
}

// ScanPlans reads query's rows through the row plans.
func ScanPlans[R any](ctx context.Context, d *DB, query string, args ...any) (out []R, err error) {
	err = selectRows(ctx, d.q, func(v *R) { out = append(out, *v) }, query, args...)
	return out, err
}

// ParseTimestamp is the row reader's timestamp parser.
var ParseTimestamp = parseTimestamp

// ShipmentPage returns the statement and arguments of a page of the
// account's shipments under filter f, as ListShipments runs it.
func ShipmentPage(accountID string, f model.ShipmentFilter, p model.PageRequest) (string, []any, error) {
	st, err := shipmentList.pageQuery(shipmentFilter(accountID, f), p, pickers["Shipment"].all)
	if err != nil {
		return "", nil, err
	}
	return st.query, st.args, nil
}

// ContainerPage returns the statement and arguments of a page of the
// account's containers under filter f, as ListContainers runs it.
func ContainerPage(accountID string, f model.ContainerFilter, p model.PageRequest) (string, []any, error) {
	st, err := containerList.pageQuery(containerFilter(accountID, f), p, pickers["Container"].all)
	if err != nil {
		return "", nil, err
	}
	return st.query, st.args, nil
}

// TrackingRequestPage returns the statement and arguments of a page of the
// account's tracking requests under filter f, as ListTrackingRequests runs it.
func TrackingRequestPage(accountID string, f model.TrackingRequestFilter, p model.PageRequest) (string, []any, error) {
	st, err := trackingRequestList.pageQuery(trackingRequestFilter(accountID, f), p, trackingRequestList.cols)
	if err != nil {
		return "", nil, err
	}
	return st.query, st.args, nil
}

// ShipmentCountStatement is the statement CountShipments runs under filter f
// (a filtered count: the rows themselves).
func ShipmentCountStatement(accountID string, f model.ShipmentFilter) (string, []any) {
	c := shipmentFilter(accountID, f)
	return "SELECT count(*) FROM " + shipmentList.from + " WHERE " + c.sql(), c.args
}

// TransportEventsByContainersSQL is TransportEventsByContainerIDs' statement.
const TransportEventsByContainersSQL = transportEventsByContainersSQL

// The change log readers' statements (TestChangeLogReadersUseTheirIndexes).
const (
	ChangeLogPageFrom    = changeLogPageFrom
	ChangeLogPosSQL      = changeLogPosSQL
	ChangeLogLagSQL      = changeLogLagSQL
	ChangeLogPruneSQL    = changeLogPruneSQL
	ChangeLogHeldBackSQL = changeLogHeldBackSQL
)

// HeldTrackingConns is how many connections the tracking transactions
// hold now, between them (tracking_conns.go).
func (db *DB) HeldTrackingConns() int { return db.held.heldNow() }
