package db

import (
	"context"
	"strconv"
	"strings"

	"github.com/lib/pq"

	"shipgraph/model"
)

// Shipment writes: the attributes a client may edit, and
// stopping and resuming tracking at the shipping line.

// ShipmentPatch changes a shipment; only the Set fields are written.
type ShipmentPatch struct {
	RefNumbers    []string // nil stores NULL
	SetRefNumbers bool
	Tags          []string
	SetTags       bool
}

// shipmentReturning is what a write of shipments returns for the outer
// SELECT to read shipmentCols from (as the alias s).
var shipmentReturning = strings.ReplaceAll(shipmentCols, "s.", "")

// UpdateShipment writes the patch to one of the account's shipments and
// returns it as it now is.
func (db *DB) UpdateShipment(ctx context.Context, accountID, id string, p ShipmentPatch) (*model.Shipment, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, model.NotFound("shipment")
	}
	args := []any{id, accountID}
	set := []string{"updated_at = now()"}
	col := func(name string, v any) {
		args = append(args, v)
		set = append(set, name+" = $"+strconv.Itoa(len(args)))
	}
	if p.SetRefNumbers {
		var v any
		if p.RefNumbers != nil {
			v = pq.StringArray(p.RefNumbers)
		}
		col("ref_numbers", v)
	}
	if p.SetTags {
		col("tags", pq.StringArray(append([]string{}, p.Tags...)))
	}
	return writeShipment(ctx, db, accountID, strings.Join(set, ", "), args...)
}

// StopTracking stops tracking one of the account's shipments at the
// shipping line, as cancelled by the user of the key (nil for a key of no
// user). A shipment whose tracking already stopped keeps when and why
// (least keeps the earlier time, ignoring NULL: Citus refuses now() inside
// coalesce or CASE in a write). Its
// live tracking requests stop with it (a trigger, migration 00014), which
// raises tracking_request.tracking_stopped.
func (db *DB) StopTracking(ctx context.Context, accountID, id string, userID *string) (*model.Shipment, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, model.NotFound("shipment")
	}
	return writeShipment(ctx, db, accountID, `
		line_tracking_stopped_by_user_id = CASE WHEN line_tracking_stopped_at IS NULL THEN $3::uuid ELSE line_tracking_stopped_by_user_id END,
		line_tracking_stopped_reason = CASE WHEN line_tracking_stopped_at IS NULL THEN 'cancelled_by_user' ELSE line_tracking_stopped_reason END,
		line_tracking_stopped_at = least(line_tracking_stopped_at, now()),
		updated_at = now()`, id, accountID, userID)
}

// ResumeTracking clears the stop of one of the account's shipments; its
// stopped tracking requests are created again (the same trigger).
func (db *DB) ResumeTracking(ctx context.Context, accountID, id string) (*model.Shipment, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, model.NotFound("shipment")
	}
	return writeShipment(ctx, db, accountID, `line_tracking_stopped_at = NULL, line_tracking_stopped_reason = NULL,
		line_tracking_stopped_by_user_id = NULL, updated_at = now()`, id, accountID)
}

// writeShipment updates shipment $1 of account $2 with set and reads it back.
func writeShipment(ctx context.Context, db *DB, accountID, set string, args ...any) (*model.Shipment, error) {
	return getOne[model.Shipment](ctx, db.write(accountID), "shipment",
		`WITH s AS (
			UPDATE shipments SET `+set+`
			WHERE id = $1 AND account_id = $2
			RETURNING `+shipmentReturning+`)
		 SELECT `+shipmentCols+` FROM s`, args...)
}
