package db

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/lib/pq"
)

// The data sync's tables (package datasync): what each exported table is,
// named and typed as the public service's DataSync tables, and the
// statements that read an account's rows of them from the store. Each row
// is read whole, as it is now, by key: a change in the log says which rows
// to read again, never what they hold, so applying a change twice gives
// the same row.

// SyncColumn is one column of an exported table.
type SyncColumn struct {
	Name string
	// Type is the destination's column type: text, timestamp, integer or
	// bigint.
	Type string
	expr string
}

// SyncTable is one exported table.
type SyncTable struct {
	// Name is the table's name at the destination.
	Name string
	// Columns; the first is the key.
	Columns []SyncColumn
	// from is the FROM clause; its main table is aliased x and carries
	// account_id and id.
	from string
	// parents are, by record type, the column of x naming the record
	// whose change makes the row read again (containers carry their
	// shipment's columns).
	parents map[string]string
}

// Key is the name of the table's key column.
func (t *SyncTable) Key() string { return t.Columns[0].Name }

// Sync table names.
const (
	SyncShipments         = "shipments"
	SyncContainers        = "containers"
	SyncTrackingRequests  = "tracking_requests"
	SyncTransportEvents   = "transport_events"
	SyncTransferStatus    = "_transfer_status"
	syncTimestamp, syncTx = "timestamp", "text"
)

func col(name, typ, expr string) SyncColumn { return SyncColumn{Name: name, Type: typ, expr: expr} }
func txt(name, expr string) SyncColumn      { return col(name, syncTx, expr) }
func ts(name, expr string) SyncColumn       { return col(name, syncTimestamp, expr) }

// sortedTags is a text[] column's members sorted and joined with commas,
// as DataSync writes tags.
func sortedTags(c string) string {
	return "(SELECT string_agg(t, ',' ORDER BY t) FROM unnest(" + c + ") t)"
}

