package db

import (
	"context"
	"time"

	"shipgraph/model"
)

// The journey of containers (migration 00013): their transport events and
// raw events (tenant data, read by container for the load plan: one
// statement per relationship and level), and vessels (reference data).

const (
	transportEventCols = `te.id, te.account_id, te.container_id, te.shipment_id, te.raw_event_id, te.scac,
	te.carrier_event_id, te.event, te.event_at, te.timezone, te.location_locode, te.port_id, te.terminal_id,
	te.rail_terminal_id, te.vessel_id, te.voyage_number, te.data_source, te.created_at`
	rawEventCols = `re.id, re.account_id, re.container_id, re.shipment_id, re.scac, re.carrier_event_id, re.event,
	re.original_event, re.estimated, re.event_at, re.timezone, re.location_name, re.location_locode, re.port_id,
	re.vessel_id, re.vessel_name, re.vessel_imo, re.voyage_number, re.position, re.payload, re.created_at`
	vesselCols = `v.id, v.imo, v.mmsi, v.name, v.call_sign, v.flag, v.latitude, v.longitude, v.nautical_speed_knots,
	v.navigational_heading_degrees, v.position_timestamp, v.created_at, v.updated_at`
)

// TransportEventsByContainerIDs reads the transport events of containers of
// the account, each container's in time order (events without a time
// last, then by when they were recorded).
func (db *DB) TransportEventsByContainerIDs(ctx context.Context, accountID string, containerIDs []string) ([]*model.TransportEventRecord, error) {
	return byIDs[model.TransportEventRecord](ctx, db.read(accountID), transportEventsByContainersSQL, containerIDs, accountID)
}

// transportEventsByContainersSQL is TransportEventsByContainerIDs'
// statement: by the unique key's (account_id, container_id) prefix, each
// container's few events sorted (migration 00067).
const transportEventsByContainersSQL = `SELECT ` + transportEventCols + ` FROM transport_events te
		 WHERE te.container_id = ANY($1) AND te.account_id = $2
		 ORDER BY te.container_id, te.event_at NULLS LAST, te.created_at, te.id`

// TransportEventsByIDs reads transport events of the account by id.
func (db *DB) TransportEventsByIDs(ctx context.Context, accountID string, ids []string) ([]*model.TransportEventRecord, error) {
	return byIDs[model.TransportEventRecord](ctx, db.read(accountID),
		`SELECT `+transportEventCols+` FROM transport_events te WHERE te.id = ANY($1) AND te.account_id = $2`, ids, accountID)
}

// RawEventsByContainerIDs reads the raw events of containers of the
// account, each container's in time order, then in the carrier's order
// (position).
func (db *DB) RawEventsByContainerIDs(ctx context.Context, accountID string, containerIDs []string) ([]*model.RawEvent, error) {
	return byIDs[model.RawEvent](ctx, db.read(accountID),
		`SELECT `+rawEventCols+` FROM raw_events re
		 WHERE re.container_id = ANY($1) AND re.account_id = $2
		 ORDER BY re.container_id, re.event_at NULLS LAST, re.position, re.id`, containerIDs, accountID)
}

// VesselsByIDs reads vessels (reference data) by id.
func (db *DB) VesselsByIDs(ctx context.Context, ids []string) ([]*model.Vessel, error) {
	return byIDs[model.Vessel](ctx, db.read(""), `SELECT `+vesselCols+` FROM vessels v WHERE v.id = ANY($1)`, ids)
}

// VesselByIMO reads the vessel of an IMO number (7 digits).
func (db *DB) VesselByIMO(ctx context.Context, imo string) (*model.Vessel, error) {
	return getOne[model.Vessel](ctx, db.read(""), "vessel", `SELECT `+vesselCols+` FROM vessels v WHERE v.imo = $1`, imo)
}

// PortCall is a call of a vessel at a port that the account's events
// plan or estimate: where (the port and its coordinates) and when.
type PortCall struct {
	PortID    string     `db:"port_id"`
	Latitude  *float64   `db:"latitude"`
	Longitude *float64   `db:"longitude"`
	EventAt   *time.Time `db:"event_at"`
	Event     string     `db:"event"`
}

// VesselFuturePortCalls reads the vessel's future port calls as the
// account's transport events tell them: events of the vessel with a time
// after now, or estimated (container.transport.estimated.*) ones, at a
// port, in time order, one per port and time. A vessel is reference data
// but the events are the account's: another account's plans are never
// read.
func (db *DB) VesselFuturePortCalls(ctx context.Context, accountID, vesselID string, now time.Time) ([]*PortCall, error) {
	if !validUUID(accountID) || !validUUID(vesselID) {
		return nil, nil
	}
	return selectAll[PortCall](ctx, db.read(accountID),
		`SELECT DISTINCT ON (te.event_at, te.port_id) te.port_id, p.latitude, p.longitude, te.event_at, te.event
		 FROM transport_events te JOIN ports p ON p.id = te.port_id
		 WHERE te.account_id = $1 AND te.vessel_id = $2 AND te.port_id IS NOT NULL
		   AND (te.event_at > $3 OR te.event LIKE 'container.transport.estimated.%')
		 ORDER BY te.event_at NULLS LAST, te.port_id, te.event
		 LIMIT 100`, accountID, vesselID, now)
}

// TransportEventIDsByContainerIDs reads only which transport events each
// container has (JSON:API linkage), in the order of
// TransportEventsByContainerIDs.
func (db *DB) TransportEventIDsByContainerIDs(ctx context.Context, accountID string, containerIDs []string) ([]Linked[string], error) {
	return byParentIDs(ctx, db.read(accountID),
		`SELECT te.container_id AS parent_id, te.id FROM transport_events te
		 WHERE te.container_id = ANY($1) AND te.account_id = $2
		 ORDER BY te.container_id, te.event_at NULLS LAST, te.created_at, te.id`, accountID, containerIDs, linkedID.linked)
}

// RawEventIDsByContainerIDs reads only which raw events each container
// has (JSON:API linkage), in the order of RawEventsByContainerIDs.
func (db *DB) RawEventIDsByContainerIDs(ctx context.Context, accountID string, containerIDs []string) ([]Linked[string], error) {
	return byParentIDs(ctx, db.read(accountID),
		`SELECT re.container_id AS parent_id, re.id FROM raw_events re
		 WHERE re.container_id = ANY($1) AND re.account_id = $2
		 ORDER BY re.container_id, re.event_at NULLS LAST, re.position, re.id`, accountID, containerIDs, linkedID.linked)
}
