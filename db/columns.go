package db

import (
	"strings"
	"sync"
	"sync/atomic"

	"shipgraph/model"
)

// Reads select the columns their caller needs. A store narrowed by Select
// reads, for each type the selection names, only the columns listed there
// plus the keys every reader of that type relies on (ids, and the parent
// keys rows are grouped by); a type the selection does not name is read
// whole. A column that is not read keeps its zero value, so a selection
// must name every column its caller will look at: the GraphQL and /v2 load
// plans (graph/plan.go) build it from what a request asks for.

// picker narrows one type's select list.
type picker struct {
	all   string            // the whole select list
	order []string          // output names, in select-list order
	items map[string]string // output name → select item
	keys  map[string]bool   // always selected
	// made holds the lists already built, by listKey: a request shape
	// selects the same columns every time, so its reads reuse one string
	// instead of building it (a set, a builder) per statement. At most
	// maxMadeLists are kept; past that, lists are built per read.
	made  sync.Map
	madeN atomic.Int32
	base  int // the items of all: order[:base] (the rest are optional)
}

// maxMadeLists bounds a picker's made lists (selections are chosen by
// clients: an unbounded cache would grow with every new shape).
const maxMadeLists = 256

// optional adds select items that only a read naming them selects: the
// whole list (a read of the type not narrowed) leaves them out.
func (p *picker) optional(list string) *picker {
	for _, it := range splitSelect(list) {
		name := outputName(it)
		p.order = append(p.order, name)
		p.items[name] = it
	}
	return p
}

func newPicker(list string, keys ...string) *picker {
	p := &picker{all: list, items: map[string]string{}, keys: map[string]bool{}}
	for _, it := range splitSelect(list) {
		name := outputName(it)
		p.order = append(p.order, name)
		p.items[name] = it
	}
	p.base = len(p.order)
	for _, k := range keys {
		if _, ok := p.items[k]; !ok {
			panic("db: key " + k + " is not a column of " + list)
		}
		p.keys[k] = true
	}
	return p
}

// textForm selects the named columns through out, a PostgreSQL output
// function (timestamptz_out, textout): as a cstring, which lib/pq hands
// over as the bytes PostgreSQL sent (it decodes only the types it knows),
// so the row reader makes the field from them (scan.go) without lib/pq's
// value per column: a string allocated for every text column and every
// timestamp parsed from a string by lib/pq's general parser and boxed.
// PostgreSQL does about the same work (the output function is what
// sending the column as text calls), plus the call and a copy of the
// cstring. Uuids are selected as they are: results come in text form
// (connector), where lib/pq hands a uuid over as PostgreSQL's bytes too,
// so uuid_out(col) only cost PostgreSQL (a call, a copy, and a strlen at
// every attribute a sort fetched past the cstring: docs/scale.md, stop 42).
// A cstring has no ordering or equality, so keys that statements order,
// group or join by (id) are left as they are; only reads through the row
// reader may use these lists (not sqlx, which cannot make a time from
// bytes).
func (p *picker) textForm(out string, names ...string) *picker {
	for _, name := range names {
		it, ok := p.items[name]
		if !ok {
			panic("db: " + name + " is not a column of " + p.all)
		}
		expr := it
		if j := strings.LastIndex(it, " AS "); j >= 0 {
			expr = strings.TrimSpace(it[:j])
		}
		p.items[name] = out + "(" + expr + ") AS " + name
	}
	items := make([]string, p.base)
	for i, name := range p.order[:p.base] {
		items[i] = p.items[name]
	}
	p.all = strings.Join(items, ", ")
	return p
}

// list returns the select list for the wanted columns (output names),
// the account placeholder (accountParam) of its items replaced by param
// ("$1", "$2"; "" for a type whose items name none); nil wants every
// column. Unknown names are ignored.
func (p *picker) list(want []string, param string) string {
	if want == nil {
		return p.all
	}
	key := listKey(want, param)
	if s, ok := p.made.Load(key); ok {
		return s.(string)
	}
	s := p.build(want, param)
	if p.madeN.Load() < maxMadeLists && p.madeN.Add(1) <= maxMadeLists {
		p.made.Store(key, s)
	}
	return s
}

// listKey names a selection of columns under one account parameter.
func listKey(want []string, param string) string {
	n := len(param)
	for _, w := range want {
		n += 1 + len(w)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(param)
	for _, w := range want {
		b.WriteByte(0)
		b.WriteString(w)
	}
	return b.String()
}

// build makes list's select list.
func (p *picker) build(want []string, param string) string {
	set := make(map[string]bool, len(want))
	for _, w := range want {
		set[w] = true
	}
	var b strings.Builder
	for _, name := range p.order {
		if p.keys[name] || set[name] {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p.items[name])
		}
	}
	if param == "" {
		return b.String()
	}
	return strings.ReplaceAll(b.String(), accountParam, param)
}

