package db

import (
	"context"

	"github.com/lib/pq"

	"shipgraph/model"
)

const containerCols = `c.id, c.account_id, c.shipment_id, c.number, c.ref_numbers, c.equipment_type,
	c.equipment_length, c.equipment_height, c.weight_in_lbs, c.seal_number, c.pod_terminal_id,
	c.pickup_facility_id, c.pickup_appointment_at, c.availability_known, c.available_for_pickup,
	c.pod_arrived_at, c.pod_discharged_at, c.pod_full_out_at, c.terminal_checked_at,
	c.pod_full_out_chassis_number, c.location_at_pod_terminal, c.final_destination_full_out_at,
	c.empty_terminated_at, c.holds_at_pod_terminal, c.fees_at_pod_terminal, c.pod_timezone,
	c.final_destination_timezone, c.empty_terminated_timezone, c.pod_rail_carrier_scac,
	c.ind_rail_carrier_scac, c.pod_last_tracking_request_at, c.shipment_last_tracking_request_at,
	c.pod_rail_loaded_at, c.pod_rail_departed_at, c.ind_eta_at, c.ind_ata_at,
	c.ind_rail_unloaded_at, c.ind_facility_lfd_on, c.pickup_lfd_terminal, c.pickup_lfd_rail,
	c.pickup_lfd_line, c.pickup_lfd, c.current_status, c.created_at, c.updated_at`

// containerJourneyCols are the container's journey linkage, read in the
// container's own statement (one index probe per container) instead of
// a statement per relationship: optional columns, selected only when a
// read names them (/v2 renders the linkage; GraphQL never needs it).
// Their order is TransportEventIDsByContainerIDs' and
// RawEventIDsByContainerIDs'. The subqueries name the statement's account
// parameter (accountParam, replaced by containerColsAt), not only the outer
// row's account: Citus prunes a correlated subquery to one shard only by a
// parameter or constant, so with c.account_id alone the read went to every
// shard.
const containerJourneyCols = `ARRAY(SELECT te.id FROM transport_events te
	 WHERE te.container_id = c.id AND te.account_id = c.account_id AND te.account_id = ` + accountParam + `
	 ORDER BY te.event_at NULLS LAST, te.created_at, te.id) AS transport_event_ids,
	ARRAY(SELECT re.id FROM raw_events re
	 WHERE re.container_id = c.id AND re.account_id = c.account_id AND re.account_id = ` + accountParam + `
	 ORDER BY re.event_at NULLS LAST, re.position, re.id) AS raw_event_ids`

// accountParam stands for the account's parameter in a select list whose
// items name it; the picker puts the statement's own in its place once
// per selection (containerColsAt).
const accountParam = "$account"

// containerColsAt is the container select list under db's selection, its
// journey subqueries naming the account as param ("$1", "$2" …).
func (db *DB) containerColsAt(param string) string { return db.colsAt("Container", param) }

var containerList = &listSpec{
	plural:  "containers",
	counted: "containers",
	from:    "containers c",
	alias:   "c",
	cols:    containerCols,
	orders: map[string]sortSpec{
		"created_at": {expr: "c.created_at", typ: "timestamptz"},
		"pickup_lfd": {expr: "coalesce(c.pickup_lfd, 'infinity'::timestamptz)", typ: "timestamptz"},
		"number":     {expr: "c.number", typ: "text"},
	},
}

type containerRow struct {
	model.Container
	pageMeta
}

type linkedContainer struct {
	ParentID string `db:"parent_id"`
	model.Container
}

func (r linkedContainer) linked() Linked[*model.Container] {
	c := r.Container
	return Linked[*model.Container]{ParentID: r.ParentID, Item: &c}
}

// ContainersByIDs reads containers of the account.
func (db *DB) ContainersByIDs(ctx context.Context, accountID string, ids []string) ([]*model.Container, error) {
	return byIDs[model.Container](ctx, db.read(accountID),
		`SELECT `+db.containerColsAt("$2")+` FROM containers c WHERE c.id = ANY($1) AND c.account_id = $2`, ids, accountID)
}

// ContainersByShipmentIDs reads the containers of shipments; rows carry
// their shipment id and come in (shipment, created_at, id) order.
func (db *DB) ContainersByShipmentIDs(ctx context.Context, accountID string, shipmentIDs []string) ([]*model.Container, error) {
	return ContainersByShipment.Read(ctx, db, accountID, shipmentIDs)
}

// ContainersByShipment is ContainersByShipmentIDs as a batch read that a
// joint read (ReadJoint) may run with others.
var ContainersByShipment = newBatch[model.Container](func(db *DB, ids, account string) (string, string) {
	return db.containerColsAt(account), `FROM containers c WHERE c.shipment_id = ANY(` + ids + `) AND c.account_id = ` + account + `
		 ORDER BY c.shipment_id, c.created_at, c.id`
})

// ContainerIDsByShipmentIDs reads only which containers each shipment has
// (JSON:API linkage), in the order of ContainersByShipmentIDs.
func (db *DB) ContainerIDsByShipmentIDs(ctx context.Context, accountID string, shipmentIDs []string) ([]Linked[string], error) {
	return byParentIDs(ctx, db.read(accountID),
		`SELECT c.shipment_id AS parent_id, c.id FROM containers c WHERE c.shipment_id = ANY($1) AND c.account_id = $2
		 ORDER BY c.shipment_id, c.created_at, c.id`, accountID, shipmentIDs, linkedID.linked)
}