var syncTables = []*SyncTable{
	{
		Name: SyncShipments,
		from: `shipments x
LEFT JOIN terminals pt ON pt.id = x.pod_terminal_id
LEFT JOIN terminals dt ON dt.id = x.destination_terminal_id`,
		Columns: []SyncColumn{
			txt("shipment_id", "x.id::text"),
			txt("shipping_line_scac", "x.shipping_line_scac"),
			txt("shipping_line_name", "x.shipping_line_name"),
			txt("bill_of_lading_number", "x.bill_of_lading_number"),
			txt("normalized_number", "x.normalized_number"),
			txt("reference_numbers", "array_to_string(x.ref_numbers, ', ')"),
			txt("tags", sortedTags("x.tags")),
			txt("customer_id", "x.account_id::text"),
			txt("customer_name", "x.customer_name"),
			txt("pol_locode", "x.port_of_lading_locode"),
			txt("pod_locode", "x.port_of_discharge_locode"),
			txt("pod_terminal_firms_code", "pt.firms_code"),
			txt("destination_locode", "x.destination_locode"),
			txt("destination_terminal_firms_code", "dt.firms_code"),
			ts("pol_atd_at", "x.pol_atd_at"),
			ts("pol_etd_at", "x.pol_etd_at"),
			ts("pod_eta_at", "x.pod_eta_at"),
			ts("pod_arrived_at", "x.pod_ata_at"),
			txt("pod_voyage_number", "x.pod_voyage_number"),
			txt("pod_vessel_name", "x.pod_vessel_name"),
			txt("pod_vessel_imo", "x.pod_vessel_imo"),
			ts("line_tracking_last_succeeded_at", "x.line_tracking_last_succeeded_at"),
			ts("line_tracking_stopped_at", "x.line_tracking_stopped_at"),
			txt("line_tracking_stopped_reason", "x.line_tracking_stopped_reason"),
			ts("created_at", "x.created_at"),
			ts("updated_at", "x.updated_at"),
		},
	},
	{
		Name:    SyncContainers,
		parents: map[string]string{"shipment": "shipment_id"},
		from: `containers x
JOIN shipments s ON s.account_id = x.account_id AND s.id = x.shipment_id
LEFT JOIN terminals pt ON pt.id = coalesce(x.pod_terminal_id, s.pod_terminal_id)
LEFT JOIN terminals dt ON dt.id = s.destination_terminal_id`,
		Columns: []SyncColumn{
			txt("container_id", "x.id::text"),
			txt("container_number", "x.number"),
			txt("shipment_id", "x.shipment_id::text"),
			txt("shipment_bill_of_lading_number", "s.bill_of_lading_number"),
			txt("shipment_normalized_number", "s.normalized_number"),
			txt("shipment_reference_numbers", "array_to_string(s.ref_numbers, ', ')"),
			txt("container_reference_numbers", "array_to_string(x.ref_numbers, ', ')"),
			txt("shipment_tags", sortedTags("s.tags")),
			txt("customer_id", "x.account_id::text"),
			txt("customer_name", "s.customer_name"),
			txt("shipping_line_scac", "s.shipping_line_scac"),
			txt("shipping_line_name", "s.shipping_line_name"),
			txt("pol_locode", "s.port_of_lading_locode"),
			txt("pol_timezone", "s.pol_timezone"),
			txt("pod_locode", "s.port_of_discharge_locode"),
			txt("pod_timezone", "coalesce(x.pod_timezone, s.pod_timezone)"),
			txt("pod_terminal_firms_code", "pt.firms_code"),
			txt("pod_terminal_nickname", "pt.nickname"),
			txt("pod_terminal_name", "pt.name"),
			txt("destination_locode", "s.destination_locode"),
			txt("destination_timezone", "coalesce(x.final_destination_timezone, s.destination_timezone)"),
			txt("destination_terminal_firms_code", "dt.firms_code"),
			txt("destination_terminal_nickname", "dt.nickname"),
			txt("destination_terminal_name", "dt.name"),
			ts("pol_etd_at", "s.pol_etd_at"),
			ts("pol_atd_at", "s.pol_atd_at"),
			ts("pod_eta_at", "s.pod_eta_at"),
			ts("pod_arrived_at", "coalesce(x.pod_arrived_at, s.pod_ata_at)"),
			ts("pod_discharged_at", "x.pod_discharged_at"),
			ts("pod_last_free_day_on", "x.pickup_lfd_terminal"),
			ts("ssl_last_free_day_on", "x.pickup_lfd_line"),
			ts("pod_pickup_appointment_at", "x.pickup_appointment_at"),
			ts("pod_full_out_at", "x.pod_full_out_at"),
			ts("rail_loaded_at", "x.pod_rail_loaded_at"),
			ts("rail_departed_at", "x.pod_rail_departed_at"),
			ts("destination_eta_at", "coalesce(x.ind_eta_at, s.destination_eta_at)"),
			ts("destination_arrived_at", "coalesce(x.ind_ata_at, s.destination_ata_at)"),
			ts("rail_unloaded_at", "x.ind_rail_unloaded_at"),
			ts("destination_full_out_at", "x.final_destination_full_out_at"),
			ts("empty_terminated_at", "x.empty_terminated_at"),
			txt("fees_at_pod_terminal", "x.fees_at_pod_terminal::text"),
			txt("holds_at_pod_terminal", "x.holds_at_pod_terminal::text"),
			txt("location_at_pod_terminal", "x.location_at_pod_terminal"),
			txt("availability_known", "CASE WHEN x.availability_known THEN 'Yes' ELSE 'No' END"),
			txt("available_for_pickup", "CASE WHEN x.availability_known THEN CASE WHEN x.available_for_pickup THEN 'Yes' ELSE 'No' END END"),
			col("equipment_length", "integer", "x.equipment_length::int8"),
			txt("equipment_type", "x.equipment_type"),
			txt("equipment_height", "x.equipment_height"),
			col("weight_in_lbs", "integer", "round(x.weight_in_lbs)::int8"),
			txt("seal_number", "x.seal_number"),
			txt("pod_full_out_chassis_number", "x.pod_full_out_chassis_number"),
			txt("pod_voyage_number", "s.pod_voyage_number"),
			txt("pod_vessel_name", "s.pod_vessel_name"),
			txt("pod_vessel_imo", "s.pod_vessel_imo"),
			ts("terminal_checked_at", "x.terminal_checked_at"),
			ts("line_tracking_last_succeeded_at", "s.line_tracking_last_succeeded_at"),
			ts("line_tracking_stopped_at", "s.line_tracking_stopped_at"),
			txt("line_tracking_stopped_reason", "s.line_tracking_stopped_reason"),
			ts("created_at", "x.created_at"),
			ts("updated_at", "x.updated_at"),
		},
	},
	{
		Name: SyncTrackingRequests,
		from: `tracking_requests x`,
		Columns: []SyncColumn{
			txt("tracking_request_id", "x.id::text"),
			txt("request_number", "x.request_number"),
			txt("reference_numbers", "array_to_string(x.ref_numbers, ', ')"),
			txt("shipment_tags", sortedTags("x.tags")),
			txt("status", "x.status"),
			txt("failed_reason", "x.failed_reason"),
			txt("request_type", "x.request_type"),
			txt("scac", "x.scac"),
			txt("shipment_id", "x.shipment_id::text"),
			ts("created_at", "x.created_at"),
			ts("updated_at", "x.updated_at"),
		},
	},
	{
		Name:    SyncTransportEvents,
		parents: map[string]string{"shipment": "shipment_id", "container": "container_id"},
		from: `transport_events x
JOIN containers c ON c.account_id = x.account_id AND c.id = x.container_id
JOIN shipments s ON s.account_id = x.account_id AND s.id = x.shipment_id
LEFT JOIN ports p ON p.id = x.port_id
LEFT JOIN terminals t ON t.id = x.terminal_id
LEFT JOIN vessels v ON v.id = x.vessel_id`,
		Columns: []SyncColumn{
			txt("id", "x.id::text"),
			txt("event", "x.event"),
			ts("event_timestamp", "x.event_at"),
			txt("container_id", "x.container_id::text"),
			txt("container_number", "c.number"),
			txt("shipment_id", "x.shipment_id::text"),
			txt("shipment_number", "s.bill_of_lading_number"),
			txt("port_metro_id", "x.port_id::text"),
			txt("port_metro_locode", "coalesce(p.code, x.location_locode)"),
			txt("port_metro_country_code", "p.country_code"),
			txt("port_metro_city", "p.city"),
			txt("port_metro_time_zone", "coalesce(x.timezone, p.time_zone)"),
			txt("facility_id", "x.terminal_id::text"),
			txt("facility_firms_code", "t.firms_code"),
			txt("facility_nickname", "t.nickname"),
			txt("facility_name", "t.name"),
			txt("vessel_id", "x.vessel_id::text"),
			txt("vessel_name", "v.name"),
			txt("vessel_imo", "v.imo"),
			txt("vessel_mmsi", "v.mmsi"),
			txt("voyage_number", "x.voyage_number"),
			txt("data_source_label", "x.data_source"),
			ts("created_at", "x.created_at"),
			ts("updated_at", "x.created_at"),
		},
	},
}