// pickers are the types whose reads can be narrowed: the ones a dashboard
// or a /v2 include list reads many rows of. A custom field value's entity
// and definition columns are read when a request shows those relationships
// (their key columns) or, in /v2, its links (rest/params.go, linkColumns):
// a dashboard that shows apiSlug and value reads four uuids less per value.
//
// The many-row types select their timestamps and text in
// text form (textForm); TestTextFormColumns holds each named column to
// the type its output function takes.
var pickers = map[string]*picker{
	"Shipment": newPicker(shipmentCols, "id").optional(shipmentContainerIDsCol).
		textForm("timestamptz_out", shipmentTimestamps...).
		textForm("textout", shipmentTexts...),
	"Container": newPicker(containerCols, "id", "shipment_id").optional(containerJourneyCols).
		textForm("timestamptz_out", containerTimestamps...).
		textForm("textout", containerTexts...),
	"Document": newPicker(documentCols, "id").
		textForm("timestamptz_out", "created_at", "updated_at").
		textForm("textout", documentTexts...),
	"Terminal":    newPicker(terminalCols, "id"),
	"Port":        newPicker(portCols, "id"),
	"CustomField": newPicker(customFieldCols, "id", "entity_id", "api_slug"),
}

// Select returns the store narrowed to sel: its batch and page reads of
// the types sel names select only those columns (and their keys). It
// shares the connection pool with db.
func (db *DB) Select(sel model.Selection) *DB {
	return &DB{db: db.db, q: db.q, sel: sel, url: db.url, pooled: db.pooled, ref: db.ref, r: db.r, w: db.w, noRollups: db.noRollups,
		plain: db.plain}
}

// cols is the select list of typ under db's selection.
func (db *DB) cols(typ string) string { return db.colsAt(typ, "") }

// colsAt is cols with the account placeholder of the selected items as
// param. The whole list (typ not in the selection) has no optional items,
// so no placeholder.
func (db *DB) colsAt(typ, param string) string {
	p := pickers[typ]
	want, ok := db.sel[typ]
	if !ok {
		return p.all
	}
	return p.list(want, param)
}

// splitSelect splits a select list at its top-level commas.
func splitSelect(list string) []string {
	var items []string
	depth, start := 0, 0
	for i, c := range list {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				items = append(items, strings.TrimSpace(list[start:i]))
				start = i + 1
			}
		}
	}
	return append(items, strings.TrimSpace(list[start:]))
}

// outputName is the name a select item is read as: "… AS name" or the
// column of "alias.column".
func outputName(item string) string {
	if j := strings.LastIndex(item, " AS "); j >= 0 {
		return strings.TrimSpace(item[j+4:])
	}
	return item[strings.LastIndex(item, ".")+1:]
}

// The columns the pickers select in text form (textForm), by the type of
// their output function.
var (
	containerTimestamps = []string{"pickup_appointment_at", "pod_arrived_at", "pod_discharged_at",
		"pod_full_out_at", "terminal_checked_at", "final_destination_full_out_at", "empty_terminated_at",
		"pod_last_tracking_request_at", "shipment_last_tracking_request_at", "pod_rail_loaded_at",
		"pod_rail_departed_at", "ind_eta_at", "ind_ata_at", "ind_rail_unloaded_at", "ind_facility_lfd_on",
		"pickup_lfd_terminal", "pickup_lfd_rail", "pickup_lfd_line", "pickup_lfd", "created_at", "updated_at"}
	containerTexts = []string{"number", "equipment_type", "equipment_height", "seal_number",
		"pod_full_out_chassis_number", "location_at_pod_terminal", "pod_timezone", "final_destination_timezone",
		"empty_terminated_timezone", "pod_rail_carrier_scac", "ind_rail_carrier_scac", "current_status"}

	shipmentTimestamps = []string{"pol_etd_at", "pol_atd_at", "pod_eta_at", "pod_original_eta_at", "pod_ata_at",
		"destination_eta_at", "destination_ata_at", "line_tracking_last_attempted_at",
		"line_tracking_last_succeeded_at", "line_tracking_stopped_at", "created_at", "updated_at"}
	shipmentTexts = []string{"bill_of_lading_number", "normalized_number", "shipping_line_scac",
		"shipping_line_name", "shipping_line_short_name", "port_of_lading_locode", "port_of_lading_name",
		"port_of_discharge_locode", "port_of_discharge_name", "destination_locode", "destination_name",
		"customer_name", "pod_vessel_name", "pod_vessel_imo", "pod_voyage_number", "pol_timezone", "pod_timezone",
		"destination_timezone", "line_tracking_stopped_reason"}

	documentTexts = []string{"name", "document_type", "document_type_manual", "classification_notes", "source",
		"file_name", "file_content_type"}
)
