package db

import (
	"context"

	"github.com/lib/pq"

	"shipgraph/model"
)

const shipmentCols = `s.id, s.account_id, s.bill_of_lading_number, s.normalized_number, s.ref_numbers, s.tags,
	s.shipping_line_id, s.shipping_line_scac, s.shipping_line_name, s.shipping_line_short_name,
	s.port_of_lading_id, s.port_of_lading_locode, s.port_of_lading_name, s.port_of_discharge_id,
	s.port_of_discharge_locode, s.port_of_discharge_name, s.destination_port_id,
	s.destination_metro_area_id, s.destination_locode, s.destination_name, s.pod_terminal_id,
	s.destination_terminal_id, s.destination_rail_terminal_id, s.customer_name, s.pod_vessel_name,
	s.pod_vessel_imo, s.pod_voyage_number, s.pol_etd_at, s.pol_atd_at, s.pod_eta_at,
	s.pod_original_eta_at, s.pod_ata_at, s.destination_eta_at, s.destination_ata_at,
	s.pol_timezone, s.pod_timezone, s.destination_timezone, s.line_tracking_last_attempted_at,
	s.line_tracking_last_succeeded_at, s.line_tracking_stopped_at, s.line_tracking_stopped_reason,
	s.line_tracking_stopped_by_user_id, s.created_at, s.updated_at, s.customer_id`

// shipmentContainerIDsCol is the ids of the shipment's containers (its
// /v2 containers linkage), read in the shipment's own statement (one
// probe of containers_shipment_id_idx per shipment, in the index's
// order, ContainerIDsByShipmentIDs') instead of a statement reading a row
// per container: an optional column, selected only when a read names it
// (/v2 renders the linkage; GraphQL never needs it). It names the
// statement's account parameter for Citus, as containerJourneyCols does.
const shipmentContainerIDsCol = `ARRAY(SELECT c.id FROM containers c
	 WHERE c.shipment_id = s.id AND c.account_id = s.account_id AND c.account_id = ` + accountParam + `
	 ORDER BY c.created_at, c.id) AS container_ids`

// shipmentColsAt is the shipment select list under db's selection, its
// containers' ids subquery naming the account as param ("$1", "$2" …).
func (db *DB) shipmentColsAt(param string) string { return db.colsAt("Shipment", param) }

var shipmentList = &listSpec{
	plural:  "shipments",
	counted: "shipments",
	from:    "shipments s",
	alias:   "s",
	cols:    shipmentCols,
	orders: map[string]sortSpec{
		"created_at":            {expr: "s.created_at", typ: "timestamptz"},
		"pod_eta_at":            {expr: "coalesce(s.pod_eta_at, 'infinity'::timestamptz)", typ: "timestamptz"},
		"bill_of_lading_number": {expr: "s.bill_of_lading_number", typ: "text"},
	},
}

type shipmentRow struct {
	model.Shipment
	pageMeta
}

type linkedShipment struct {
	ParentID string `db:"parent_id"`
	model.Shipment
}

func (r linkedShipment) linked() Linked[*model.Shipment] {
	s := r.Shipment
	return Linked[*model.Shipment]{ParentID: r.ParentID, Item: &s}
}

// ShipmentsByIDs reads shipments of the account.
func (db *DB) ShipmentsByIDs(ctx context.Context, accountID string, ids []string) ([]*model.Shipment, error) {
	return byIDs[model.Shipment](ctx, db.read(accountID),
		`SELECT `+db.shipmentColsAt("$2")+` FROM shipments s WHERE s.id = ANY($1) AND s.account_id = $2`, ids, accountID)
}

// ShipmentsByDocumentIDs reads the shipments linked to documents.
func (db *DB) ShipmentsByDocumentIDs(ctx context.Context, accountID string, documentIDs []string) ([]Linked[*model.Shipment], error) {
	cols, rest := shipmentsByDocument(db, "$1", "$2")
	return byParentIDs(ctx, db.read(accountID), `SELECT `+cols+` `+rest, accountID, documentIDs, linkedShipment.linked)
}

func shipmentsByDocument(db *DB, ids, account string) (string, string) {
	return `ds.document_id AS parent_id, ` + db.shipmentColsAt(account),
		`FROM document_shipments ds JOIN shipments s ON s.account_id = ds.account_id AND s.id = ds.shipment_id
		 WHERE ds.document_id = ANY(` + ids + `) AND ds.account_id = ` + account + `
		 ORDER BY ds.document_id, s.created_at, s.id`
}