// SyncTables are the exported tables, in the order a destination fills
// them.
func SyncTables() []*SyncTable { return syncTables }

// LookupSyncTable is the exported table of that name (nil: none).
func LookupSyncTable(name string) *SyncTable {
	for _, t := range syncTables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// SyncTableOf is the table whose rows a logged change of a record of that
// type makes read again by key ("": none).
func SyncTableOf(recordType string) string {
	switch recordType {
	case "shipment":
		return SyncShipments
	case "container":
		return SyncContainers
	case "tracking_request":
		return SyncTrackingRequests
	case "transport_event":
		return SyncTransportEvents
	}
	return ""
}

// ReadsParent reports whether a change of a record of that type makes the
// table's rows that name it read again (their parent's columns).
func (t *SyncTable) ReadsParent(recordType string) bool { return t.parents[recordType] != "" }

func (t *SyncTable) selectList() string {
	var b strings.Builder
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.expr)
	}
	return b.String()
}

// SyncRow is one row of an exported table: the columns' values in order
// (string, time.Time in UTC, int64 or nil).
type SyncRow []any

// Key is the row's key.
func (r SyncRow) Key() string { s, _ := r[0].(string); return s }

func scanSyncRows(rows *sql.Rows, n int) ([]SyncRow, error) {
	defer rows.Close()
	var out []SyncRow
	for rows.Next() {
		row := make(SyncRow, n)
		ptrs := make([]any, n)
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, mapErr(err)
		}
		for i, v := range row {
			switch v := v.(type) {
			case []byte:
				row[i] = string(v)
			case time.Time:
				row[i] = v.UTC()
			}
		}
		out = append(out, row)
	}
	return out, mapErr(rows.Err())
}

