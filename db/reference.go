package db

import (
	"context"
	"regexp"
	"strings"

	"shipgraph/model"
)

// Reference data (ports, metro areas, terminals, rail terminals, shipping
// lines) is shared by every account, so these reads take no account.

const (
	portCols = `p.id, p.code, p.name, p.city, p.state_abbr, p.country_code, p.time_zone,
	p.latitude, p.longitude, p.created_at`
	metroAreaCols = `m.id, m.code, m.name, m.state_abbr, m.country_code, m.time_zone,
	m.latitude, m.longitude, m.created_at`
	terminalCols = `t.id, t.port_id, t.name, t.nickname, t.firms_code, t.smdg_code, t.bic_facility_code,
	t.street, t.city, t.state, t.state_abbr, t.zip, t.country, t.created_at`
	railTerminalCols = `r.id, r.port_id, r.metro_area_id, r.name, r.nickname, r.firms_code, r.created_at`
	shippingLineCols = `l.id, l.scac, l.name, l.short_name, l.bill_of_lading_prefix, l.alternative_scacs,
	l.bill_of_lading_tracking_support, l.booking_number_tracking_support,
	l.container_number_tracking_support, l.created_at`
)

func (db *DB) PortsByIDs(ctx context.Context, ids []string) ([]*model.Port, error) {
	return db.ref.ports.byIDs(ctx, db.ref.ttlNow(), ids, func(r *model.Port) string { return r.ID }, func(ctx context.Context, ids []string) ([]*model.Port, error) {
		return byIDs[model.Port](ctx, db.read(""), `SELECT `+db.refCols("Port", portCols)+` FROM ports p WHERE p.id = ANY($1)`, ids)
	})
}

func (db *DB) MetroAreasByIDs(ctx context.Context, ids []string) ([]*model.MetroArea, error) {
	return db.ref.metroAreas.byIDs(ctx, db.ref.ttlNow(), ids, func(r *model.MetroArea) string { return r.ID }, func(ctx context.Context, ids []string) ([]*model.MetroArea, error) {
		return byIDs[model.MetroArea](ctx, db.read(""), `SELECT `+metroAreaCols+` FROM metro_areas m WHERE m.id = ANY($1)`, ids)
	})
}

func (db *DB) TerminalsByIDs(ctx context.Context, ids []string) ([]*model.Terminal, error) {
	return db.ref.terminals.byIDs(ctx, db.ref.ttlNow(), ids, func(r *model.Terminal) string { return r.ID }, func(ctx context.Context, ids []string) ([]*model.Terminal, error) {
		return byIDs[model.Terminal](ctx, db.read(""), `SELECT `+db.refCols("Terminal", terminalCols)+` FROM terminals t WHERE t.id = ANY($1)`, ids)
	})
}

func (db *DB) RailTerminalsByIDs(ctx context.Context, ids []string) ([]*model.RailTerminal, error) {
	return db.ref.railTerminals.byIDs(ctx, db.ref.ttlNow(), ids, func(r *model.RailTerminal) string { return r.ID }, func(ctx context.Context, ids []string) ([]*model.RailTerminal, error) {
		return byIDs[model.RailTerminal](ctx, db.read(""), `SELECT `+railTerminalCols+` FROM rail_terminals r WHERE r.id = ANY($1)`, ids)
	})
}

func (db *DB) ShippingLinesByIDs(ctx context.Context, ids []string) ([]*model.ShippingLine, error) {
	return db.ref.shippingLines.byIDs(ctx, db.ref.ttlNow(), ids, func(r *model.ShippingLine) string { return r.ID }, func(ctx context.Context, ids []string) ([]*model.ShippingLine, error) {
		return byIDs[model.ShippingLine](ctx, db.read(""), `SELECT `+shippingLineCols+` FROM shipping_lines l WHERE l.id = ANY($1)`, ids)
	})
}

// refCols is the select list of a reference type: every column while its
// rows are cached (a cached row serves any later selection), else the
// request's selection.
func (db *DB) refCols(typ, all string) string {
	if db.ref.cached() {
		return all
	}
	return db.cols(typ)
}

// FindPortByCode returns the port with a UN/LOCODE (case-insensitive). A
// string that cannot be a LOCODE is not found without a query.
func (db *DB) FindPortByCode(ctx context.Context, code string) (*model.Port, error) {
	code = strings.ToUpper(strings.TrimSpace(code))
	if !locode.MatchString(code) {
		return nil, model.NotFound("port")
	}
	return getOne[model.Port](ctx, db.read(""), "port", `SELECT `+db.cols("Port")+` FROM ports p WHERE p.code = $1`, code)
}

// FindMetroAreaByCode returns the metro area with a UN/LOCODE
// (case-insensitive), as FindPortByCode does for ports.
func (db *DB) FindMetroAreaByCode(ctx context.Context, code string) (*model.MetroArea, error) {
	code = strings.ToUpper(strings.TrimSpace(code))
	if !locode.MatchString(code) {
		return nil, model.NotFound("metro area")
	}
	return getOne[model.MetroArea](ctx, db.read(""), "metro area", `SELECT `+metroAreaCols+` FROM metro_areas m WHERE m.code = $1`, code)
}

// locode is the shape of a UN/LOCODE, as the ports.code CHECK constraint has it.
var locode = regexp.MustCompile(`^[A-Z]{2}[A-Z0-9]{3}$`)