// ShipmentsByDocument is ShipmentsByDocumentIDs as a batch read that a
// joint read (ReadJoint) may run with others.
var ShipmentsByDocument = newLinkBatch(shipmentsByDocument, func(r *linkedShipment) Linked[*model.Shipment] {
	return Linked[*model.Shipment]{ParentID: r.ParentID, Item: &r.Shipment}
})

// ListShipments reads one page of the account's shipments.
func (db *DB) ListShipments(ctx context.Context, accountID string, f model.ShipmentFilter, p model.PageRequest) (*model.Page[*model.Shipment], error) {
	st, err := shipmentList.pageQuery(shipmentFilter(accountID, f), p, db.shipmentColsAt("$1"))
	if err != nil {
		return nil, err
	}
	return readPage(ctx, db.read(accountID), st, func(r *shipmentRow) (*model.Shipment, *pageMeta) { return &r.Shipment, &r.pageMeta })
}

// CountShipments counts the account's shipments that match f.
func (db *DB) CountShipments(ctx context.Context, accountID string, f model.ShipmentFilter) (int, error) {
	return count(ctx, db.read(accountID), shipmentList, shipmentFilter(accountID, f))
}

// shipmentFilter maps a filter to SQL. Tracked numbers are compared
// upper-cased on both sides (expression indexes on upper(…) exist).
func shipmentFilter(accountID string, f model.ShipmentFilter) *conds {
	c := &conds{}
	c.add("s.account_id = %s", accountID)
	if len(f.IDs) > 0 {
		c.add("s.id = ANY(%s)", pq.Array(validUUIDs(f.IDs)))
	}
	if t := normalizeNumber(f.Search); t != "" {
		// One indexed branch per way a shipment can match, instead of an OR
		// the planner could only evaluate row by row over the whole account.
		c.add(`s.id IN (
			SELECT x.id FROM shipments x WHERE x.account_id = %[1]s AND upper(x.bill_of_lading_number) LIKE %[2]s ESCAPE '\'
			UNION ALL SELECT x.id FROM shipments x WHERE x.account_id = %[1]s AND upper(x.normalized_number) = %[3]s::text
			UNION ALL SELECT x.id FROM shipments x WHERE x.account_id = %[1]s AND x.ref_numbers @> ARRAY[%[3]s::text]
			UNION ALL SELECT c.shipment_id FROM containers c WHERE c.account_id = %[1]s AND upper(c.number) = %[3]s::text)`,
			accountID, escapeLike(t)+"%", t)
	}
	if t := normalizeNumber(f.Number); t != "" {
		c.add("(upper(s.bill_of_lading_number) = %[1]s OR upper(s.normalized_number) = %[1]s)", t)
	}
	if len(f.ShippingLineScacs) > 0 {
		c.add("s.shipping_line_scac = ANY(%s)", pq.Array(f.ShippingLineScacs))
	}
	if len(f.PortOfDischargeIDs) > 0 {
		c.add("s.port_of_discharge_id = ANY(%s)", pq.Array(validUUIDs(f.PortOfDischargeIDs)))
	}
	if len(f.PodTerminalIDs) > 0 {
		c.add("s.pod_terminal_id = ANY(%s)", pq.Array(validUUIDs(f.PodTerminalIDs)))
	}
	// ETA bounds are written on the sort expression so the (account_id,
	// coalesce(pod_eta_at, 'infinity'), id) index serves them; an unknown
	// ETA is never inside a range.
	if f.EtaFrom != nil {
		c.add("s.pod_eta_at IS NOT NULL AND coalesce(s.pod_eta_at, 'infinity'::timestamptz) >= %s", *f.EtaFrom)
	}
	if f.EtaTo != nil {
		c.add("s.pod_eta_at IS NOT NULL AND coalesce(s.pod_eta_at, 'infinity'::timestamptz) < %s", *f.EtaTo)
	}
	if len(f.Tags) > 0 {
		c.add("s.tags @> %s::text[]", pq.Array(f.Tags))
	}
	if f.TrackingStopped != nil {
		if *f.TrackingStopped {
			c.add("s.line_tracking_stopped_at IS NOT NULL")
		} else {
			c.add("s.line_tracking_stopped_at IS NULL")
		}
	}
	return c
}