// SyncPage reads up to limit of the account's rows of the table with keys
// after after, in key order (a backfill's page; bounded memory at any
// size). Its statements go to the primary: the page must hold every
// change committed before it was read, as the log positions say.
func (db *DB) SyncPage(ctx context.Context, accountID string, t *SyncTable, after string, limit int) ([]SyncRow, error) {
	if after == "" {
		after = "00000000-0000-0000-0000-000000000000"
	}
	rows, err := db.readPrimary(accountID).QueryContext(ctx, fmt.Sprintf(`SELECT %s FROM %s
WHERE x.account_id = $1 AND x.id > $2::uuid ORDER BY x.id LIMIT $3`, t.selectList(), t.from), accountID, after, limit)
	if err != nil {
		return nil, mapErr(err)
	}
	return scanSyncRows(rows, len(t.Columns))
}

// SyncRows reads the account's rows of the table with the keys given, and
// those whose parent of a record type is one of parents[type] (from the
// primary, as SyncPage).
func (db *DB) SyncRows(ctx context.Context, accountID string, t *SyncTable, keys []string, parents map[string][]string) ([]SyncRow, error) {
	where := []string{"x.id = ANY($2::uuid[])"}
	args := []any{accountID, pq.Array(validUUIDs(keys))}
	for typ, ids := range parents {
		if c := t.parents[typ]; c != "" && len(ids) > 0 {
			args = append(args, pq.Array(validUUIDs(ids)))
			where = append(where, fmt.Sprintf("x.%s = ANY($%d::uuid[])", c, len(args)))
		}
	}
	rows, err := db.readPrimary(accountID).QueryContext(ctx, fmt.Sprintf(`SELECT %s FROM %s
WHERE x.account_id = $1 AND (%s)`, t.selectList(), t.from, strings.Join(where, " OR ")), args...)
	if err != nil {
		return nil, mapErr(err)
	}
	return scanSyncRows(rows, len(t.Columns))
}

// SyncLogPage reads the account's change log after position after from
// the primary (ReadAccountChangeLogPage may read a replica, which may not
// yet hold the rows SyncRows reads next).
func (db *DB) SyncLogPage(ctx context.Context, accountID string, after int64, limit int) (AccountChangeLogPage, error) {
	return readLogPage(ctx, db.readPrimary(accountID), `0::int8`, db.barrierCol(), accountID, after, limit, false)
}

// SyncLogHead is the account's last committed log position, read from the
// primary (AccountChangeLogHead).
func (db *DB) SyncLogHead(ctx context.Context, accountID string) (int64, error) {
	return db.AccountChangeLogHead(ctx, accountID)
}