// linkedID is an id with the parent it belongs to.
type linkedID struct {
	ParentID string `db:"parent_id"`
	ID       string `db:"id"`
}

func (r linkedID) linked() Linked[string] { return Linked[string]{ParentID: r.ParentID, Item: r.ID} }

// ContainersByDocumentIDs reads the containers linked to documents.
func (db *DB) ContainersByDocumentIDs(ctx context.Context, accountID string, documentIDs []string) ([]Linked[*model.Container], error) {
	cols, rest := containersByDocument(db, "$1", "$2")
	return byParentIDs(ctx, db.read(accountID), `SELECT `+cols+` `+rest, accountID, documentIDs, linkedContainer.linked)
}

func containersByDocument(db *DB, ids, account string) (string, string) {
	return `dc.document_id AS parent_id, ` + db.containerColsAt(account),
		`FROM document_containers dc JOIN containers c ON c.account_id = dc.account_id AND c.id = dc.container_id
		 WHERE dc.document_id = ANY(` + ids + `) AND dc.account_id = ` + account + `
		 ORDER BY dc.document_id, c.created_at, c.id`
}

// ContainersByDocument is ContainersByDocumentIDs as a batch read that a
// joint read (ReadJoint) may run with others.
var ContainersByDocument = newLinkBatch(containersByDocument, func(r *linkedContainer) Linked[*model.Container] {
	return Linked[*model.Container]{ParentID: r.ParentID, Item: &r.Container}
})

// ListContainers reads one page of the account's containers.
func (db *DB) ListContainers(ctx context.Context, accountID string, f model.ContainerFilter, p model.PageRequest) (*model.Page[*model.Container], error) {
	st, err := containerList.pageQuery(containerFilter(accountID, f), p, db.containerColsAt("$1"))
	if err != nil {
		return nil, err
	}
	return readPage(ctx, db.read(accountID), st, func(r *containerRow) (*model.Container, *pageMeta) { return &r.Container, &r.pageMeta })
}

// CountContainers counts the account's containers that match f.
func (db *DB) CountContainers(ctx context.Context, accountID string, f model.ContainerFilter) (int, error) {
	return count(ctx, db.read(accountID), containerList, containerFilter(accountID, f))
}

func containerFilter(accountID string, f model.ContainerFilter) *conds {
	c := &conds{}
	c.add("c.account_id = %s", accountID)
	if len(f.IDs) > 0 {
		c.add("c.id = ANY(%s)", pq.Array(validUUIDs(f.IDs)))
	}
	if len(f.ShipmentIDs) > 0 {
		c.add("c.shipment_id = ANY(%s)", pq.Array(validUUIDs(f.ShipmentIDs)))
	}
	if len(f.Statuses) > 0 {
		statuses := make([]string, len(f.Statuses))
		for i, s := range f.Statuses {
			statuses[i] = string(s)
		}
		c.add("c.current_status = ANY(%s)", pq.Array(statuses))
	}
	if len(f.PodTerminalIDs) > 0 {
		c.add("c.pod_terminal_id = ANY(%s)", pq.Array(validUUIDs(f.PodTerminalIDs)))
	}
	// Last-free-day bounds are written on the sort expression so the
	// (account_id, coalesce(pickup_lfd, 'infinity'), id) index serves them;
	// an unknown day is never inside a range.
	if f.LastFreeDayFrom != nil {
		c.add("c.pickup_lfd IS NOT NULL AND coalesce(c.pickup_lfd, 'infinity'::timestamptz) >= %s", *f.LastFreeDayFrom)
	}
	if f.LastFreeDayTo != nil {
		c.add("c.pickup_lfd IS NOT NULL AND coalesce(c.pickup_lfd, 'infinity'::timestamptz) < %s", *f.LastFreeDayTo)
	}
	if f.AvailableForPickup != nil {
		// Unknown availability counts as "not available": a dashboard
		// asking for what cannot be picked up wants those too.
		c.add("coalesce(c.available_for_pickup, false) = %s", *f.AvailableForPickup)
	}
	if f.HasHolds != nil {
		c.add("c.has_holds = %s", *f.HasHolds)
	}
	if t := normalizeNumber(f.Number); t != "" {
		c.add("upper(c.number) = %s", t)
	}
	return c
}

// UpdateContainerRefNumbers sets the reference numbers of one of the
// account's containers (nil clears them: the column holds an empty list,
// never NULL) and returns it as it now is.
func (db *DB) UpdateContainerRefNumbers(ctx context.Context, accountID, id string, refs []string) (*model.Container, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, model.NotFound("container")
	}
	return getOne[model.Container](ctx, db.write(accountID), "container",
		`WITH c AS (
			UPDATE containers SET ref_numbers = $3, updated_at = now()
			WHERE id = $1 AND account_id = $2
			RETURNING *)
		 SELECT `+containerCols+` FROM c`, id, accountID, pq.StringArray(orEmptyStrings(refs)))
}
